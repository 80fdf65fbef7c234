//! `ledger verify`: balances equal the sums of their ledger entries.

use domain::ledger::manual_move;
use domain::ledger::Balance;
use domain::operation::{Decline, DeclineCode, Outcome};
use domain::ports::{ManualMoveError, OperatorStore};
use domain::{Currency, MerchantId, Status};

use crate::helpers::{
    applied, assert_nobody_is_refused, credit, deposit, each_backend, funded_merchant, gateway,
    merchant, now, rub, rub_move, withdrawal,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_ledger_verifies_after_a_mixed_workload_and_catches_tampering() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let idle = merchant(&t.db).await;
        let gw = gateway(&t.db);
        credit(&t.db, &shop, 1_000_00).await;
        for i in 0..6 {
            let created = gw.creation().create_deposit(&shop, deposit(10_00 + i * 100, None), b"d").await.expect("deposit");
            let outcome = if i % 3 == 0 {
                Outcome::Decline(Decline::new(DeclineCode::CardDeclined))
            } else {
                Outcome::Approve
            };
            gw.answers().complete(created.operation.id(), outcome).await.expect("complete deposit");
        }
        let declined = gw.creation().create_deposit(&shop, deposit(10_05, None), b"d").await.expect("deposit");
        assert_eq!(declined.operation.status(), Status::Declined);
        for i in 0..6 {
            let created = gw.creation().create_withdrawal(&shop, withdrawal(5_00 + i, None), b"w").await.expect("payout");
            match i % 3 {
                0 => drop(gw.answers().complete(created.operation.id(), Outcome::Approve).await.expect("approve")),
                1 => {
                    let decline = Outcome::Decline(Decline::new(DeclineCode::RecipientNotFound));
                    drop(gw.answers().complete(created.operation.id(), decline).await.expect("decline"));
                }
                _ => {}
            }
        }
        let at_creation = gw.creation().create_withdrawal(&shop, withdrawal(10_05, None), b"w").await.expect("payout");
        assert_eq!(at_creation.operation.status(), Status::Declined);
        let debit = rub_move(shop.id.clone(), 1_00, false);
        t.db.apply_manual_move(&debit, &domain::testkit::note()).await.expect("debit");
        t.assert_ledger_verifies().await;

        // A balance changed behind the ledger's back.
        t.exec(&format!("UPDATE balances SET available = available + 7 WHERE merchant_id = '{}'", shop.id));
        let found = t.db.verify_ledger().await.expect("verify");
        assert_eq!(found.len(), 1);
        let mismatch = &found[0];
        assert_eq!((&mismatch.merchant_id, mismatch.currency), (&shop.id, Currency::RUB));
        assert_eq!(mismatch.balance_available, mismatch.ledger_available + 7);
        assert_eq!(mismatch.balance_held, mismatch.ledger_held);

        // Ledger entries with no balance row at all.
        t.exec(&format!(
            "INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, created_at, \
             available_after, held_after) VALUES ('{}', 'USD', 'manual_credit', 500, 0, 0, 500, 0)",
            idle.id
        ));
        let found = t.db.verify_ledger().await.expect("verify");
        assert_eq!(found.len(), 2);
        let orphan = found.iter().find(|m| m.merchant_id == idle.id).expect("orphan ledger found");
        assert_eq!(orphan.currency.as_str(), "USD");
        assert_eq!((orphan.balance_available, orphan.balance_held), (0, 0));
        assert_eq!((orphan.ledger_available, orphan.ledger_held), (500, 0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_ledger_is_append_only_and_held_never_goes_negative() {
    each_backend(|t| async move {
        funded_merchant(&t.db, 5_00).await;
        assert!(t.try_exec("UPDATE ledger SET available_delta = 1").is_err());
        assert!(t.try_exec("DELETE FROM ledger").is_err());
        // Only a chargeback's hold may take available below zero, so the table allows it and
        // the store's conditional update keeps every other move from doing so
        // (`chargebacks::no_other_move_may_take_available_below_zero`).
        assert!(t.try_exec("UPDATE balances SET held = -1").is_err());
        assert_eq!(t.rows("ledger"), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_manual_move_answers_the_balance_after_it_and_an_uncovered_debit_writes_nothing() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let rub_balance = |available| Balance {
            currency: Currency::RUB,
            available,
            held: 0,
        };
        let credit = rub_move(shop.id.clone(), 10_00, true);
        assert_eq!(applied(&t.db, &credit).await, rub_balance(10_00));
        let too_much = rub_move(shop.id.clone(), 10_01, false);
        assert!(matches!(
            t.db.apply_manual_move(&too_much, &domain::testkit::note())
                .await,
            Err(ManualMoveError::InsufficientBalance)
        ));
        let usd = Currency::parse("USD").expect("currency");
        let never_held = manual_move(shop.id.clone(), usd, rub(1), false, now());
        assert!(matches!(
            t.db.apply_manual_move(&never_held, &domain::testkit::note())
                .await,
            Err(ManualMoveError::InsufficientBalance)
        ));
        let debit = rub_move(shop.id.clone(), 4_00, false);
        assert_eq!(applied(&t.db, &debit).await, rub_balance(6_00));

        let nobody = MerchantId::parse("nobody").expect("id");
        assert_eq!(t.db.find_merchant(&nobody).await.expect("find"), None);
        assert_eq!(
            t.db.find_merchant(&shop.id).await.expect("find"),
            Some(shop.clone())
        );
        assert_nobody_is_refused(&t.db).await;
        // Refused moves left no ledger entry behind.
        t.assert_ledger_verifies().await;
    })
    .await;
}
