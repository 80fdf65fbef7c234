//! Test support shared by the gateway's crates (a dev-dependency only; nothing ships with it).
//!
//! * [`FreshDatabase`]: a new SQLite file or a new PostgreSQL database per test, dropped
//!   afterwards, with raw SQL for what the public API does not show.
//! * [`postgres_admin_url`] and [`report_skipped`]: a test that cannot run says so in the
//!   output of a plain `cargo test` (past libtest's capture of passing tests), and fails
//!   instead when the run requires it (`GATEWAY_REQUIRE_POSTGRES=1`, as CI sets).

mod database;
mod skip;

pub use database::{Backend, FreshDatabase};
pub use skip::{postgres_admin_url, report_skipped, required, PG_VAR, REQUIRE_POSTGRES_VAR};
