//! Concurrent requests through the domain `Gateway` on a real database: money is never lost,
//! created or moved twice.

use std::sync::Arc;

use domain::ledger::manual_move;
use domain::operation::{Decline, DeclineCode, Outcome};
use domain::ports::OperatorStore;
use domain::service::{CompleteError, CreateError};
use domain::{Currency, Status};
use tokio::sync::Barrier;

use crate::helpers::{
    balance, credit, deposit, each_backend, gateway, merchant, now, rub, withdrawal,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn forty_concurrent_withdrawals_against_ten_roubles_hold_exactly_ten() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        credit(&t.db, &shop, 10_00).await;
        let gw = gateway(&t.db);
        let start = Arc::new(Barrier::new(40));
        let tasks: Vec<_> = (0..40)
            .map(|i| {
                let (gw, shop, start) = (gw.clone(), shop.clone(), start.clone());
                tokio::spawn(async move {
                    let moid = format!("payout-{i}");
                    start.wait().await;
                    gw.create_withdrawal(&shop, withdrawal(1_00, Some(&moid)), moid.as_bytes())
                        .await
                })
            })
            .collect();
        let (mut held, mut refused) = (0, 0);
        for result in futures::future::join_all(tasks).await {
            match result.expect("task") {
                Ok(created) => {
                    assert_eq!(created.operation.status(), Status::Processing);
                    assert!(!created.replayed);
                    held += 1;
                }
                Err(CreateError::InsufficientBalance) => refused += 1,
                Err(other) => panic!("unexpected error: {other:?}"),
            }
        }
        assert_eq!((held, refused), (10, 30));
        assert_eq!(balance(&t.db, &shop).await, (0, 10_00));
        assert_eq!(t.count("SELECT COUNT(*) AS n FROM operations"), 10);
        assert_eq!(
            t.count("SELECT COUNT(*) AS n FROM ledger WHERE kind = 'withdrawal_hold'"),
            10
        );
        assert_eq!(t.db.verify_ledger().await.expect("verify"), vec![]);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn two_processes_on_one_database_still_hold_exactly_ten() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        credit(&t.db, &shop, 10_00).await;
        let other = t.second_process();
        let gateways = [gateway(&t.db), gateway(&other)];
        let start = Arc::new(Barrier::new(40));
        let tasks: Vec<_> = (0..40)
            .map(|i| {
                let (gw, shop, start) = (gateways[i % 2].clone(), shop.clone(), start.clone());
                tokio::spawn(async move {
                    // Every id twice, once per process: one creates, the other replays.
                    let moid = format!("payout-{}", i / 2);
                    start.wait().await;
                    gw.create_withdrawal(&shop, withdrawal(1_00, Some(&moid)), moid.as_bytes())
                        .await
                })
            })
            .collect();
        let mut outcomes = Vec::new();
        for result in futures::future::join_all(tasks).await {
            outcomes.push(result.expect("task"));
        }
        let created = outcomes
            .iter()
            .filter(|r| matches!(r, Ok(c) if !c.replayed))
            .count();
        let replayed = outcomes
            .iter()
            .filter(|r| matches!(r, Ok(c) if c.replayed))
            .count();
        let refused = outcomes
            .iter()
            .filter(|r| matches!(r, Err(CreateError::InsufficientBalance)))
            .count();
        assert_eq!(created + replayed + refused, 40, "{outcomes:?}");
        assert_eq!((created, replayed), (10, 10));
        assert_eq!(balance(&t.db, &shop).await, (0, 10_00));
        assert_eq!(t.count("SELECT COUNT(*) AS n FROM operations"), 10);
        assert_eq!(t.db.verify_ledger().await.expect("verify"), vec![]);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn twenty_identical_requests_create_one_operation() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        credit(&t.db, &shop, 10_00).await;
        let gw = gateway(&t.db);
        let start = Arc::new(Barrier::new(40));
        let tasks: Vec<_> = (0..40)
            .map(|i| {
                let (gw, shop, start) = (gw.clone(), shop.clone(), start.clone());
                tokio::spawn(async move {
                    start.wait().await;
                    if i % 2 == 0 {
                        gw.create_withdrawal(&shop, withdrawal(1_00, Some("same-id")), b"payout")
                            .await
                    } else {
                        gw.create_deposit(&shop, deposit(7_00, Some("same-id")), b"deposit")
                            .await
                    }
                })
            })
            .collect();
        let mut created = Vec::new();
        for result in futures::future::join_all(tasks).await {
            created.push(result.expect("task").expect("created or replayed"));
        }
        for direction in domain::Direction::ALL {
            let mine: Vec<_> = created
                .iter()
                .filter(|c| c.operation.direction() == direction)
                .collect();
            assert_eq!(mine.len(), 20);
            assert_eq!(
                mine.iter().filter(|c| !c.replayed).count(),
                1,
                "{direction}"
            );
            assert!(mine
                .iter()
                .all(|c| c.operation.id() == mine[0].operation.id()));
        }
        assert_eq!(t.count("SELECT COUNT(*) AS n FROM operations"), 2);
        assert_eq!(balance(&t.db, &shop).await, (9_00, 1_00));

        let different = gw
            .create_withdrawal(&shop, withdrawal(2_00, Some("same-id")), b"other")
            .await;
        assert!(
            matches!(different, Err(CreateError::DuplicateOperation)),
            "{different:?}"
        );
        assert_eq!(t.count("SELECT COUNT(*) AS n FROM operations"), 2);
        assert_eq!(t.db.verify_ledger().await.expect("verify"), vec![]);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn racing_approve_and_decline_leave_one_final_status() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        credit(&t.db, &shop, 100_00).await;
        let gw = gateway(&t.db);
        let mut paid = 0;
        for round in 0..12 {
            let payout = gw
                .create_withdrawal(&shop, withdrawal(1_00, None), b"race")
                .await
                .expect("payout")
                .operation;
            let start = Arc::new(Barrier::new(2));
            let racers: Vec<_> = [
                Outcome::Approve,
                Outcome::Decline(Decline::new(DeclineCode::RecipientNotFound)),
            ]
            .into_iter()
            .map(|outcome| {
                let (gw, start, id) = (gw.clone(), start.clone(), payout.id());
                tokio::spawn(async move {
                    start.wait().await;
                    gw.complete(id, outcome).await
                })
            })
            .collect();
            let results: Vec<_> = futures::future::join_all(racers)
                .await
                .into_iter()
                .map(|r| r.expect("task"))
                .collect();
            let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
            assert_eq!(winners.len(), 1, "round {round}: {results:?}");
            assert!(results
                .iter()
                .any(|r| matches!(r, Err(CompleteError::InvalidState))));
            let stored = t.db_get(payout.id()).await;
            assert_eq!(stored.status(), winners[0].status());
            if stored.status() == Status::Approved {
                paid += 1_00;
            }
            let id = payout.id();
            assert_eq!(
                t.count(&format!(
                    "SELECT COUNT(*) AS n FROM ledger WHERE operation_id = '{id}'"
                )),
                2
            );
            assert_eq!(
                t.count(&format!(
                    "SELECT COUNT(*) AS n FROM callback_outbox WHERE operation_id = '{id}'"
                )),
                1
            );
        }
        assert_eq!(balance(&t.db, &shop).await, (100_00 - paid, 0));
        assert_eq!(t.db.verify_ledger().await.expect("verify"), vec![]);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn concurrent_first_credits_create_one_balance() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let start = Arc::new(Barrier::new(20));
        let tasks: Vec<_> = (1..=20)
            .map(|i| {
                let (db, id, start) = (t.db.clone(), shop.id.clone(), start.clone());
                tokio::spawn(async move {
                    use domain::ports::OperatorStore;
                    start.wait().await;
                    db.apply_manual_move(&manual_move(id, Currency::RUB, rub(i), true, now()))
                        .await
                })
            })
            .collect();
        for result in futures::future::join_all(tasks).await {
            result.expect("task").expect("credit");
        }
        assert_eq!(balance(&t.db, &shop).await, (210, 0));
        assert_eq!(t.db.verify_ledger().await.expect("verify"), vec![]);
    })
    .await;
}
