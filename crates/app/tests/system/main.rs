//! System tests: the real `gateway` binary as child processes (and `Application::build` in
//! process where a test needs the use cases directly), each test on a fresh database.
//!
//! SQLite tests always run; PostgreSQL tests run when `GATEWAY_TEST_DATABASE_URL` names a
//! server (a database is created per test and dropped afterwards) and fail if it cannot be
//! reached.

mod acquirer;
mod acquirer_faults;
mod callback_log;
mod callbacks;
mod card_data;
mod chargeback_faults;
mod chargebacks;
mod circuits;
mod cli;
mod console;
mod console_browser;
mod console_cli;
mod console_fees;
mod currencies;
mod currency_payouts;
mod db_failover;
mod demo;
mod discrepancies;
mod disputes;
mod failover;
mod fees;
mod held_callbacks;
mod helpers;
mod live;
mod multiprocess;
mod operation_show;
mod page_reads;
mod pages;
mod providers;
mod refunds;
mod restart;
mod routes;
mod routing;
mod sandbox_off;
mod secrets;
mod signatures;
mod standard_webhooks;
mod startup;
mod statements;
mod throughput;
