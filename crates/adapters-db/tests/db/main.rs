//! Storage integration tests: each runs on a temp SQLite file and, when
//! `GATEWAY_TEST_DATABASE_URL` is set, on a fresh PostgreSQL database.

// Amounts are minor units written as roubles_kopecks: 100_00 is 100.00 RUB.
#![allow(clippy::inconsistent_digit_grouping)]

mod attempts;
mod callback_log;
mod card_scrub;
mod catalog;
mod chargebacks;
mod concurrency;
mod console;
mod discrepancies;
mod disputes;
mod doubles;
mod encryption;
mod fee_income;
mod fees;
mod fingerprints;
mod fixtures;
mod held_callbacks;
mod helpers;
mod ledger;
mod lost_server;
mod migrations;
mod operations;
mod outbox;
mod outbox_grouped;
mod page_reads;
mod processes;
mod providers;
mod refund_callbacks;
mod refund_concurrency;
mod refund_fixtures;
mod refund_migration;
mod refunds;
mod replica;
mod rotation;
mod secret_fixtures;
mod secrets_migration;
mod story;
mod tariffs;
mod throughput;
mod tls;
mod transactions;
