//! End-to-end tests of the signed JSON API: the real server on `127.0.0.1:0`, a fresh database
//! per test (SQLite always, PostgreSQL too when `GATEWAY_TEST_DATABASE_URL` is set) and the
//! sandbox provider, called like a merchant would.

mod auth;
mod bodies;
mod edges;
mod fields;
mod helpers;
mod hostile;
mod idempotency;
mod methods;
mod openapi;
mod refunds;
mod requisites;
mod rotation;
mod steps;
mod transactions;
