//! Attempt records made at once (on PostgreSQL written many to a statement): each is
//! recorded exactly once with its event, a lost lease answers `false` for its row alone, and
//! a group whose statement fails answers each row exactly.

use domain::callback::CallbackAttempt;
use domain::ports::{
    AttemptResult, CallbackOutbox, MerchantDirectory, PendingCallback, StoreError,
};
use domain::Timestamp;

use crate::helpers::{all_at_once, each_backend, merchant, queue_callbacks, TestDb};

/// How many deliveries record at once: enough for PostgreSQL to group them.
const AT_ONCE: usize = 48;

/// `n` callbacks queued and claimed by `owner`, in claim order.
async fn claimed(t: &TestDb, owner: &str, n: usize) -> Vec<PendingCallback> {
    let shop = merchant(&t.db).await;
    let at = Timestamp::from_millis(2_000_000);
    queue_callbacks(&t.db, &shop, n, at).await;
    let claimed =
        t.db.claim_due(owner, at, at.plus_seconds(60), u32::try_from(n).expect("n"))
            .await
            .expect("claim");
    assert_eq!(claimed.len(), n);
    claimed
}

/// Records a delivered first attempt of every callback of `claimed` as `owner`, all at once.
async fn record_all(
    t: &TestDb,
    owner: &'static str,
    claimed: &[PendingCallback],
) -> Vec<Result<bool, StoreError>> {
    let attempts: Vec<CallbackAttempt> = claimed
        .iter()
        .map(|c| CallbackAttempt {
            operation_id: c.operation_id,
            refund_id: c.refund_id,
            dispute: None,
            attempt: c.attempt,
            at: Timestamp::from_millis(2_001_000),
            duration_ms: 3,
            http_status: Some(200),
            error: None,
        })
        .collect();
    all_at_once(attempts.len(), |i| {
        let (db, attempt) = (t.db.clone(), attempts[i].clone());
        async move {
            db.record_attempt(owner, &attempt, &AttemptResult::Delivered)
                .await
        }
    })
    .await
}

/// The attempts logged for callback `id` (the timeline reads them from there), and no
/// callback event written beside them.
fn events_of(t: &TestDb, id: &str) -> i64 {
    assert_eq!(
        t.rows_where(
            "operation_events",
            &format!("operation_id = '{id}' AND detail LIKE '%\"kind\":\"callback\"%'"),
        ),
        0,
        "callback attempts are not repeated as events"
    );
    t.rows_where("callback_attempts", &format!("callback_id = '{id}'"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn records_made_at_once_are_each_written_once_with_their_event() {
    each_backend(|t| async move {
        let claimed = claimed(&t, "w", AT_ONCE).await;
        let answers = record_all(&t, "w", &claimed).await;
        assert!(answers.iter().all(|a| matches!(a, Ok(true))), "{answers:?}");
        assert_eq!(t.rows("callback_attempts"), AT_ONCE as i64);
        assert_eq!(
            t.rows_where(
                "callback_outbox",
                "state = 'delivered' AND attempts = 1 AND lease_owner IS NULL"
            ),
            AT_ONCE as i64
        );
        for c in &claimed {
            assert_eq!(events_of(&t, &c.operation_id.to_string()), 1);
        }
        // Recorded again by the same owner: its lease has ended, so nothing is written.
        let again = record_all(&t, "w", &claimed[..4]).await;
        assert!(again.iter().all(|a| matches!(a, Ok(false))), "{again:?}");
        assert_eq!(t.rows("callback_attempts"), AT_ONCE as i64);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lease_taken_by_another_owner_refuses_that_record_alone() {
    each_backend(|t| async move {
        let claimed = claimed(&t, "a", AT_ONCE).await;
        let lost = claimed[AT_ONCE / 2].operation_id.to_string();
        t.exec(&format!(
            "UPDATE callback_outbox SET lease_owner = 'b' WHERE id = '{lost}'"
        ));
        let answers = record_all(&t, "a", &claimed).await;
        for (c, answer) in claimed.iter().zip(&answers) {
            let expected = c.operation_id.to_string() != lost;
            assert!(
                matches!(answer, Ok(done) if *done == expected),
                "{answer:?}"
            );
        }
        assert_eq!(t.rows("callback_attempts"), AT_ONCE as i64 - 1);
        assert_eq!(events_of(&t, &lost), 0);
        assert_eq!(
            t.rows_where(
                "callback_outbox",
                &format!(
                    "id = '{lost}' AND state = 'pending' AND lease_owner = 'b' AND attempts = 0"
                )
            ),
            1
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_row_that_fails_its_group_fails_alone_and_the_others_are_recorded() {
    each_backend(|t| async move {
        let claimed = claimed(&t, "w", AT_ONCE).await;
        // An attempt already logged under the number about to be recorded: that insert
        // breaks the primary key, which fails a grouped statement as a whole.
        let bad = claimed[3].operation_id.to_string();
        t.exec(&format!(
            "INSERT INTO callback_attempts (callback_id, attempt, at, duration_ms) \
             VALUES ('{bad}', 1, 1, 1)"
        ));
        let answers = record_all(&t, "w", &claimed).await;
        for (c, answer) in claimed.iter().zip(&answers) {
            if c.operation_id.to_string() == bad {
                assert!(answer.is_err(), "{answer:?}");
            } else {
                assert!(matches!(answer, Ok(true)), "{answer:?}");
                assert_eq!(events_of(&t, &c.operation_id.to_string()), 1);
            }
        }
        assert_eq!(t.rows("callback_attempts"), AT_ONCE as i64);
        assert_eq!(events_of(&t, &bad), 1, "only the attempt logged beforehand");
        assert_eq!(
            t.rows_where(
                "callback_outbox",
                &format!("id = '{bad}' AND attempts = 0 AND lease_owner = 'w'")
            ),
            1,
            "the failed record changed nothing"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn merchants_are_read_together_with_their_current_secrets() {
    each_backend(|t| async move {
        let (one, two) = (merchant(&t.db).await, merchant(&t.db).await);
        let unknown = domain::MerchantId::parse("no-such-merchant").expect("id");
        let ids = [two.id.clone(), unknown, one.id.clone(), two.id.clone()];
        let mut found = t.db.merchants(&ids).await.expect("merchants");
        found.sort_by(|a, b| a.id.cmp(&b.id));
        let mut expected = vec![one.clone(), two.clone()];
        expected.sort_by(|a, b| a.id.cmp(&b.id));
        assert_eq!(found, expected);
        // Served from memory or not, the secrets are read afresh: a rotation shows at once.
        t.exec(&format!(
            "UPDATE merchant_keys SET secret = 'rotated-deposit-secret-0123456789abcdef' \
             WHERE merchant_id = '{}' AND direction = 'deposit'",
            one.id
        ));
        let again =
            t.db.merchants(std::slice::from_ref(&one.id))
                .await
                .expect("again");
        assert_eq!(
            again[0].signing_secret(domain::Direction::Deposit).expose(),
            "rotated-deposit-secret-0123456789abcdef"
        );
        assert!(t.db.merchants(&[]).await.expect("none").is_empty());
    })
    .await;
}
