//! Provider attempts: written with their operation, saved, claimed by the reconciler; the
//! sandbox sweeps; discrepancies.

use std::collections::BTreeSet;

use adapters_db::{Backend, Database};
use domain::attempt::{Attempt, AttemptState, Discrepancy};
use domain::ledger::hold_for;
use domain::operation::{Decline, DeclineCode, Operation, Outcome};
use domain::ports::{Completion, InsertError, NewOperation, OperationStore};
use domain::{Direction, OperationId, Timestamp};

use crate::helpers::{
    all_at_once, at_provider, balance, deposit_expiring, each_backend, first_attempt,
    funded_merchant, insert_plain, insert_with_attempt, merchant, now, operation_builder,
    payout_due, TestDb,
};

/// A processing deposit of a new merchant at `provider`, stored with its first attempt due
/// at `check_at`.
async fn stored(t: &TestDb, provider: &str, check_at: Timestamp) -> (Operation, Attempt) {
    let shop = merchant(&t.db).await;
    let op = at_provider(
        operation_builder(&shop, Direction::Deposit, 1_00).build(),
        provider,
    );
    let attempt = first_attempt(&op, now(), check_at);
    insert_with_attempt(&t.db, &op, &attempt).await;
    (op, attempt)
}

/// The first attempts of `n` processing deposits at `bank-a`, each of a new merchant.
async fn sent_attempts(t: &TestDb, n: usize, check_at: Timestamp) -> Vec<Attempt> {
    let mut sent = Vec::new();
    for _ in 0..n {
        sent.push(stored(t, "bank-a", check_at).await.1);
    }
    sent
}

/// `attempt` as a notification saves it a second after `at`: `ok` at the acquirer's
/// `acquirer_id`, read next a minute later.
fn heard_of(attempt: &Attempt, acquirer_id: &str, at: Timestamp) -> Attempt {
    Attempt {
        state: AttemptState::Ok,
        acquirer_id: Some(acquirer_id.into()),
        updated_at: at.plus_seconds(1),
        next_check_at: Some(at.plus_seconds(61)),
        ..attempt.clone()
    }
}

/// Events of an attempt's change to `ok`.
const TO_OK: &str = "detail LIKE '%\"kind\":\"attempt\"%' AND detail LIKE '%\"state\":\"ok\"%'";

/// Moves `op` on from its first attempt `first` to attempt 2 at `provider`, in `state`.
async fn later_attempt(t: &TestDb, first: &Attempt, provider: &str, state: AttemptState) {
    let failed = Attempt {
        state: AttemptState::Unavailable,
        next_check_at: None,
        ..first.clone()
    };
    let next = Attempt {
        state,
        ..first_attempt_at(first, 2, provider)
    };
    assert!(t.db.add_attempts(&failed, &[next]).await.expect("added"));
}

/// Attempt `number` of `first`'s operation at `provider`, sent when `first` was.
fn first_attempt_at(first: &Attempt, number: u32, provider: &str) -> Attempt {
    Attempt::sent(
        first.operation_id,
        number,
        first.route_id,
        provider,
        first.created_at,
        first.created_at.plus_seconds(5),
    )
}

async fn claim(
    db: &Database,
    provider: &str,
    owner: &str,
    at: Timestamp,
    limit: u32,
) -> Vec<OperationId> {
    db.claim_checks(provider, owner, at, at.plus_seconds(30), limit)
        .await
        .expect("claim")
        .into_iter()
        .map(|a| a.operation_id)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_operation_is_written_with_its_first_attempt_and_keeps_its_provider() {
    each_backend(|t| async move {
        let at = now();
        let (deposit, attempt) = stored(&t, "bank-a", at.plus_seconds(5)).await;
        let read = t.db_get(deposit.id()).await;
        assert_eq!(read, deposit);
        assert_eq!(read.provider(), "bank-a");
        assert!(!read.is_sandbox());
        assert_eq!(
            t.db.attempts(deposit.id()).await.expect("attempts"),
            vec![attempt.clone()]
        );
        // Read together, as a notification reads them.
        assert_eq!(
            t.db.get_with_attempts(deposit.id()).await.expect("read"),
            Some((deposit.clone(), vec![attempt]))
        );
        let unknown = OperationId::from_uuid(uuid::Uuid::new_v4());
        assert_eq!(t.db.get_with_attempts(unknown).await.expect("read"), None);

        // A payout's hold and its attempt in one unit of work.
        let shop = funded_merchant(&t.db, 10_00).await;
        let payout = at_provider(
            operation_builder(&shop, Direction::Withdrawal, 4_00)
                .merchant_operation_id("payout-1")
                .build(),
            "bank-a",
        );
        let new = NewOperation {
            operation: payout.clone(),
            fingerprint: Some(domain::signature::Fingerprint::from_stored("f".into(), 1)),
            moves: vec![hold_for(&payout)],
            callback: None,
            attempts: vec![first_attempt(&payout, at, at.plus_seconds(5))],
        };
        t.db.insert(&new).await.expect("payout");
        assert_eq!(balance(&t.db, &shop).await, (6_00, 4_00));
        assert_eq!(t.db.attempts(payout.id()).await.expect("attempts").len(), 1);
        // With its hold's ledger entry, its two events in order, and its counter.
        let of_payout = format!("operation_id = '{}'", payout.id());
        assert_eq!(t.rows_where("ledger", &of_payout), 1);
        assert_eq!(t.rows_where("operation_events", &of_payout), 2);
        let first_event = format!(
            "SELECT count(*) AS n FROM operation_events WHERE {of_payout} \
             AND detail LIKE '%\"kind\":\"created\"%' \
             AND id = (SELECT min(id) FROM operation_events WHERE {of_payout})"
        );
        assert_eq!(t.count(&first_event), 1, "the created event comes first");
        let counted = "SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) AS n FROM operation_counts \
                       WHERE direction = 'withdrawal' AND status = 3";
        assert_eq!(t.count(counted), 1);

        // One that the balance does not cover writes nothing, its attempt included.
        let uncovered = at_provider(
            operation_builder(&shop, Direction::Withdrawal, 7_00).build(),
            "bank-a",
        );
        let short = NewOperation {
            operation: uncovered.clone(),
            fingerprint: None,
            moves: vec![hold_for(&uncovered)],
            callback: None,
            attempts: vec![first_attempt(&uncovered, at, at.plus_seconds(5))],
        };
        assert!(matches!(
            t.db.insert(&short).await,
            Err(InsertError::InsufficientBalance)
        ));
        let of_uncovered = format!("operation_id = '{}'", uncovered.id());
        assert_eq!(t.rows_where("provider_attempts", &of_uncovered), 0);
        assert_eq!(t.rows_where("operation_events", &of_uncovered), 0);
        assert_eq!(t.count(counted), 1);
        assert_eq!(balance(&t.db, &shop).await, (6_00, 4_00));

        // The loser of a merchantOperationId race writes no attempt.
        let rival = at_provider(
            operation_builder(&shop, Direction::Withdrawal, 1_00)
                .merchant_operation_id("payout-1")
                .build(),
            "bank-a",
        );
        let lost = NewOperation {
            operation: rival.clone(),
            moves: vec![hold_for(&rival)],
            attempts: vec![first_attempt(&rival, at, at.plus_seconds(5))],
            ..new
        };
        assert!(matches!(
            t.db.insert(&lost).await,
            Err(InsertError::Duplicate)
        ));
        assert_eq!(t.rows("provider_attempts"), 2);
        assert_eq!(balance(&t.db, &shop).await, (6_00, 4_00));

        // Routed past an open circuit: the route passed over, then the one called, with
        // their events after the created one, in that order.
        let routed = at_provider(
            operation_builder(&shop, Direction::Withdrawal, 1_00).build(),
            "bank-b",
        );
        let called = Attempt {
            number: 2,
            ..first_attempt(&routed, at, at.plus_seconds(5))
        };
        let passed_over = Attempt {
            provider: "bank-a".into(),
            state: AttemptState::Skipped,
            next_check_at: None,
            ..first_attempt(&routed, at, at)
        };
        let new = NewOperation {
            operation: routed.clone(),
            fingerprint: None,
            moves: vec![hold_for(&routed)],
            callback: None,
            attempts: vec![passed_over.clone(), called.clone()],
        };
        t.db.insert(&new).await.expect("routed payout");
        assert_eq!(
            t.db.attempts(routed.id()).await.expect("attempts"),
            vec![passed_over, called]
        );
        assert_eq!(balance(&t.db, &shop).await, (5_00, 5_00));
        let of_routed = format!("operation_id = '{}'", routed.id());
        assert_eq!(t.rows_where("ledger", &of_routed), 1);
        let in_order = format!(
            "SELECT count(*) AS n FROM operation_events c \
             JOIN operation_events s ON s.operation_id = c.operation_id AND s.id > c.id \
             JOIN operation_events a ON a.operation_id = c.operation_id AND a.id > s.id \
             WHERE c.{of_routed} AND c.detail LIKE '%\"kind\":\"created\"%' \
             AND s.detail LIKE '%\"state\":\"skipped\"%' \
             AND a.detail LIKE '%\"state\":\"sent\"%'"
        );
        assert_eq!(t.rows_where("operation_events", &of_routed), 3);
        assert_eq!(t.count(&in_order), 1, "created, passed over, called");
        assert_eq!(t.count(counted), 2);

        // A sandbox operation has none, and keeps its provider.
        let sandbox = operation_builder(&shop, Direction::Deposit, 1_00).build();
        insert_plain(&t.db, &sandbox).await;
        assert_eq!(t.db_get(sandbox.id()).await.provider(), "sandbox");
        assert!(t.db.attempts(sandbox.id()).await.expect("none").is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_saved_attempt_keeps_its_key_and_creation_and_ends_its_lease() {
    each_backend(|t| async move {
        let at = now();
        let (op, sent) = stored(&t, "bank-a", at.plus_seconds(-1)).await;
        assert_eq!(claim(&t.db, "bank-a", "p1", at, 10).await, vec![op.id()]);
        assert_eq!(t.rows_where("provider_attempts", "lease_owner = 'p1'"), 1);

        let answered = Attempt {
            state: AttemptState::Unknown,
            acquirer_id: Some("acq_1".into()),
            failure_code: Some("timeout".into()),
            redirect_url: Some("https://bank-a.example/pay/acq_1".into()),
            latency_ms: Some(5_012),
            updated_at: at.plus_seconds(6),
            next_check_at: Some(at.plus_seconds(7)),
            unknown_since: Some(at.plus_seconds(6)),
            reads: 2,
            ..sent.clone()
        };
        // What identifies the attempt or records its creation is never rewritten.
        let tampered = Attempt {
            route_id: 2,
            provider: "bank-z".into(),
            created_at: at.plus_seconds(100),
            ..answered.clone()
        };
        t.db.save_attempt(&tampered).await.expect("save");
        assert_eq!(
            t.db.attempts(op.id()).await.expect("read"),
            vec![answered.clone()]
        );
        assert_eq!(
            t.rows_where(
                "provider_attempts",
                "lease_owner IS NULL AND lease_until IS NULL"
            ),
            1
        );

        let cleared = Attempt {
            state: AttemptState::Ok,
            failure_code: None,
            next_check_at: None,
            unknown_since: None,
            reads: 0,
            ..answered
        };
        t.db.save_attempt(&cleared).await.expect("save");
        // A failure code once reported is kept (a copy without one does not erase it).
        let kept = Attempt {
            failure_code: Some("timeout".into()),
            ..cleared.clone()
        };
        assert_eq!(t.db.attempts(op.id()).await.expect("read"), vec![kept]);

        let missing = Attempt {
            number: 2,
            ..cleared
        };
        assert!(t.db.save_attempt(&missing).await.is_err());
        assert_eq!(t.rows("provider_attempts"), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stale_copy_never_takes_back_what_the_acquirer_said() {
    each_backend(|t| async move {
        let at = now();
        let (op, sent) = stored(&t, "bank-a", at.plus_seconds(-1)).await;
        // A notification told the acquirer's id, page and an answered state.
        let known = Attempt {
            state: AttemptState::Ok,
            acquirer_id: Some("acq_1".into()),
            redirect_url: Some("https://bank-a.example/pay/acq_1".into()),
            updated_at: at.plus_seconds(1),
            next_check_at: Some(at.plus_seconds(61)),
            ..sent.clone()
        };
        t.db.save_attempt(&known).await.expect("save");
        // The creation call, which timed out, then saves its older copy as unknown.
        let stale = Attempt {
            state: AttemptState::Unknown,
            latency_ms: Some(5_000),
            updated_at: at.plus_seconds(5),
            next_check_at: Some(at.plus_seconds(6)),
            unknown_since: Some(at.plus_seconds(5)),
            ..sent
        };
        t.db.save_attempt(&stale).await.expect("save");

        let read = t.db.attempts(op.id()).await.expect("read");
        let expected = Attempt {
            state: AttemptState::Ok,
            acquirer_id: Some("acq_1".into()),
            redirect_url: Some("https://bank-a.example/pay/acq_1".into()),
            unknown_since: None,
            ..stale
        };
        assert_eq!(read, vec![expected]);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn queued_saves_are_written_together_merged_and_a_bad_one_fails_alone() {
    each_backend(|t| async move {
        let at = now();
        let sent = sent_attempts(&t, 40, at.plus_seconds(10)).await;
        // A notification was heard for the first before its creation's answer is saved.
        let heard = Attempt {
            state: AttemptState::Ok,
            acquirer_id: Some("acq_0".into()),
            redirect_url: Some("https://bank-a.example/pay/acq_0".into()),
            updated_at: at.plus_seconds(1),
            ..sent[0].clone()
        };
        t.db.save_attempt(&heard).await.expect("save");
        let answered: Vec<Attempt> = sent
            .iter()
            .enumerate()
            .map(|(i, a)| Attempt {
                state: AttemptState::Ok,
                acquirer_id: Some(format!("acq_{i}")),
                redirect_url: (i > 0).then(|| format!("https://bank-a.example/pay/acq_{i}")),
                latency_ms: Some(3),
                updated_at: at.plus_seconds(2),
                next_check_at: Some(at.plus_seconds(62)),
                ..a.clone()
            })
            .collect();
        // No such attempt: its save fails, and only its own.
        let missing = Attempt {
            number: 2,
            ..answered[1].clone()
        };
        let missing = t.db.save_attempt_soon(missing);
        let queued: Vec<_> = answered
            .iter()
            .map(|attempt| t.db.save_attempt_soon(attempt.clone()))
            .collect();

        // Each says whether it was committed, once it is: then it can be read.
        assert!(!missing.await, "a save of no attempt is not written");
        for committed in queued {
            assert!(committed.await);
        }
        let written = "state = 'ok' AND latency_ms = 3";
        assert_eq!(t.rows_where("provider_attempts", written), 40);
        for (i, expected) in answered.iter().enumerate() {
            let read = t.db.attempts(expected.operation_id).await.expect("read");
            let expected = Attempt {
                // Kept from the notification: the answer's copy had no page.
                redirect_url: Some(format!("https://bank-a.example/pay/acq_{i}")),
                ..expected.clone()
            };
            assert_eq!(read, vec![expected]);
        }
        assert_eq!(t.rows("provider_attempts"), 40);
        // One event each for the state's change to ok: the first's was the notification's.
        assert_eq!(t.rows_where("operation_events", TO_OK), 40);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn awaited_saves_are_answered_after_their_commit_each_for_itself() {
    each_backend(|t| async move {
        let at = now();
        let sent = sent_attempts(&t, 24, at.plus_seconds(10)).await;
        // Awaited saves, a queued one of the same attempt among them, and one of an attempt
        // that does not exist: that one's caller alone hears the failure.
        let heard: Vec<Attempt> = sent
            .iter()
            .enumerate()
            .map(|(i, a)| heard_of(a, &format!("acq_{i}"), at))
            .collect();
        let queued = t.db.save_attempt_soon(Attempt {
            latency_ms: Some(7),
            ..heard[0].clone()
        });
        let db = t.db.clone();
        let saves = heard.clone();
        let answers = all_at_once(25, move |i| {
            let db = db.clone();
            let attempt = match saves.get(i) {
                Some(attempt) => attempt.clone(),
                None => Attempt {
                    number: 2,
                    ..saves[0].clone()
                },
            };
            // Read back as soon as it is answered: the answer comes after its commit.
            async move {
                let answer = db.save_attempt(&attempt).await;
                let read = db.attempts(attempt.operation_id).await.expect("read");
                (answer, read)
            }
        })
        .await;
        assert!(answers[..24].iter().all(|(a, _)| a.is_ok()), "{answers:?}");
        assert!(answers[24].0.is_err(), "a save of no attempt is refused");

        for (expected, (_, read)) in heard.iter().zip(&answers) {
            assert_eq!(read.len(), 1);
            assert_eq!(
                (read[0].state, &read[0].acquirer_id, read[0].next_check_at),
                (
                    AttemptState::Ok,
                    &expected.acquirer_id,
                    expected.next_check_at
                )
            );
        }
        // The queued save's latency is kept, whether or not it was written with the awaited
        // save of the same attempt.
        assert!(queued.await);
        let first = t.db.attempts(heard[0].operation_id).await.expect("read");
        assert_eq!(first[0].latency_ms, Some(7));
        assert_eq!(t.rows_where("operation_events", TO_OK), 24);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_save_queued_with_a_bad_one_of_the_same_attempt_is_written_all_the_same() {
    each_backend(|t| async move {
        let at = now();
        let sent = sent_attempts(&t, 1, at.plus_seconds(10)).await;
        let answered = heard_of(&sent[0], "acq_0", at);
        // PostgreSQL refuses a NUL in text: that queued save fails, and only it. SQLite
        // stores it.
        let bad = t.db.save_attempt_soon(Attempt {
            failure_code: Some("bad\0code".into()),
            latency_ms: Some(9),
            ..answered.clone()
        });
        t.db.save_attempt(&answered).await.expect("saved");
        assert_eq!(
            bad.await,
            t.backend() == Backend::Sqlite,
            "written where stored"
        );

        let read = t.db.attempts(answered.operation_id).await.expect("read");
        assert_eq!(
            (read[0].state, read[0].acquirer_id.as_deref()),
            (AttemptState::Ok, Some("acq_0"))
        );
        let kept = match t.backend() {
            Backend::Postgres => None,
            Backend::Sqlite => Some("bad\0code"),
        };
        assert_eq!(read[0].failure_code.as_deref(), kept);
        assert_eq!(t.rows_where("operation_events", TO_OK), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claims_take_due_current_attempts_of_processing_operations_at_one_provider() {
    each_backend(|t| async move {
        let at = now();
        let (due, _) = stored(&t, "bank-a", at.plus_seconds(-10)).await;
        let (older, _) = stored(&t, "bank-a", at.plus_seconds(-20)).await;
        let (_not_yet, _) = stored(&t, "bank-a", at.plus_seconds(60)).await;
        let (_elsewhere, _) = stored(&t, "bank-b", at.plus_seconds(-10)).await;
        let (done, attempt) = stored(&t, "bank-a", at.plus_seconds(-10)).await;
        let declined = done
            .finish(
                &Outcome::Decline(Decline::new(DeclineCode::ProviderUnavailable)),
                at,
            )
            .expect("processing");
        let completion = Completion {
            operation: declined,
            moves: vec![],
            callback: None,
            from_attempt: None,
        };
        t.db.finish(&completion).await.expect("finish");
        assert_eq!(attempt.next_check_at, Some(at.plus_seconds(-10)));
        // Failed over to bank-b: its first attempt at bank-a is no longer current.
        let (moved, moved_first) = stored(&t, "bank-a", at.plus_seconds(-30)).await;
        later_attempt(&t, &moved_first, "bank-b", AttemptState::Sent).await;
        // Read with its operation, as a notification reads them: both, by number.
        let (_, both) =
            t.db.get_with_attempts(moved.id())
                .await
                .expect("read")
                .expect("known");
        assert_eq!(
            both.iter()
                .map(|a| (a.number, a.provider.as_str()))
                .collect::<Vec<_>>(),
            vec![(1, "bank-a"), (2, "bank-b")]
        );
        assert_eq!(both, t.db.attempts(moved.id()).await.expect("read"));
        // A later attempt that was skipped was never tried: the first one is still current.
        let (skipped_after, skipped_first) = stored(&t, "bank-a", at.plus_seconds(-5)).await;
        let skipped = Attempt::skipped(skipped_after.id(), 2, 1, "bank-c", at);
        assert!(t
            .db
            .add_attempts(&skipped_first, &[skipped])
            .await
            .expect("added"));
        // Nothing left to do.
        let (idle, idle_attempt) = stored(&t, "bank-a", at).await;
        let finished_attempt = Attempt {
            state: AttemptState::Ok,
            next_check_at: None,
            ..idle_attempt
        };
        t.db.save_attempt(&finished_attempt).await.expect("save");

        assert_eq!(
            claim(&t.db, "bank-a", "p1", at, 1).await,
            vec![older.id()],
            "the oldest check first, at most the limit"
        );
        assert_eq!(
            claim(&t.db, "bank-a", "p1", at, 10).await,
            vec![due.id(), skipped_after.id()]
        );
        assert!(claim(&t.db, "bank-a", "p2", at, 10).await.is_empty());
        assert_eq!(
            t.rows_where("provider_attempts", "lease_owner IS NOT NULL"),
            3
        );
        assert!(t.db.attempts(idle.id()).await.expect("read")[0]
            .next_check_at
            .is_none());
        // bank-b's own attempts: the one stored there, and the current one of `moved`
        // (it has no check time, so it is not due).
        assert_eq!(claim(&t.db, "bank-b", "p1", at, 10).await.len(), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leased_check_goes_to_one_claimer_until_its_lease_ends() {
    each_backend(|t| async move {
        let at = now();
        let (op, _) = stored(&t, "bank-a", at.plus_seconds(-1)).await;
        let other = t.second_process();
        let leased =
            t.db.claim_checks("bank-a", "p1", at, at.plus_seconds(15), 10)
                .await
                .expect("claim");
        assert_eq!(leased.len(), 1);
        assert!(claim(&other, "bank-a", "p2", at.plus_seconds(14), 10)
            .await
            .is_empty());
        // The lease ran out (its holder died): another process takes the work.
        assert_eq!(
            claim(&other, "bank-a", "p2", at.plus_seconds(16), 10).await,
            vec![op.id()]
        );
        assert_eq!(t.rows_where("provider_attempts", "lease_owner = 'p2'"), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claimers_never_share_a_check() {
    each_backend(|t| async move {
        let at = now();
        let mut all = BTreeSet::new();
        for i in 0..24 {
            let (op, _) = stored(&t, "bank-a", at.plus_seconds(-i)).await;
            all.insert(op.id());
        }
        let processes = [t.db.clone(), t.second_process()];
        let claims = all_at_once(8, |i| {
            let db = processes[i % 2].clone();
            async move { claim(&db, "bank-a", &format!("p{i}"), at, 4).await }
        })
        .await;
        let mut seen = BTreeSet::new();
        for id in claims.into_iter().flatten() {
            assert!(seen.insert(id), "{id} claimed twice");
        }
        assert!(seen.len() >= 4, "only {} claimed", seen.len());
        let rest = claim(&t.db, "bank-a", "last", at, 100).await;
        seen.extend(rest);
        assert_eq!(seen, all);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_sandbox_sweeps_ignore_acquirer_operations() {
    each_backend(|t| async move {
        let shop = funded_merchant(&t.db, 10_00).await;
        let at = now();
        let sandbox_deposit = deposit_expiring(&shop, at.plus_seconds(-1));
        let sandbox_payout = payout_due(&shop, at.plus_seconds(-1));
        let acquirer_deposit = at_provider(deposit_expiring(&shop, at.plus_seconds(-2)), "bank-a");
        let acquirer_payout = at_provider(payout_due(&shop, at.plus_seconds(-2)), "bank-a");
        for op in [&sandbox_deposit, &sandbox_payout] {
            insert_plain(&t.db, op).await;
        }
        for op in [&acquirer_deposit, &acquirer_payout] {
            insert_with_attempt(&t.db, op, &first_attempt(op, at, at)).await;
        }
        assert_eq!(
            t.db.expired_deposits(at, 10).await.expect("sweep"),
            vec![sandbox_deposit.id()]
        );
        let due = t.db.due_payouts(at, 10).await.expect("due");
        assert_eq!(
            due.iter().map(Operation::id).collect::<Vec<_>>(),
            vec![sandbox_payout.id()]
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_discrepancy_is_recorded() {
    each_backend(|t| async move {
        let at = now();
        let (op, _) = stored(&t, "bank-a", at).await;
        let discrepancy = Discrepancy {
            operation_id: op.id(),
            provider: "bank-a".into(),
            reported: "succeeded".into(),
            at,
        };
        t.db.record_discrepancy(&discrepancy).await.expect("record");
        // The acquirer's retry of the same report is the same discrepancy.
        let again = Discrepancy {
            at: at.plus_seconds(30),
            ..discrepancy.clone()
        };
        t.db.record_discrepancy(&again).await.expect("again");
        let condition = format!(
            "operation_id = '{}' AND provider = 'bank-a' AND reported = 'succeeded' AND at = {}",
            op.id(),
            at.millis()
        );
        assert_eq!(t.rows_where("provider_discrepancies", &condition), 1);
        assert_eq!(t.rows("provider_discrepancies"), 1);
        let other = Discrepancy {
            reported: "failed".into(),
            ..discrepancy
        };
        t.db.record_discrepancy(&other)
            .await
            .expect("another status");
        assert_eq!(t.rows("provider_discrepancies"), 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn moving_on_to_the_next_provider_is_one_write_and_only_while_processing() {
    each_backend(|t| async move {
        let at = now();
        let (op, first) = stored(&t, "bank-a", at.plus_seconds(5)).await;
        let failed = Attempt {
            state: AttemptState::Unavailable,
            acquirer_id: Some("acq_a".into()),
            failure_code: Some("provider_unavailable".into()),
            next_check_at: None,
            ..first.clone()
        };
        let passed_over = Attempt::skipped(op.id(), 2, 7, "bank-a", at);
        let next = first_attempt_at(&first, 3, "bank-b");
        assert!(t
            .db
            .add_attempts(&failed, &[passed_over.clone(), next.clone()])
            .await
            .expect("added"));
        assert_eq!(
            t.db.attempts(op.id()).await.expect("attempts"),
            vec![failed.clone(), passed_over, next.clone()]
        );

        // Once the operation is final, no attempt to be called is added, and nothing changes.
        let (done, done_first) = stored(&t, "bank-a", at.plus_seconds(5)).await;
        let declined = done
            .finish(
                &Outcome::Decline(Decline::new(DeclineCode::ProviderUnavailable)),
                at,
            )
            .expect("processing");
        t.db.finish(&Completion {
            operation: declined,
            moves: vec![],
            callback: None,
            from_attempt: None,
        })
        .await
        .expect("finish");
        let refused = Attempt {
            state: AttemptState::Unavailable,
            ..done_first.clone()
        };
        assert!(!t
            .db
            .add_attempts(&refused, &[first_attempt_at(&done_first, 2, "bank-b")])
            .await
            .expect("answered"));
        assert_eq!(
            t.db.attempts(done.id()).await.expect("attempts"),
            vec![done_first.clone()]
        );
        // Routes passed over may still be recorded after it finished.
        let skipped = Attempt::skipped(done.id(), 2, 7, "bank-b", at);
        assert!(t
            .db
            .add_attempts(&refused, &[skipped])
            .await
            .expect("added"));
        assert_eq!(t.db.attempts(done.id()).await.expect("attempts").len(), 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_next_provider_once_the_attempt_was_heard_from_and_no_stale_status_after_it() {
    each_backend(|t| async move {
        let at = now();
        // A notification found the payment (the attempt is `ok`) while the creation call
        // failed: moving on is refused and nothing changes.
        let (op, first) = stored(&t, "bank-a", at.plus_seconds(5)).await;
        let heard = Attempt {
            state: AttemptState::Ok,
            acquirer_id: Some("acq_a".into()),
            ..first.clone()
        };
        t.db.save_attempt(&heard).await.expect("saved");
        let failed = Attempt {
            state: AttemptState::Unavailable,
            next_check_at: None,
            ..first.clone()
        };
        assert!(!t
            .db
            .add_attempts(&failed, &[first_attempt_at(&first, 2, "bank-b")])
            .await
            .expect("answered"));
        let kept = t.db.attempts(op.id()).await.expect("attempts");
        assert_eq!(kept, vec![heard]);
        assert_eq!(t.db_get(op.id()).await.provider(), "bank-a");

        // Moved on: the operation is at the new provider, and a status for the first
        // attempt no longer finishes it.
        let (moved, moved_first) = stored(&t, "bank-a", at.plus_seconds(5)).await;
        later_attempt(&t, &moved_first, "bank-b", AttemptState::Sent).await;
        let read = t.db_get(moved.id()).await;
        assert_eq!(
            (read.provider(), read.route_id()),
            ("bank-b", moved_first.route_id)
        );
        let approved = moved.finish(&Outcome::Approve, at).expect("processing");
        let stale = Completion {
            operation: approved.clone(),
            moves: vec![],
            callback: None,
            from_attempt: Some(1),
        };
        assert!(matches!(
            t.db.finish(&stale).await,
            Err(domain::ports::FinishError::NotProcessing)
        ));
        assert_eq!(
            t.db_get(moved.id()).await.status(),
            domain::Status::Processing
        );
        let current = Completion {
            from_attempt: Some(2),
            ..stale
        };
        t.db.finish(&current)
            .await
            .expect("the current attempt's status");
        assert_eq!(
            t.db_get(moved.id()).await.status(),
            domain::Status::Approved
        );
    })
    .await;
}
