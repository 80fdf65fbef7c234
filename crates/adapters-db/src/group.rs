//! Group commit: a request queues its job and awaits the answer; whichever request finds
//! fewer than the allowed writers running starts one, a blocking task that takes everything
//! queued (up to a batch's size), writes it with one statement (or one transaction) and
//! answers each job, until the queue is empty.
//!
//! No request waits for a batch to fill: a writer takes what is there, so under light load a
//! batch is one job, and under heavy load the jobs that arrived during the previous write.
//! Used on PostgreSQL by the operation inserts (`crate::queue`, `store::batched`), the
//! outbox's attempt records (`outbox::grouped`) and the reads of merchant secrets
//! (`crate::directory`), and on both backends by the attempt saves (`store::attempts`: a
//! notification's or a read's, answered, and a creation's, which no request waits for),
//! each through `Database::enqueue`.

use std::collections::VecDeque;
use std::sync::Mutex;

/// Jobs waiting to be written and how many writers take them.
pub(crate) struct Group<J> {
    state: Mutex<Pending<J>>,
}

struct Pending<J> {
    jobs: VecDeque<J>,
    writers: usize,
}

impl<J> Default for Group<J> {
    fn default() -> Self {
        Self {
            state: Mutex::new(Pending {
                jobs: VecDeque::new(),
                writers: 0,
            }),
        }
    }
}

impl<J> Group<J> {
    fn pending(&self) -> std::sync::MutexGuard<'_, Pending<J>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `job`; `true` if fewer than `writers` writers run, in which case the caller
    /// MUST start one (counted already) that calls [`Group::drain`].
    pub(crate) fn push(&self, job: J, writers: usize) -> bool {
        let mut pending = self.pending();
        pending.jobs.push_back(job);
        let start = pending.writers < writers;
        if start {
            pending.writers += 1;
        }
        start
    }

    /// Takes up to `max` queued jobs now, for a writer that already holds a batch and waited
    /// for more (the writer stays counted).
    pub(crate) fn take(&self, max: usize) -> Vec<J> {
        let mut pending = self.pending();
        let n = pending.jobs.len().min(max);
        pending.jobs.drain(..n).collect()
    }

    /// Counts a writer for jobs left queued by one that panicked: `true` if jobs are queued and
    /// fewer than `writers` writers run, in which case the caller MUST run [`Group::drain`].
    pub(crate) fn resume(&self, writers: usize) -> bool {
        let mut pending = self.pending();
        let start = !pending.jobs.is_empty() && pending.writers < writers;
        if start {
            pending.writers += 1;
        }
        start
    }

    /// A writer's loop: hands `write` up to `max` queued jobs at a time until the queue is
    /// empty, then stops counting itself. If `write` panics, the writer is uncounted all the
    /// same, and the jobs still queued stay queued ([`Group::resume`]).
    pub(crate) fn drain(&self, max: usize, mut write: impl FnMut(Vec<J>)) {
        let mut counted = Counted {
            group: self,
            counted: true,
        };
        loop {
            let jobs: Vec<J> = {
                let mut pending = self.pending();
                if pending.jobs.is_empty() {
                    // Under the lock: a job pushed after this sees one writer fewer and
                    // starts its own, so none is left queued with no writer to take it.
                    pending.writers = pending.writers.saturating_sub(1);
                    counted.counted = false;
                    return;
                }
                let n = pending.jobs.len().min(max.max(1));
                pending.jobs.drain(..n).collect()
            };
            write(jobs);
        }
    }
}

/// Uncounts a writer that stops by panicking (one that finds the queue empty uncounts itself
/// under the lock).
struct Counted<'a, J> {
    group: &'a Group<J>,
    counted: bool,
}

impl<J> Drop for Counted<'_, J> {
    fn drop(&mut self) {
        if self.counted {
            let mut pending = self.group.pending();
            pending.writers = pending.writers.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_pushes_start_writers_up_to_the_limit() {
        let group = Group::default();
        assert!(group.push(1, 2));
        assert!(group.push(2, 2));
        assert!(!group.push(3, 2));
        let mut batches = Vec::new();
        group.drain(2, |jobs| batches.push(jobs));
        assert_eq!(batches, vec![vec![1, 2], vec![3]]);
        // One writer stopped: the next push may start one again.
        assert!(group.push(4, 2));
    }

    #[test]
    fn a_writer_takes_more_without_being_counted_again() {
        let group = Group::default();
        assert!(group.push(1, 1));
        assert!(!group.push(2, 1));
        assert!(!group.push(3, 1));
        let mut batches = Vec::new();
        group.drain(1, |mut jobs| {
            jobs.extend(group.take(1));
            batches.push(jobs);
        });
        assert_eq!(batches, vec![vec![1, 2], vec![3]]);
        assert!(group.take(5).is_empty());
        assert!(
            group.push(4, 1),
            "the writer stopped once the queue was empty"
        );
    }

    /// A group whose one writer panicked writing job 1, with job 2 queued behind it.
    fn after_a_panicking_writer() -> Group<i32> {
        let group = Group::default();
        assert!(group.push(1, 1));
        assert!(!group.push(2, 1));
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            group.drain(1, |_| panic!("write failed"));
        }));
        assert!(panicked.is_err());
        group
    }

    #[test]
    fn a_panicking_writer_is_uncounted_and_its_queue_kept() {
        let group = after_a_panicking_writer();
        assert!(group.push(3, 1), "no writer is counted any more");
        let mut left = Vec::new();
        group.drain(10, |jobs| left.extend(jobs));
        assert_eq!(left, vec![2, 3]);
    }

    #[test]
    fn jobs_queued_behind_a_panicking_writer_are_resumed_at_once() {
        let group = after_a_panicking_writer();
        // What the spawned writer does after a panic: counts itself again for what is left.
        assert!(group.resume(1));
        assert!(!group.resume(1), "one writer at most");
        assert!(!group.push(3, 1), "the resumed writer takes it");
        let mut left = Vec::new();
        group.drain(10, |jobs| left.extend(jobs));
        assert_eq!(left, vec![2, 3]);
        assert!(!group.resume(1), "nothing queued: no writer");
        assert!(group.push(4, 1));
    }
}
