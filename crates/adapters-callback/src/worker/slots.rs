//! When to claim: each claim is a write to the outbox, so it should bring a group of
//! callbacks, not the one whose delivery just finished.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The longest a free delivery slot waits for others before a claim is made for what is free.
pub(super) const LINGER: Duration = Duration::from_millis(5);

/// Delivery slots for the next claim: `first`, every other free one up to `batch`, and, while
/// fewer than half of `batch` (or of `concurrency`, if smaller) are free and deliveries are
/// in flight, those that free up within `linger` ([`LINGER`] in the worker). When nothing is in flight the claim is
/// made at once, so an idle worker answers new callbacks without delay.
pub(super) async fn gather(
    slots: &Arc<Semaphore>,
    first: OwnedSemaphorePermit,
    batch: usize,
    concurrency: usize,
    linger: Duration,
) -> Vec<OwnedSemaphorePermit> {
    let enough = (batch.min(concurrency) / 2).max(1);
    let deadline = tokio::time::Instant::now() + linger;
    let mut held = vec![first];
    loop {
        while held.len() < batch {
            match slots.clone().try_acquire_owned() {
                Ok(permit) => held.push(permit),
                Err(_) => break,
            }
        }
        let in_flight = concurrency
            .saturating_sub(slots.available_permits())
            .saturating_sub(held.len());
        if held.len() >= enough || in_flight == 0 {
            return held;
        }
        match tokio::time::timeout_at(deadline, slots.clone().acquire_owned()).await {
            Ok(Ok(permit)) => held.push(permit),
            Ok(Err(_)) | Err(_) => return held,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn first(slots: &Arc<Semaphore>) -> OwnedSemaphorePermit {
        slots.clone().acquire_owned().await.expect("open")
    }

    #[tokio::test]
    async fn an_idle_worker_claims_every_free_slot_at_once() {
        let slots = Arc::new(Semaphore::new(8));
        let held = gather(&slots, first(&slots).await, 16, 8, LINGER).await;
        assert_eq!(held.len(), 8);
    }

    #[tokio::test]
    async fn a_claim_takes_at_most_a_batch() {
        let slots = Arc::new(Semaphore::new(64));
        let held = gather(&slots, first(&slots).await, 16, 64, LINGER).await;
        assert_eq!(held.len(), 16);
    }

    #[tokio::test]
    async fn a_lone_free_slot_waits_briefly_for_others() {
        let slots = Arc::new(Semaphore::new(8));
        let busy: Vec<_> = (0..7).map(|_| slots.clone().try_acquire_owned()).collect();
        let started = tokio::time::Instant::now();
        let held = gather(&slots, first(&slots).await, 8, 8, LINGER).await;
        assert_eq!(held.len(), 1, "nobody freed a slot");
        assert!(started.elapsed() >= LINGER);
        drop(busy);
    }

    #[tokio::test]
    async fn slots_freed_meanwhile_join_the_claim() {
        let slots = Arc::new(Semaphore::new(8));
        let mut busy: Vec<_> = (0..7)
            .map(|_| slots.clone().try_acquire_owned().expect("free"))
            .collect();
        let freeing = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            busy.truncate(4);
            busy
        });
        // A long linger: the claim goes as soon as half a batch is free, not at its end.
        let started = tokio::time::Instant::now();
        let held = gather(&slots, first(&slots).await, 8, 8, Duration::from_secs(60)).await;
        assert_eq!(held.len(), 4, "half a batch is enough");
        assert!(started.elapsed() < Duration::from_secs(30));
        drop(freeing.await.expect("no panic"));
    }
}
