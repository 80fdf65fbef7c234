//! Storage adapter: the domain's storage ports on diesel 2 with r2d2 pools, on embedded SQLite
//! and on PostgreSQL, with the ledger, idempotency and the callback outbox.
//!
//! [`Database`] is the one public entry point. It implements
//! [`OperationStore`](domain::ports::OperationStore),
//! [`MerchantDirectory`](domain::ports::MerchantDirectory),
//! [`RouteTable`](domain::ports::RouteTable) and
//! [`CallbackOutbox`](domain::ports::CallbackOutbox), and has the operator functions the CLI
//! needs (merchants, routes, `ledger verify`). Diesel is synchronous: every unit of work runs on
//! a blocking thread (`spawn_blocking`), in one transaction, with one pooled connection.
//!
//! Both backends share one query code path through diesel's `MultiConnection`; the few
//! statements that differ (SQLite's `BEGIN IMMEDIATE`, PostgreSQL's `FOR UPDATE SKIP LOCKED`,
//! reading a new row's id) are written per backend.

mod admin;
mod cache;
mod conn;
mod database;
mod directory;
mod migrate;
mod outbox;
mod rows;
mod schema;
mod store;
mod target;
mod work;

pub use admin::{AdminError, NewMerchant, NewRoute};
pub use database::{Backend, Database, DbOptions};
