//! Use-case tests against mockall mocks of the ports.
//!
//! Each file covers one group of use cases; `fixtures` holds the merchant, routes, clock,
//! ids and the helpers that capture what the service hands to the store.

#![allow(clippy::unwrap_used)]

mod acquirer;
mod callbacks;
mod chargebacks;
mod complete;
mod confirm;
mod create_deposit;
mod create_withdrawal;
mod disputes;
mod fees;
mod fixtures;
mod idempotency;
mod input;
mod pay_pages;
mod read;
mod refunds;
mod refusals;
mod routing;
mod sweeps;
