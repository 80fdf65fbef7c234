//! Test support shared by the gateway's crates (a dev-dependency only; nothing ships with it).
//!
//! * [`FreshDatabase`]: a new SQLite file or a new PostgreSQL database per test, dropped
//!   afterwards, with raw SQL for what the public API does not show.
//! * [`CallbackReceiver`] (in [`receiver`]): a merchant's callback endpoint, a real HTTP
//!   server on 127.0.0.1:0 that records every request ([`Captured`]) and answers as the test
//!   says, path by path: a status, 500 to the next N requests or to the first callback of
//!   each operation, a delay, a redirect, or no answer while held; with per-operation views
//!   and [`wait_until`] to poll for a condition.
//! * [`serve_every_request`]: a real HTTP server on 127.0.0.1:0 whose one handler answers
//!   every request, for a test's fake peers.
//! * [`CapturedLogs`]: what a test's thread logged, to check that no secret is ever in it.
//! * [`signing`]: request signatures of both versions, as a merchant makes them.
//! * [`fixtures`] (with the feature `fixtures`): operations, a merchant, routes, an acquirer
//!   and a gateway on the domain's mockall mocks, and [`fixtures::send`], for the unit tests
//!   of the web adapters (`adapters-http`, `adapters-console`).
//! * [`postgres_admin_url`] and [`report_skipped`]: a test that cannot run says so in the
//!   output of a plain `cargo test` (past libtest's capture of passing tests), and fails
//!   instead when the run requires it (`GATEWAY_REQUIRE_POSTGRES=1`, as CI sets).

pub mod browser;
mod database;
#[cfg(feature = "fixtures")]
pub mod fixtures;
mod logs;
pub mod receiver;
mod server;
pub mod signing;
mod skip;

pub use database::{Backend, FreshDatabase};
pub use logs::CapturedLogs;
pub use receiver::{wait_until, CallbackReceiver, Captured};
pub use server::serve_every_request;
pub use skip::{
    ha_postgres_url, postgres_admin_url, report_skipped, required, tls_postgres_url, HA_PG_VAR,
    PG_VAR, REQUIRE_POSTGRES_VAR, TLS_PG_VAR,
};
