//! The reads the payment pages make of an acquirer: at most one per operation per
//! [`READ_GAP`], whatever the number of requests and of gateway processes on the database.
//!
//! `/pay/{id}` and `/pay/{id}/return` read a processing deposit from its acquirer so that the
//! payer sees the bank's result at once. A payer who reloads, a browser that prefetches or a
//! script hammering the URL must not become as many calls to the bank, so every page read goes
//! through two gates:
//!
//! * **In this process** ([`PageReads`]), the first request for an operation leads: it alone
//!   may read. A request that comes while that read is in flight, or within [`READ_GAP`] of
//!   its start, follows: it waits for the read to finish (for at most [`FOLLOW_WAIT`]) and
//!   then uses what is stored. So a burst of requests in one process costs one claim.
//! * **Across processes**, the leader claims the read in the database first
//!   ([`OperationStore::claim_page_read`](crate::ports::OperationStore::claim_page_read)): a
//!   conditional write that one claimer per [`READ_GAP`] wins. A leader that loses does not
//!   read; the winner's result reaches it through the database, where the page looks.
//!
//! The memory here holds an operation only while its read is in flight or recent: slots are
//! swept once the map has doubled since the last sweep, so it stays about as large as the
//! number of operations whose pages were asked for in the last [`READ_GAP`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::channel::oneshot;
use futures::future::{FutureExt, Shared};

use crate::{OperationId, Timestamp};

/// The shortest time between two page reads of one operation's payment.
pub(super) const READ_GAP: Duration = Duration::from_secs(2);

/// How long a request that follows waits for the read it follows (the return page then looks
/// at the stored operation for a while longer).
pub(super) const FOLLOW_WAIT: Duration = Duration::from_secs(5);

/// Fewest slots before a sweep is considered.
const FIRST_SWEEP: usize = 256;

/// Ready once a leader's read is over (its [`Leading`] was dropped).
pub(super) type ReadOver = Shared<oneshot::Receiver<()>>;

/// This process's page reads, one slot per operation read lately; clones share them.
#[derive(Clone, Default)]
pub(super) struct PageReads {
    slots: Arc<Mutex<Slots>>,
}

#[derive(Default)]
struct Slots {
    by_operation: HashMap<OperationId, Slot>,
    /// Sweep when the map reaches this many slots.
    sweep_at: usize,
}

/// The latest page read of an operation in this process.
struct Slot {
    started: Timestamp,
    /// Whether its leader is still at it.
    reading: bool,
    over: ReadOver,
}

impl Slot {
    /// Whether a request at `now` must follow this read rather than lead a new one.
    fn holds(&self, now: Timestamp) -> bool {
        self.reading || now.millis() - self.started.millis() < gap_millis()
    }
}

fn gap_millis() -> i64 {
    i64::try_from(READ_GAP.as_millis()).unwrap_or(i64::MAX)
}

/// Whether a request reads or follows another's read.
pub(super) enum Turn {
    /// It may read (once it has won the database's claim); the read is over when this drops.
    Lead(Leading),
    /// Another request of this process is reading, or read within [`READ_GAP`]: wait for
    /// this, then use what is stored.
    Follow(ReadOver),
}

/// A page read led by one request, from its turn until it is dropped.
pub(super) struct Leading {
    reads: PageReads,
    operation: OperationId,
    over: ReadOver,
    /// Never sent on: dropping it wakes the followers.
    _done: oneshot::Sender<()>,
}

impl Drop for Leading {
    fn drop(&mut self) {
        let mut slots = self.reads.lock();
        if let Some(slot) = slots.by_operation.get_mut(&self.operation) {
            if slot.over.ptr_eq(&self.over) {
                slot.reading = false;
            }
        }
    }
}

impl PageReads {
    fn lock(&self) -> MutexGuard<'_, Slots> {
        // A panic while holding the lock leaves whole slots behind: still usable.
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The turn of a request at `now` for a page read of `operation`.
    pub(super) fn turn(&self, operation: OperationId, now: Timestamp) -> Turn {
        let mut slots = self.lock();
        if let Some(slot) = slots.by_operation.get(&operation) {
            if slot.holds(now) {
                return Turn::Follow(slot.over.clone());
            }
        }
        slots.sweep(now);
        let (done, over) = oneshot::channel();
        let over = over.shared();
        slots.by_operation.insert(
            operation,
            Slot {
                started: now,
                reading: true,
                over: over.clone(),
            },
        );
        Turn::Lead(Leading {
            reads: self.clone(),
            operation,
            over,
            _done: done,
        })
    }

    /// How many operations are remembered (for tests of the bound).
    #[cfg(test)]
    pub(super) fn remembered(&self) -> usize {
        self.lock().by_operation.len()
    }
}

impl Slots {
    /// Forgets the slots no request would follow any more, once the map has doubled since the
    /// last sweep (so a sweep costs amortised constant time per read).
    fn sweep(&mut self, now: Timestamp) {
        if self.by_operation.len() < self.sweep_at.max(FIRST_SWEEP) {
            return;
        }
        self.by_operation.retain(|_, slot| slot.holds(now));
        self.sweep_at = self.by_operation.len() * 2;
    }
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;
    use uuid::Uuid;

    use super::*;

    fn id(n: u128) -> OperationId {
        OperationId::from_uuid(Uuid::from_u128(n))
    }

    fn at(millis: i64) -> Timestamp {
        Timestamp::from_millis(1_000_000 + millis)
    }

    fn leads(turn: Turn) -> Leading {
        match turn {
            Turn::Lead(leading) => leading,
            Turn::Follow(_) => panic!("expected to lead"),
        }
    }

    fn follows(turn: Turn) -> ReadOver {
        match turn {
            Turn::Follow(over) => over,
            Turn::Lead(_) => panic!("expected to follow"),
        }
    }

    #[test]
    fn requests_during_a_read_follow_it_and_are_woken_when_it_is_over() {
        let reads = PageReads::default();
        let leading = leads(reads.turn(id(1), at(0)));
        let over = follows(reads.turn(id(1), at(10)));
        // Still following at 5 s: the read is in flight, however long it takes.
        let late = follows(reads.turn(id(1), at(5_000)));
        assert!(
            over.clone().now_or_never().is_none(),
            "waits while it reads"
        );
        drop(leading);
        assert!(block_on(over).is_err(), "woken by the leader's end");
        assert!(block_on(late).is_err());
    }

    #[test]
    fn within_the_gap_after_a_read_requests_follow_and_after_it_one_leads_again() {
        let reads = PageReads::default();
        drop(leads(reads.turn(id(1), at(0))));
        let over = follows(reads.turn(id(1), at(1_999)));
        assert!(
            over.now_or_never().is_some(),
            "the read is over: nothing to wait for"
        );
        let again = leads(reads.turn(id(1), at(2_000)));
        assert!(matches!(reads.turn(id(1), at(2_001)), Turn::Follow(_)));
        drop(again);
    }

    #[test]
    fn operations_have_turns_of_their_own() {
        let reads = PageReads::default();
        let _one = leads(reads.turn(id(1), at(0)));
        let _two = leads(reads.turn(id(2), at(0)));
    }

    #[test]
    fn a_leader_ending_after_its_slot_was_replaced_leaves_the_new_slot_alone() {
        let reads = PageReads::default();
        let first = leads(reads.turn(id(1), at(0)));
        drop(first);
        let second = leads(reads.turn(id(1), at(3_000)));
        let stale = Leading {
            reads: reads.clone(),
            operation: id(1),
            over: oneshot::channel::<()>().1.shared(),
            _done: oneshot::channel().0,
        };
        drop(stale);
        assert!(matches!(reads.turn(id(1), at(9_000)), Turn::Follow(_)));
        drop(second);
    }

    #[test]
    fn the_memory_is_swept_of_reads_over_and_older_than_the_gap() {
        let reads = PageReads::default();
        let in_flight = leads(reads.turn(id(0), at(0)));
        for n in 1..10_000 {
            drop(leads(reads.turn(id(n), at(i64::try_from(n).unwrap_or(0)))));
        }
        // Only the last 2 s of reads (and the one in flight) are needed; the sweeps keep the
        // map within twice that.
        let needed = 2_001;
        assert!(
            reads.remembered() <= 2 * needed + 1,
            "{} remembered",
            reads.remembered()
        );
        assert!(matches!(reads.turn(id(0), at(20_000)), Turn::Follow(_)));
        drop(in_flight);
    }
}
