//! Appeals through the store on both backends: written with their receipt and `open`
//! callback, one open per deposit even when two arrive at once, decided once with their
//! moves (the ledger verifies), and shown in the merchant's transactions and statement.

use domain::console::EventDetail;
use domain::dispute::{
    AppealReason, AppealRequest, DisputeFile, DisputeFilter, DisputeKind, DisputeStatus, FileType,
};
use domain::fee::{FeeDirection, FeeTerms, Percent, Tariff};
use domain::ledger::EntryKind;
use domain::operation::{Decline, DeclineCode, Outcome};
use domain::ports::{
    AttemptResult, CallbackOutbox, ConsoleStore, DisputeStore, LedgerReader, TariffStore,
};
use domain::service::{DecideError, DisputeError, Gateway};
use domain::statement::Day;
use domain::{AmountText, Currency, OperationId, PaymentMethod};

use crate::helpers::*;
use crate::migrations::{
    assert_migrates_again, assert_revert_refused, assert_reverts_through, revert_through_async,
    reverts_through, CALLBACK_SEQUENCE, DISPUTES,
};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

/// A 2 % card deposit tariff for `shop`.
async fn two_percent(t: &TestDb, shop: &domain::merchant::Merchant) {
    let tariff = Tariff {
        merchant_id: shop.id.clone(),
        direction: FeeDirection::Deposit,
        method: PaymentMethod::Card,
        currency: Currency::RUB,
        terms: FeeTerms::new(Percent::parse("2").expect("2"), 0, None, None).expect("terms"),
    };
    t.db.put_tariff(&tariff, now()).await.expect("tariff");
}

/// A 100.00 card deposit of `shop`, declined as expired.
async fn expired_deposit(gw: &Gateway, shop: &domain::merchant::Merchant) -> OperationId {
    let created = gw
        .creation()
        .create_deposit(shop, deposit(100_00, None), b"d")
        .await
        .expect("deposit");
    let id = created.operation.id();
    gw.answers()
        .complete(id, Outcome::Decline(Decline::new(DeclineCode::Expired)))
        .await
        .expect("decline");
    id
}

fn appeal(paid: &str, receipt: bool) -> AppealRequest {
    AppealRequest {
        reason: AppealReason::PaidNotCredited,
        paid_amount: AmountText::parse(paid).expect("amount"),
        comment: Some("paid by SBP at 10:02".into()),
        receipt: receipt
            .then(|| DisputeFile::new("receipt.png", FileType::Png, PNG.to_vec()).expect("a PNG")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_appeal_is_stored_with_its_receipt_and_open_callback_and_accepted_once() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        two_percent(&t, &shop).await;
        let gw = gateway(&t.db);
        let deposit = expired_deposit(&gw, &shop).await;

        let opened = gw
            .disputes()
            .appeal(&shop, deposit, appeal("100.00", true))
            .await
            .expect("opened");
        assert_eq!(
            t.db.dispute(opened.id).await.expect("read"),
            Some(opened.clone())
        );
        assert_eq!(
            t.db.disputes_of(deposit).await.expect("of"),
            vec![opened.clone()]
        );
        let files = t.db.dispute_files(opened.id).await.expect("files");
        assert_eq!(files.len(), 1);
        assert_eq!(
            (files[0].file_name.as_str(), files[0].data.as_slice()),
            ("receipt.png", PNG)
        );
        let callbacks = t.callbacks_of(deposit).await;
        assert_eq!(
            callbacks.len(),
            2,
            "the deposit's own and the appeal's: {callbacks:?}"
        );
        assert_eq!(callbacks[1].dispute.map(|d| d.dispute_id), Some(opened.id));

        let done = gw
            .disputes()
            .accept(opened.id, None, Some("receipt checked".into()))
            .await
            .expect("accepted");
        assert_eq!(done.status, DisputeStatus::Accepted);
        assert_eq!(
            balance(&t.db, &shop).await,
            (98_00, 0),
            "100.00 less the 2 % fee"
        );
        assert_eq!(
            t.callbacks_of(deposit).await.len(),
            3,
            "one callback per change"
        );
        let again = gw.disputes().accept(opened.id, None, None).await;
        assert!(
            matches!(again, Err(DecideError::NotOpenAppeal)),
            "{again:?}"
        );
        assert_eq!(balance(&t.db, &shop).await, (98_00, 0), "money moved once");
        assert_eq!(
            t.db_get(deposit).await.status(),
            domain::Status::Declined,
            "the deposit's status never changes"
        );
        t.assert_ledger_verifies().await;

        // The timeline: the appeal opened, then accepted, each in its change's transaction.
        let disputed: Vec<EventDetail> =
            t.db.operation_events(deposit)
                .await
                .expect("events")
                .into_iter()
                .map(|e| e.detail)
                .filter(|d| matches!(d, EventDetail::Dispute { .. }))
                .collect();
        let event = |status: &str| EventDetail::Dispute {
            dispute_id: opened.id.to_string(),
            dispute_kind: "appeal".into(),
            status: status.into(),
            amount: 100_00,
            evidence: None,
        };
        assert_eq!(disputed, vec![event("open"), event("accepted")]);

        // A dispute's callback attempt is labelled with its dispute, not as the deposit's own.
        let later = now().plus_seconds(1);
        let claimed =
            t.db.claim_due("w", later, later.plus_seconds(30), 10)
                .await
                .expect("claim");
        let appeal_call = claimed
            .iter()
            .find(|c| c.dispute.is_some())
            .expect("a dispute's callback");
        let tried = callback_attempt(appeal_call, later, 200);
        assert!(t
            .db
            .record_attempt("w", &tried, &AttemptResult::Delivered)
            .await
            .expect("record"));
        let labelled: Vec<(Option<String>, Option<String>)> =
            t.db.operation_events(deposit)
                .await
                .expect("events")
                .into_iter()
                .filter_map(|e| match e.detail {
                    EventDetail::Callback {
                        refund_id,
                        dispute_id,
                        ..
                    } => Some((refund_id, dispute_id)),
                    _ => None,
                })
                .collect();
        assert_eq!(labelled, vec![(None, Some(opened.id.to_string()))]);

        let entries: Vec<_> = t
            .ledger_of(deposit)
            .await
            .into_iter()
            .map(|e| (e.kind, e.available))
            .collect();
        assert_eq!(
            entries,
            vec![
                (EntryKind::Appeal, 100_00),
                (EntryKind::Fee, -2_00),
                (EntryKind::FeeIncome, 2_00)
            ]
        );
        let page =
            t.db.transactions(&rub_transactions(&shop, 10))
                .await
                .expect("transactions");
        assert!(
            page.iter().all(|tx| tx.dispute_id == Some(opened.id)),
            "{page:?}"
        );
        assert_eq!(page.iter().map(|tx| tx.amount()).sum::<i64>(), 98_00);

        let days = [Day {
            date: "today".into(),
            start: now().plus_seconds(-24 * 3600),
            end: now().plus_seconds(24 * 3600),
        }];
        let book =
            t.db.book(&shop.id, Currency::RUB, &days)
                .await
                .expect("book");
        let statement =
            domain::statement::Statement::build(shop.id.clone(), Currency::RUB, &days, book)
                .expect("it adds up");
        assert_eq!(statement.days[0].disputes, 98_00);
        assert_eq!(statement.days[0].deposits.count, 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_appeals_of_one_deposit_at_once_open_one_and_a_rejected_one_frees_the_next() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let gw = gateway(&t.db);
        let deposit = expired_deposit(&gw, &shop).await;
        let answers = all_at_once(2, |_| {
            let (gw, shop) = (gw.clone(), shop.clone());
            async move {
                gw.disputes()
                    .appeal(&shop, deposit, appeal("100.00", false))
                    .await
            }
        })
        .await;
        let (opened, refused) = tally(&answers, |e| matches!(e, DisputeError::InvalidState));
        assert_eq!((opened, refused), (1, 1));
        let open = &t.db.disputes_of(deposit).await.expect("of")[0];
        gw.disputes()
            .reject(open.id, Some("no payment found".into()))
            .await
            .expect("rejected");
        assert_eq!(
            balance(&t.db, &shop).await,
            (0, 0),
            "a rejection moves nothing"
        );
        gw.disputes()
            .appeal(&shop, deposit, appeal("100.00", false))
            .await
            .expect("a new appeal once none is open");
        let listed =
            t.db.list_disputes(&DisputeFilter {
                merchant_id: Some(shop.id.clone()),
                status: Some(DisputeStatus::Open),
                kind: Some(DisputeKind::Appeal),
                limit: 10,
            })
            .await
            .expect("list");
        assert_eq!(listed.len(), 1);
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_disputes_migration_reverts_while_there_are_none_and_refuses_once_there_are() {
    each_backend(|t| async move {
        assert_eq!(
            revert_through_async(&t.url, DISPUTES).await,
            reverts_through(DISPUTES)
        );
        assert_migrates_again(&t);
        let shop = merchant(&t.db).await;
        let gw = gateway(&t.db);
        let deposit = expired_deposit(&gw, &shop).await;
        gw.disputes()
            .appeal(&shop, deposit, appeal("100.00", false))
            .await
            .expect("opened");
        // The numbered callbacks' migration, newer, reverts first.
        assert_reverts_through(&t.url, CALLBACK_SEQUENCE).await;
        assert_revert_refused(&t, DISPUTES, "disputes", "no_disputes_left").await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_accepted_wrong_amount_corrects_the_deposit_once_and_caps_its_refunds() {
    each_backend(|t| async move {
        let shop = funded_merchant(&t.db, 10_00).await;
        two_percent(&t, &shop).await;
        let gw = gateway(&t.db);
        let created = gw
            .creation()
            .create_deposit(&shop, deposit(100_00, None), b"d")
            .await
            .expect("deposit");
        let deposit_id = created.operation.id();
        approve(&gw, deposit_id).await;
        assert_eq!(balance(&t.db, &shop).await, (10_00 + 98_00, 0));
        let wrong = AppealRequest {
            reason: AppealReason::WrongAmount,
            ..appeal("50.00", false)
        };
        let opened = gw
            .disputes()
            .appeal(&shop, deposit_id, wrong.clone())
            .await
            .expect("opened");
        gw.disputes()
            .accept(opened.id, None, Some("the bank says 50.00".into()))
            .await
            .expect("accepted");
        // 50.00 less its 1.00 fee is what the deposit should have credited: 49.00 less.
        assert_eq!(balance(&t.db, &shop).await, (10_00 + 49_00, 0));
        t.assert_ledger_verifies().await;
        // Corrected for good: another appeal is refused, even for the same claim.
        let again = gw.disputes().appeal(&shop, deposit_id, wrong).await;
        assert!(
            matches!(again, Err(DisputeError::InvalidState)),
            "{again:?}"
        );
        // The deposit is refundable up to the right amount only.
        let refund = |amount: &str| domain::refund::RefundRequest {
            amount: AmountText::parse(amount).expect("amount"),
            merchant_refund_id: None,
            callback_url: None,
        };
        let over = gw
            .refunds()
            .refund(&shop, deposit_id, refund("50.01"), b"r")
            .await;
        assert!(
            matches!(over, Err(domain::service::RefundError::ExceedsAmount)),
            "{over:?}"
        );
        gw.refunds()
            .refund(&shop, deposit_id, refund("50.00"), b"r")
            .await
            .expect("within the right amount");
    })
    .await;
}
