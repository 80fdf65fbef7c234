//! The [`Clock`] port.

use futures::future::BoxFuture;

use crate::Timestamp;

/// The current time, and waits measured on it.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;

    /// A future that is ready once `duration` has passed. The domain uses it only to bound
    /// a wait for something else (it races the two), never to schedule work: a clock that
    /// does not run on its own (a test's) may end the wait at once.
    fn sleep(&self, duration: std::time::Duration) -> BoxFuture<'static, ()>;
}
