//! Integration tests of the callback adapter against a real local HTTP receiver.

mod bench;
mod concurrency;
mod delivery;
mod guard;
mod held;
mod helpers;
mod retries;
mod shutdown;
