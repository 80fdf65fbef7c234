//! What this process last applied of each acquirer operation's payment while it stays
//! processing, so that a notification that only repeats it is acknowledged without reading or
//! writing anything.
//!
//! An acquirer notifies every status, the first one included, and usually right after it
//! answered the creation with that same status: the gateway would read the operation and
//! its attempts, and write the attempt again, to learn nothing new. Only statuses that leave
//! the operation processing (`pending`, `action_required`) are remembered, and a repeat is
//! the same provider, the same acquirer id, the same status and the same failure code, so a
//! notification that could change anything (another status, a final one, another id) still
//! takes the full path. The memory is this process's: a notification that reaches another
//! instance reads the database as before.

use std::collections::HashMap;
use std::mem;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::acquirer::PaymentStatus;
use crate::OperationId;

/// How many operations one generation holds. Two generations are kept, so between this many
/// and twice as many of the latest are remembered: a notification comes milliseconds after
/// the answer it repeats, and an operation forgotten only costs one read.
const PER_GENERATION: usize = 4096;

/// A payment's status as applied to an operation's current attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Answer {
    provider: String,
    acquirer_id: String,
    status: PaymentStatus,
    failure_code: Option<String>,
}

impl Answer {
    /// `status` (with `failure_code`) as heard from `provider` for the payment it knows as
    /// `acquirer_id`. `None` for a final status: those are never skipped.
    pub(super) fn of(
        provider: &str,
        acquirer_id: &str,
        status: PaymentStatus,
        failure_code: Option<&str>,
    ) -> Option<Self> {
        (!status.is_final()).then(|| Answer {
            provider: provider.to_string(),
            acquirer_id: acquirer_id.to_string(),
            status,
            failure_code: failure_code.map(str::to_string),
        })
    }
}

/// The latest non-final answer applied to each operation, bounded to two generations; its
/// clones share one memory.
#[derive(Clone, Default)]
pub(super) struct Recent {
    generations: Arc<Mutex<Generations>>,
}

#[derive(Default)]
struct Generations {
    current: HashMap<OperationId, Answer>,
    previous: HashMap<OperationId, Answer>,
}

impl Recent {
    fn lock(&self) -> MutexGuard<'_, Generations> {
        // A panic while holding the lock leaves whole maps behind: still usable.
        self.generations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Remembers `answer` as the latest applied to `operation` (`None`, a final status: forgets
    /// it).
    pub(super) fn applied(&self, operation: OperationId, answer: Option<Answer>) {
        let mut generations = self.lock();
        generations.previous.remove(&operation);
        let Some(answer) = answer else {
            generations.current.remove(&operation);
            return;
        };
        if generations.current.len() >= PER_GENERATION
            && !generations.current.contains_key(&operation)
        {
            generations.previous = mem::take(&mut generations.current);
        }
        generations.current.insert(operation, answer);
    }

    /// Whether `answer` is exactly the latest one applied to `operation`.
    pub(super) fn repeats(&self, operation: OperationId, answer: &Answer) -> bool {
        let generations = self.lock();
        generations
            .current
            .get(&operation)
            .or_else(|| generations.previous.get(&operation))
            == Some(answer)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn id(n: u128) -> OperationId {
        OperationId::from_uuid(uuid::Uuid::from_u128(n))
    }

    fn answer(status: PaymentStatus) -> Answer {
        Answer::of("bank", "acq_1", status, None).unwrap()
    }

    #[test]
    fn only_statuses_that_leave_the_operation_processing_are_answers_to_remember() {
        for status in [PaymentStatus::Pending, PaymentStatus::ActionRequired] {
            assert!(Answer::of("bank", "acq_1", status, None).is_some());
        }
        for status in [
            PaymentStatus::Succeeded,
            PaymentStatus::Failed,
            PaymentStatus::Canceled,
        ] {
            assert_eq!(Answer::of("bank", "acq_1", status, None), None);
        }
    }

    #[test]
    fn a_repeat_is_the_same_provider_id_status_and_failure_code() {
        let recent = Recent::default();
        recent.applied(id(1), Some(answer(PaymentStatus::ActionRequired)));

        assert!(recent.repeats(id(1), &answer(PaymentStatus::ActionRequired)));
        assert!(!recent.repeats(id(1), &answer(PaymentStatus::Pending)));
        assert!(!recent.repeats(id(2), &answer(PaymentStatus::ActionRequired)));
        let other = |provider: &str, acquirer_id: &str, code: Option<&str>| {
            Answer::of(provider, acquirer_id, PaymentStatus::ActionRequired, code).unwrap()
        };
        assert!(!recent.repeats(id(1), &other("other", "acq_1", None)));
        assert!(!recent.repeats(id(1), &other("bank", "acq_2", None)));
        assert!(!recent.repeats(id(1), &other("bank", "acq_1", Some("x"))));
    }

    #[test]
    fn the_latest_answer_wins_and_a_final_status_forgets_the_operation() {
        let recent = Recent::default();
        recent.applied(id(1), Some(answer(PaymentStatus::ActionRequired)));
        recent.applied(id(1), Some(answer(PaymentStatus::Pending)));
        assert!(!recent.repeats(id(1), &answer(PaymentStatus::ActionRequired)));
        assert!(recent.repeats(id(1), &answer(PaymentStatus::Pending)));

        recent.applied(id(1), None);
        assert!(!recent.repeats(id(1), &answer(PaymentStatus::Pending)));
    }

    #[test]
    fn it_keeps_between_one_and_two_generations_of_the_latest_operations() {
        let recent = Recent::default();
        let total = 2 * PER_GENERATION as u128 + 1;
        for n in 0..total {
            recent.applied(id(n), Some(answer(PaymentStatus::Pending)));
        }
        let kept = (0..total)
            .filter(|&n| recent.repeats(id(n), &answer(PaymentStatus::Pending)))
            .count();
        assert_eq!(
            kept,
            PER_GENERATION + 1,
            "the newest full generation and one"
        );
        assert!(recent.repeats(id(total - 1), &answer(PaymentStatus::Pending)));
        assert!(!recent.repeats(id(0), &answer(PaymentStatus::Pending)));

        // An operation answered again moves to the newest generation, once.
        let recent = Recent::default();
        recent.applied(id(0), Some(answer(PaymentStatus::Pending)));
        for n in 1..PER_GENERATION as u128 + 1 {
            recent.applied(id(n), Some(answer(PaymentStatus::Pending)));
        }
        recent.applied(id(0), Some(answer(PaymentStatus::ActionRequired)));
        assert!(recent.repeats(id(0), &answer(PaymentStatus::ActionRequired)));
        assert!(!recent.repeats(id(0), &answer(PaymentStatus::Pending)));
    }
}
