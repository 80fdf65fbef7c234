//! Tests of the real `acquirer-sim` binary over TCP.

mod disputes;
mod faults;
mod helpers;
mod notifications;
mod payins;
mod payments;
mod refunds;
mod stats;
