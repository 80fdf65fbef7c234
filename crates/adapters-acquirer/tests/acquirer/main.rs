//! Integration tests of the acquirer connector over real sockets on 127.0.0.1: a fake
//! acquirer that records requests and answers as told, and raw servers that misbehave.

mod create;
mod faults;
mod helpers;
mod lookups;
mod metrics;
