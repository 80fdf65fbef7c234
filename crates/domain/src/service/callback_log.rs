//! A merchant's callbacks: read a page of them, send one again, or replay those that failed
//! (or were held) since a time.

use std::sync::Arc;

use crate::callback_log::{CallbackOwner, CallbackPage, CallbackQuery, Requeue};
use crate::ports::{CallbackLog, Clock, StoreError};

/// Why a callback could not be sent again.
#[derive(Debug, thiserror::Error)]
pub enum RequeueError {
    /// No callback of this merchant and direction under that id.
    #[error("no such callback")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What merchants do with their callbacks.
#[derive(Clone)]
pub struct Callbacks {
    pub(super) log: Arc<dyn CallbackLog>,
    pub(super) clock: Arc<dyn Clock>,
}

impl Callbacks {
    /// One page of the owner's callbacks, newest first.
    pub async fn page(&self, query: &CallbackQuery) -> Result<CallbackPage, StoreError> {
        let found = self.log.callbacks(query).await?;
        Ok(CallbackPage::of(query, found))
    }

    /// Sends the callbacks `which` names again on a fresh schedule, due now; how many.
    pub async fn requeue(
        &self,
        owner: &CallbackOwner,
        which: &Requeue,
    ) -> Result<u64, RequeueError> {
        let now = self.clock.now();
        self.log
            .requeue(owner, which, now)
            .await?
            .ok_or(RequeueError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::callback_log::ReplayState;
    use crate::ports::MockCallbackLog;
    use crate::testkit::{TestClock, T0};
    use crate::{Direction, MerchantId};
    use futures::executor::block_on;

    fn owner() -> CallbackOwner {
        CallbackOwner {
            merchant_id: MerchantId::parse("m1").expect("an id"),
            direction: Direction::Deposit,
        }
    }

    fn callbacks(log: MockCallbackLog) -> Callbacks {
        Callbacks {
            log: Arc::new(log),
            clock: Arc::new(TestClock::at(T0)),
        }
    }

    #[test]
    fn a_retry_of_a_callback_the_merchant_does_not_have_is_not_found() {
        let mut log = MockCallbackLog::new();
        log.expect_requeue()
            .withf(|o, which, now| o == &owner() && matches!(which, Requeue::One(_)) && *now == T0)
            .times(1)
            .returning(|_, _, _| Ok(None));

        let answer = block_on(callbacks(log).requeue(&owner(), &Requeue::One(uuid::Uuid::nil())));

        assert!(matches!(answer, Err(RequeueError::NotFound)));
    }

    #[test]
    fn a_replay_requeues_at_the_clock_now_and_says_how_many() {
        let mut log = MockCallbackLog::new();
        let which = Requeue::Since {
            since: T0,
            state: ReplayState::Failed,
        };
        let expected = which.clone();
        log.expect_requeue()
            .withf(move |o, w, now| o == &owner() && w == &expected && *now == T0)
            .times(1)
            .returning(|_, _, _| Ok(Some(3)));

        let requeued = block_on(callbacks(log).requeue(&owner(), &which)).expect("ok");

        assert_eq!(requeued, 3);
    }
}
