//! Concurrent requests through the domain `Gateway` on a real database: money is never lost,
//! created or moved twice.

use domain::merchant::Merchant;
use domain::operation::{Decline, DeclineCode, Outcome};
use domain::ports::OperatorStore;
use domain::service::{CompleteError, CreateError, Created, Gateway};
use domain::Status;

use crate::helpers::{
    all_at_once, balance, deposit, each_backend, funded_merchant, gateway, merchant, rub_move,
    tally, withdrawal,
};

/// Forty withdrawals of 1.00 by `shop` at once, the i-th through `gateways[i % N]` with the
/// merchantOperationId `moid(i)` (its bytes standing in for the request).
async fn forty_payouts<const N: usize>(
    shop: &Merchant,
    gateways: [Gateway; N],
    moid: fn(usize) -> String,
) -> Vec<Result<Created, CreateError>> {
    all_at_once(40, |i| {
        let (gw, shop) = (gateways[i % N].clone(), shop.clone());
        async move {
            let moid = moid(i);
            gw.creation()
                .create_withdrawal(&shop, withdrawal(1_00, Some(&moid)), moid.as_bytes())
                .await
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn forty_concurrent_withdrawals_against_ten_roubles_hold_exactly_ten() {
    each_backend(|t| async move {
        let shop = funded_merchant(&t.db, 10_00).await;
        let results = forty_payouts(&shop, [gateway(&t.db)], |i| format!("payout-{i}")).await;
        for created in results.iter().flatten() {
            assert_eq!(created.operation.status(), Status::Processing);
            assert!(!created.replayed);
        }
        let (held, refused) = tally(&results, |e| matches!(e, CreateError::InsufficientBalance));
        assert_eq!((held, refused), (10, 30));
        assert_eq!(balance(&t.db, &shop).await, (0, 10_00));
        assert_eq!(t.rows("operations"), 10);
        assert_eq!(t.rows_where("ledger", "kind = 'withdrawal_hold'"), 10);
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn two_processes_on_one_database_still_hold_exactly_ten() {
    each_backend(|t| async move {
        let shop = funded_merchant(&t.db, 10_00).await;
        let other = t.second_process();
        let gateways = [gateway(&t.db), gateway(&other)];
        // Every id twice, once per process: one creates, the other replays.
        let outcomes = forty_payouts(&shop, gateways, |i| format!("payout-{}", i / 2)).await;
        let count = |wanted: fn(&Result<_, CreateError>) -> bool| {
            outcomes.iter().filter(|r| wanted(r)).count()
        };
        let created = count(|r| matches!(r, Ok(c) if !c.replayed));
        let replayed = count(|r| matches!(r, Ok(c) if c.replayed));
        let refused = count(|r| matches!(r, Err(CreateError::InsufficientBalance)));
        assert_eq!(created + replayed + refused, 40, "{outcomes:?}");
        assert_eq!((created, replayed), (10, 10));
        assert_eq!(balance(&t.db, &shop).await, (0, 10_00));
        assert_eq!(t.rows("operations"), 10);
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn twenty_identical_requests_create_one_operation() {
    each_backend(|t| async move {
        let shop = funded_merchant(&t.db, 10_00).await;
        let gw = gateway(&t.db);
        let results = all_at_once(40, |i| {
            let (gw, shop) = (gw.clone(), shop.clone());
            async move {
                if i % 2 == 0 {
                    gw.creation()
                        .create_withdrawal(&shop, withdrawal(1_00, Some("same-id")), b"payout")
                        .await
                } else {
                    gw.creation()
                        .create_deposit(&shop, deposit(7_00, Some("same-id")), b"deposit")
                        .await
                }
            }
        })
        .await;
        let created: Vec<_> = results
            .into_iter()
            .map(|result| result.expect("created or replayed"))
            .collect();
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
        assert_eq!(t.rows("operations"), 2);
        assert_eq!(balance(&t.db, &shop).await, (9_00, 1_00));

        let different = gw
            .creation()
            .create_withdrawal(&shop, withdrawal(2_00, Some("same-id")), b"other")
            .await;
        assert!(
            matches!(different, Err(CreateError::DuplicateOperation)),
            "{different:?}"
        );
        assert_eq!(t.rows("operations"), 2);
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn racing_approve_and_decline_leave_one_final_status() {
    each_backend(|t| async move {
        let shop = funded_merchant(&t.db, 100_00).await;
        let gw = gateway(&t.db);
        let mut paid = 0;
        for round in 0..12 {
            let payout = gw
                .creation()
                .create_withdrawal(&shop, withdrawal(1_00, None), b"race")
                .await
                .expect("payout")
                .operation;
            let outcomes = [
                Outcome::Approve,
                Outcome::Decline(Decline::new(DeclineCode::RecipientNotFound)),
            ];
            let results = all_at_once(2, |i| {
                let (gw, id, outcome) = (gw.clone(), payout.id(), outcomes[i].clone());
                async move { gw.answers().complete(id, outcome).await }
            })
            .await;
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
            assert_eq!(t.rows_where("ledger", &format!("operation_id = '{id}'")), 2);
            assert_eq!(
                t.rows_where("callback_outbox", &format!("operation_id = '{id}'")),
                1
            );
        }
        assert_eq!(balance(&t.db, &shop).await, (100_00 - paid, 0));
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn concurrent_first_credits_create_one_balance() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let results = all_at_once(20, |i| {
            let (db, id) = (t.db.clone(), shop.id.clone());
            async move {
                db.apply_manual_move(&rub_move(id, i as i64 + 1, true), &domain::testkit::note())
                    .await
            }
        })
        .await;
        for result in results {
            result.expect("credit");
        }
        assert_eq!(balance(&t.db, &shop).await, (210, 0));
        t.assert_ledger_verifies().await;
    })
    .await;
}
