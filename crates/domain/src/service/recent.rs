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
//!
//! A creation's answer is saved without waiting (`save_attempt_soon`); a notification that
//! repeats it is answered only once that save was committed, and takes the full path if it
//! was not, so a `200` always stands on a committed write.
//!
//! An acquirer often sends its first notification as it answers the creation, so the
//! notification can arrive while the answer is still on its way back. The creation call is
//! therefore registered here while it is in flight ([`Recent::sending`]), and a notification
//! that comes meanwhile waits for its answer to be applied, for at most
//! [`IN_FLIGHT_WAIT`], before it is compared: most often it then repeats it. The wait is
//! bounded because an acquirer may hold its answer until its notification is acknowledged;
//! past the bound, the notification takes the full path as before.

use std::collections::HashMap;
use std::mem;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::channel::oneshot;
use futures::future::{FutureExt, Shared};

use crate::acquirer::PaymentStatus;
use crate::ports::SaveCommitted;
use crate::OperationId;

/// How many operations one generation holds. Two generations are kept, so between this many
/// and twice as many of the latest are remembered: a notification comes milliseconds after
/// the answer it repeats, and an operation forgotten only costs one read.
const PER_GENERATION: usize = 4096;

/// How long a notification waits for the answer of a creation call in flight for its
/// operation. Answers come back in milliseconds; an acquirer that holds its answer until the
/// notification is acknowledged delays each of its payments by this much, no more.
pub(super) const IN_FLIGHT_WAIT: Duration = Duration::from_millis(50);

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

/// An answer applied, and the save of it if it was queued rather than waited for.
struct Applied {
    answer: Answer,
    queued: Option<SaveCommitted>,
}

/// Whether a notification repeats what was applied last.
pub(super) enum Repeat {
    No,
    /// Yes, and it is stored.
    Stored,
    /// Yes, once this save is committed (`true`); if it is not, it is no repeat.
    Queued(SaveCommitted),
}

#[derive(Default)]
struct Generations {
    current: HashMap<OperationId, Applied>,
    previous: HashMap<OperationId, Applied>,
    /// The operations whose creation call is in flight, each with a future that is ready
    /// once its answer was applied (or given up on).
    sending: HashMap<OperationId, Answered>,
}

/// Ready once a creation call's answer was applied: its [`Sending`] was dropped.
pub(super) type Answered = Shared<oneshot::Receiver<()>>;

/// A creation call in flight for an operation, from just before the call until its answer
/// was applied to the operation and remembered here: dropping it ends the in-flight time
/// and wakes every notification waiting for it.
pub(super) struct Sending {
    recent: Recent,
    operation: OperationId,
    answered: Answered,
    /// Never sent on: dropping it is the signal.
    _done: oneshot::Sender<()>,
}

impl Drop for Sending {
    fn drop(&mut self) {
        let mut generations = self.recent.lock();
        if generations
            .sending
            .get(&self.operation)
            .is_some_and(|answered| answered.ptr_eq(&self.answered))
        {
            generations.sending.remove(&self.operation);
        }
    }
}

impl Recent {
    fn lock(&self) -> MutexGuard<'_, Generations> {
        // A panic while holding the lock leaves whole maps behind: still usable.
        self.generations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Remembers `answer` as the latest applied to `operation`, stored or, with `queued`,
    /// queued to be (`None`, a final status or no answer at all: forgets it).
    pub(super) fn applied(
        &self,
        operation: OperationId,
        answer: Option<Answer>,
        queued: Option<SaveCommitted>,
    ) {
        let mut generations = self.lock();
        generations.previous.remove(&operation);
        let Some(answer) = answer else {
            generations.current.remove(&operation);
            return;
        };
        let mut dropped = None;
        if generations.current.len() >= PER_GENERATION
            && !generations.current.contains_key(&operation)
        {
            let full = mem::take(&mut generations.current);
            dropped = Some(mem::replace(&mut generations.previous, full));
        }
        generations
            .current
            .insert(operation, Applied { answer, queued });
        drop(generations);
        // The oldest generation is freed after the lock is let go.
        drop(dropped);
    }

    /// Forgets what was applied to `operation`: what it heard next takes the full path.
    pub(super) fn forget(&self, operation: OperationId) {
        self.applied(operation, None, None);
    }

    /// Marks a creation call for `operation` as in flight until the returned guard is
    /// dropped, which the caller does once the call's answer was applied.
    pub(super) fn sending(&self, operation: OperationId) -> Sending {
        let (done, answered) = oneshot::channel();
        let answered = answered.shared();
        self.lock().sending.insert(operation, answered.clone());
        Sending {
            recent: self.clone(),
            operation,
            answered,
            _done: done,
        }
    }

    /// If a creation call for `operation` is in flight, a future that is ready once its
    /// answer was applied.
    pub(super) fn in_flight(&self, operation: OperationId) -> Option<Answered> {
        self.lock().sending.get(&operation).cloned()
    }

    /// Whether `answer` is exactly the latest one applied to `operation`, and if so whether
    /// that is stored yet.
    pub(super) fn repeats(&self, operation: OperationId, answer: &Answer) -> Repeat {
        let generations = self.lock();
        let applied = generations
            .current
            .get(&operation)
            .or_else(|| generations.previous.get(&operation));
        match applied {
            Some(applied) if applied.answer == *answer => match &applied.queued {
                None => Repeat::Stored,
                Some(queued) => Repeat::Queued(queued.clone()),
            },
            _ => Repeat::No,
        }
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

    /// `applied` with an answer already stored.
    fn stored(recent: &Recent, n: u128, status: PaymentStatus) {
        recent.applied(id(n), Some(answer(status)), None);
    }

    fn repeats(recent: &Recent, n: u128, answer: &Answer) -> bool {
        matches!(recent.repeats(id(n), answer), Repeat::Stored)
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
        stored(&recent, 1, PaymentStatus::ActionRequired);

        assert!(repeats(&recent, 1, &answer(PaymentStatus::ActionRequired)));
        assert!(!repeats(&recent, 1, &answer(PaymentStatus::Pending)));
        assert!(!repeats(&recent, 2, &answer(PaymentStatus::ActionRequired)));
        let other = |provider: &str, acquirer_id: &str, code: Option<&str>| {
            Answer::of(provider, acquirer_id, PaymentStatus::ActionRequired, code).unwrap()
        };
        assert!(!repeats(&recent, 1, &other("other", "acq_1", None)));
        assert!(!repeats(&recent, 1, &other("bank", "acq_2", None)));
        assert!(!repeats(&recent, 1, &other("bank", "acq_1", Some("x"))));
    }

    #[test]
    fn the_latest_answer_wins_and_a_final_status_forgets_the_operation() {
        let recent = Recent::default();
        stored(&recent, 1, PaymentStatus::ActionRequired);
        stored(&recent, 1, PaymentStatus::Pending);
        assert!(!repeats(&recent, 1, &answer(PaymentStatus::ActionRequired)));
        assert!(repeats(&recent, 1, &answer(PaymentStatus::Pending)));

        recent.forget(id(1));
        assert!(!repeats(&recent, 1, &answer(PaymentStatus::Pending)));
    }

    #[test]
    fn a_queued_answer_is_a_repeat_only_through_its_save() {
        use futures::FutureExt;

        let recent = Recent::default();
        let save = futures::future::ready(false).boxed().shared();
        recent.applied(
            id(1),
            Some(answer(PaymentStatus::Pending)),
            Some(save.clone()),
        );

        let Repeat::Queued(committed) = recent.repeats(id(1), &answer(PaymentStatus::Pending))
        else {
            panic!("a queued answer is a repeat once its save is committed");
        };
        assert!(!futures::executor::block_on(committed), "this one was not");
        assert!(matches!(
            recent.repeats(id(1), &answer(PaymentStatus::ActionRequired)),
            Repeat::No
        ));
    }

    #[test]
    fn it_keeps_between_one_and_two_generations_of_the_latest_operations() {
        let recent = Recent::default();
        let total = 2 * PER_GENERATION as u128 + 1;
        for n in 0..total {
            stored(&recent, n, PaymentStatus::Pending);
        }
        let kept = (0..total)
            .filter(|&n| repeats(&recent, n, &answer(PaymentStatus::Pending)))
            .count();
        assert_eq!(
            kept,
            PER_GENERATION + 1,
            "the newest full generation and one"
        );
        assert!(repeats(&recent, total - 1, &answer(PaymentStatus::Pending)));
        assert!(!repeats(&recent, 0, &answer(PaymentStatus::Pending)));

        // An operation answered again is taken out of the older generation: only its latest
        // answer counts.
        let recent = Recent::default();
        stored(&recent, 0, PaymentStatus::Pending);
        for n in 1..PER_GENERATION as u128 + 1 {
            stored(&recent, n, PaymentStatus::Pending);
        }
        stored(&recent, 0, PaymentStatus::ActionRequired);
        assert!(repeats(&recent, 0, &answer(PaymentStatus::ActionRequired)));
        assert!(!repeats(&recent, 0, &answer(PaymentStatus::Pending)));
    }

    #[test]
    fn a_call_is_in_flight_until_its_guard_is_dropped_which_wakes_its_waiters() {
        use futures::FutureExt;

        let recent = Recent::default();
        assert!(recent.in_flight(id(1)).is_none(), "nothing sent yet");
        let sending = recent.sending(id(1));
        let answered = recent.in_flight(id(1)).expect("in flight");
        assert!(recent.in_flight(id(2)).is_none(), "another operation");
        assert!(
            answered.clone().now_or_never().is_none(),
            "not answered yet"
        );

        drop(sending);

        assert!(answered.now_or_never().is_some(), "woken by the drop");
        assert!(recent.in_flight(id(1)).is_none(), "no longer in flight");
    }

    #[test]
    fn an_older_guard_dropped_late_leaves_a_newer_call_in_flight() {
        use futures::FutureExt;

        let recent = Recent::default();
        let older = recent.sending(id(1));
        let newer = recent.sending(id(1));

        drop(older);

        let answered = recent
            .in_flight(id(1))
            .expect("the newer call is in flight");
        assert!(answered.clone().now_or_never().is_none());
        drop(newer);
        assert!(answered.now_or_never().is_some());
        assert!(recent.in_flight(id(1)).is_none());
    }
}
