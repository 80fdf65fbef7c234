//! The payment pages' read claims (`OperationStore::claim_page_read`): one claimer wins per
//! operation per gap, however many race for it and from however many processes, and the
//! migration that adds them reverts.

use std::time::Duration;

use domain::ports::OperationStore;
use domain::{OperationId, Timestamp};

use crate::helpers::{each_backend, TestDb};
use crate::migrations::{
    assert_migrates_again, recorded_in, revert_through_async, reverts_through, Recorded, PAGE_READS,
};

const GAP: Duration = Duration::from_secs(2);

fn at(millis: i64) -> Timestamp {
    Timestamp::from_millis(1_795_255_200_000 + millis)
}

/// Whether a claim of `id` at `at(millis)` wins.
async fn claims(t: &TestDb, id: OperationId, millis: i64) -> bool {
    t.db.claim_page_read(id, at(millis), GAP)
        .await
        .expect("claim")
}

/// `claimers` claims of `id` at `now` sent at once, half of them from a second process on the
/// database; how many won.
async fn race(t: &TestDb, id: OperationId, now: Timestamp, claimers: usize) -> usize {
    let other = t.second_process();
    let tasks: Vec<_> = (0..claimers)
        .map(|i| {
            let db = if i % 2 == 0 {
                t.db.clone()
            } else {
                other.clone()
            };
            tokio::spawn(async move { db.claim_page_read(id, now, GAP).await.expect("claim") })
        })
        .collect();
    let mut won = 0;
    for task in tasks {
        if task.await.expect("the claim's task") {
            won += 1;
        }
    }
    won
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_concurrent_claimers_in_two_processes_one_wins_per_gap() {
    each_backend(|t| async move {
        let id = OperationId::from_uuid(uuid::Uuid::new_v4());
        assert_eq!(race(&t, id, at(0), 16).await, 1, "the first claim");
        assert_eq!(
            t.rows_where("page_reads", &format!("operation_id = '{id}'")),
            1
        );

        // Within the gap nobody wins, from either process.
        assert!(!claims(&t, id, 1).await);
        assert_eq!(race(&t, id, at(1_999), 8).await, 0);

        // Once the gap has passed, one of them wins again, and the next gap counts from it.
        assert_eq!(race(&t, id, at(2_000), 16).await, 1);
        assert_eq!(
            t.count(&format!(
                "SELECT read_at AS n FROM page_reads WHERE operation_id = '{id}'"
            )),
            at(2_000).millis(),
            "the winner's time"
        );
        assert!(!claims(&t, id, 3_999).await);
        assert!(claims(&t, id, 4_000).await);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_operation_has_claims_of_its_own() {
    each_backend(|t| async move {
        let ids: Vec<OperationId> = (0..5)
            .map(|_| OperationId::from_uuid(uuid::Uuid::new_v4()))
            .collect();
        for id in &ids {
            assert_eq!(race(&t, *id, at(0), 6).await, 1, "{id}");
        }
        assert_eq!(t.rows("page_reads"), 5);
        // A read claimed late for one operation leaves the others' gaps alone.
        assert!(claims(&t, ids[0], 5_000).await);
        assert!(!claims(&t, ids[0], 6_000).await);
        assert!(claims(&t, ids[1], 6_000).await);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_page_reads_migration_reverts_and_applies_again() {
    each_backend(|t| async move {
        let id = OperationId::from_uuid(uuid::Uuid::new_v4());
        assert!(claims(&t, id, 0).await);
        let reverted = revert_through_async(&t.url, PAGE_READS).await;
        assert_eq!(reverted, reverts_through(PAGE_READS));
        assert_eq!(recorded_in(&t), Recorded::before(PAGE_READS));
        assert!(t.try_exec("SELECT operation_id FROM page_reads").is_err());

        assert_migrates_again(&t);
        assert_eq!(t.rows("page_reads"), 0, "claims start afresh");
        assert!(claims(&t, id, 1).await);
    })
    .await;
}
