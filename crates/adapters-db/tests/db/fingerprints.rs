//! Stored fingerprints keep the version of the secret that keyed them, on every way an
//! operation is written (on PostgreSQL: the batched lanes, the single statement, the general
//! unit of work) and for refunds; a fingerprint without its version is corrupt.

use domain::ledger::{hold_for, moves_on_finish, BalanceMove};
use domain::operation::{Decline, DeclineCode, Operation, Outcome};
use domain::ports::{NewOperation, OperationStore, RefundStore};
use domain::service::callbacks::callback_for;
use domain::signature::Fingerprint;
use domain::testkit::DebugCallbackFormat;
use domain::{Direction, MerchantOperationId, MerchantRefundId};

use crate::helpers::{
    by_merchant_refund_id, each_backend, funded_merchant, new_refund, operation_builder,
    shop_with_deposit,
};

/// A fingerprint of `version` for the operation `moid`.
fn print(moid: &str, version: i32) -> Fingerprint {
    Fingerprint::from_stored(format!("fp-{moid}"), version)
}

fn new_operation(op: &Operation, version: i32, moves: Vec<BalanceMove>) -> NewOperation {
    let moid = op
        .merchant_operation_id()
        .expect("moid")
        .as_str()
        .to_string();
    NewOperation {
        operation: op.clone(),
        fingerprint: Some(print(&moid, version)),
        moves,
        callback: None,
        attempts: Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn operations_keep_their_fingerprints_key_version_however_written() {
    each_backend(|t| async move {
        let shop = funded_merchant(&t.db, 100_00).await;
        let builder = |direction, moid: &str| {
            operation_builder(&shop, direction, 1_00)
                .merchant_operation_id(moid)
                .build()
        };
        // A waiting deposit (PostgreSQL: the batched plain lane).
        let deposit = builder(Direction::Deposit, "plain");
        t.db.insert(&new_operation(&deposit, 2, Vec::new()))
            .await
            .expect("plain");
        // A payout and its hold (PostgreSQL: the batched hold lane).
        let payout = builder(Direction::Withdrawal, "hold");
        t.db.insert(&new_operation(&payout, 3, vec![hold_for(&payout)]))
            .await
            .expect("hold");
        // A hold not tied to its operation (PostgreSQL: the single statement).
        let loose = builder(Direction::Withdrawal, "single");
        let untied = BalanceMove {
            operation_id: None,
            ..hold_for(&loose)
        };
        t.db.insert(&new_operation(&loose, 4, vec![untied]))
            .await
            .expect("single");
        // Declined at creation, with its callback (the general unit of work).
        let declined = builder(Direction::Withdrawal, "general");
        let done = declined
            .finish(
                &Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined)),
                declined.created_at(),
            )
            .expect("processing");
        let mut general = new_operation(&done, 5, vec![hold_for(&declined)]);
        general.moves.extend(moves_on_finish(&done));
        general.callback = callback_for(&done, &DebugCallbackFormat);
        t.db.insert(&general).await.expect("general");

        for (direction, moid, version) in [
            (Direction::Deposit, "plain", 2),
            (Direction::Withdrawal, "hold", 3),
            (Direction::Withdrawal, "single", 4),
            (Direction::Withdrawal, "general", 5),
        ] {
            let id = MerchantOperationId::parse(moid).expect("moid");
            let (_, fingerprint) =
                t.db.find_by_merchant_operation_id(&shop.id, direction, &id)
                    .await
                    .expect("read")
                    .expect("stored");
            let fingerprint = fingerprint.expect("a fingerprint");
            assert_eq!(fingerprint, print(moid, version), "{moid}");
            assert_eq!(fingerprint.key_version(), version);
        }
        assert_eq!(t.rows_where("operations", "fingerprint_key IS NULL"), 0);
        t.assert_ledger_verifies().await;

        // A fingerprint whose version is lost is corrupt, never a guess.
        t.exec(&format!(
            "UPDATE operations SET fingerprint_key = NULL WHERE id = '{}'",
            deposit.id()
        ));
        let id = MerchantOperationId::parse("plain").expect("moid");
        let corrupt =
            t.db.find_by_merchant_operation_id(&shop.id, Direction::Deposit, &id)
                .await
                .expect_err("corrupt");
        assert!(corrupt.to_string().contains("fingerprint_key"), "{corrupt}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refunds_keep_their_fingerprints_key_version() {
    each_backend(|t| async move {
        let (shop, deposit) = shop_with_deposit(&t.db).await;
        let mut new = new_refund(&deposit, 10_00, Some("refund-7"));
        new.fingerprint = Some(Fingerprint::from_stored("fp-refund-7".into(), 7));
        t.db.insert_refund(&new).await.expect("refund");
        let mrid = MerchantRefundId::parse("refund-7").expect("mrid");
        let (_, fingerprint) = by_merchant_refund_id(&t.db, &shop.id, "refund-7").await;
        assert_eq!(fingerprint, new.fingerprint);
        assert_eq!(t.rows_where("refunds", "fingerprint_key = 7"), 1);

        t.exec("UPDATE refunds SET fingerprint_key = NULL");
        let corrupt =
            t.db.find_by_merchant_refund_id(&shop.id, &mrid)
                .await
                .expect_err("corrupt");
        assert!(corrupt.to_string().contains("fingerprint_key"), "{corrupt}");
    })
    .await;
}
