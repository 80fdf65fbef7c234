//! Fees through the store: the fee and its terms kept with the operation or refund, a
//! payout's and a refund's hold of amount and fee, the fee entries of the ledger and the
//! fee account beside the merchant's balance.

use domain::fee::{Fee, FeeDirection, FeeTerms, Percent, Tariff};
use domain::ledger::{refund_hold, EntryKind};
use domain::operation::Outcome;
use domain::ports::{RefundInsertError, RefundStore, TariffStore};
use domain::refund::Refund;
use domain::service::CreateError;
use domain::{Currency, PaymentMethod, Status};

use crate::helpers::{balance, credit, deposit, each_backend, gateway, merchant, now, withdrawal};
use crate::refund_fixtures::{approved_deposit, finish_refund, new_refund, refused};

fn terms(percent: &str, fixed: i64, min: Option<i64>) -> FeeTerms {
    FeeTerms::new(Percent::parse(percent).expect("percent"), fixed, min, None).expect("terms")
}

fn card_tariff(
    shop: &domain::merchant::Merchant,
    direction: FeeDirection,
    terms: FeeTerms,
) -> Tariff {
    Tariff {
        merchant_id: shop.id.clone(),
        direction,
        method: PaymentMethod::Card,
        currency: Currency::RUB,
        terms,
    }
}

/// The fee account of RUB: the sum of its `fee_income` entries.
fn fee_account(t: &crate::helpers::TestDb) -> i64 {
    t.count(
        "SELECT CAST(COALESCE(SUM(available_delta), 0) AS BIGINT) AS n FROM ledger \
         WHERE kind = 'fee_income' AND currency = 'RUB'",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deposit_credits_its_amount_less_its_fee_and_the_fee_account_earns_it() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let card = terms("2.5", 10_00, Some(15_00));
        t.db.put_tariff(&card_tariff(&shop, FeeDirection::Deposit, card), now()).await.expect("tariff");
        let gw = gateway(&t.db);

        let created = gw.creation().create_deposit(&shop, deposit(100_00, None), b"d").await.expect("deposit");
        // A later change of the tariff changes nothing of the operation.
        let cheaper = terms("0", 0, None);
        t.db.put_tariff(&card_tariff(&shop, FeeDirection::Deposit, cheaper), now()).await.expect("tariff");
        let done = gw.answers().complete(created.operation.id(), Outcome::Approve).await.expect("approve");

        let expected = Fee { amount: 15_00, terms: Some(card) };
        assert_eq!(done.fee(), expected);
        assert_eq!(t.db_get(done.id()).await.fee(), expected, "stored with its terms");
        assert_eq!(balance(&t.db, &shop).await, (85_00, 0));
        assert_eq!(fee_account(&t), 15_00);
        let kinds = t.count(&format!(
            "SELECT COUNT(*) AS n FROM ledger WHERE operation_id = '{}' AND kind IN ('deposit_approved', 'fee', 'fee_income')",
            done.id()
        ));
        assert_eq!(kinds, 3);
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_payout_holds_amount_and_fee_and_a_decline_releases_both() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        credit(&t.db, &shop, 1_009_99).await;
        t.db.put_tariff(
            &card_tariff(&shop, FeeDirection::Withdrawal, terms("1", 0, None)),
            now(),
        )
        .await
        .expect("tariff");
        let gw = gateway(&t.db);

        // 1,000.00 with 1 % needs 1,010.00: 1,009.99 is not enough.
        let short = gw
            .creation()
            .create_withdrawal(&shop, withdrawal(1_000_00, None), b"w")
            .await;
        assert!(
            matches!(short, Err(CreateError::InsufficientBalance)),
            "{short:?}"
        );
        assert_eq!(balance(&t.db, &shop).await, (1_009_99, 0));

        credit(&t.db, &shop, 1).await;
        let payout = gw
            .creation()
            .create_withdrawal(&shop, withdrawal(1_000_00, None), b"w")
            .await
            .expect("payout");
        assert_eq!(payout.operation.status(), Status::Processing);
        assert_eq!(balance(&t.db, &shop).await, (0, 1_010_00));

        let decline = Outcome::Decline(domain::operation::Decline::new(
            domain::operation::DeclineCode::RecipientNotFound,
        ));
        gw.answers()
            .complete(payout.operation.id(), decline)
            .await
            .expect("decline");
        assert_eq!(balance(&t.db, &shop).await, (1_010_00, 0));
        assert_eq!(fee_account(&t), 0);

        let paid = gw
            .creation()
            .create_withdrawal(&shop, withdrawal(1_000_00, None), b"w")
            .await
            .expect("payout");
        gw.answers()
            .complete(paid.operation.id(), Outcome::Approve)
            .await
            .expect("approve");
        assert_eq!(balance(&t.db, &shop).await, (0, 0));
        assert_eq!(fee_account(&t), 10_00);
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refund_holds_and_pays_its_fee_and_keeps_it() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let deposit = approved_deposit(&t.db, &shop, 100_00).await;
        let mut new = new_refund(&deposit, 30_00, None);
        new.refund = Refund {
            fee: Fee { amount: 50, terms: Some(terms("0", 50, None)) },
            ..new.refund
        };
        new.hold = refund_hold(&new.refund);

        // 100.00 covers 30.00 and its 0.50, but not 99.80 and 0.50.
        let mut too_much = new_refund(&deposit, 99_80, None);
        too_much.refund = Refund { fee: new.refund.fee, ..too_much.refund };
        too_much.hold = refund_hold(&too_much.refund);
        assert!(matches!(refused(&t.db, &too_much).await, RefundInsertError::InsufficientBalance));

        t.db.insert_refund(&new).await.expect("refund");
        assert_eq!(balance(&t.db, &shop).await, (69_50, 30_50));
        let stored = t.db.refunds_of(deposit.id()).await.expect("read");
        assert_eq!(stored[0].fee, new.refund.fee, "stored with its terms");

        let done = finish_refund(&t.db, &new.refund, &Outcome::Approve).await;
        assert_eq!(done.status(), Status::Approved);
        assert_eq!(balance(&t.db, &shop).await, (69_50, 0));
        assert_eq!(fee_account(&t), 50);
        let refund_fee = t.count(&format!(
            "SELECT COUNT(*) AS n FROM ledger WHERE refund_id = '{}' AND kind IN ('fee', 'fee_income')",
            done.id
        ));
        assert_eq!(refund_fee, 2, "a refund's fee entries name it");
        t.assert_ledger_verifies().await;
        assert_eq!(EntryKind::parse("fee_income"), Some(EntryKind::FeeIncome));
    })
    .await;
}
