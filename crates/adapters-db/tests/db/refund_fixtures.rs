//! Approved deposits and refunds of them, written through the store ports directly.

use adapters_db::Database;
use domain::ledger::{moves_on_finish, moves_on_refund_finish, refund_hold};
use domain::merchant::Merchant;
use domain::operation::{Decline, DeclineCode, Operation, Outcome, State};
use domain::ports::{
    Completion, NewRefund, OperationStore, RefundCompletion, RefundInsertError, RefundStore,
};
use domain::refund::Refund;
use domain::service::callbacks::{callback_for, refund_callback_for};
use domain::signature::Fingerprint;
use domain::testkit::DebugCallbackFormat;
use domain::{Direction, HttpUrl, MerchantId, MerchantRefundId, RefundId, Timestamp};

use crate::fixtures::{funded_merchant, insert_plain, merchant, now, operation, rub};

/// Where refund callbacks go.
pub const REFUND_CALLBACK_URL: &str = "https://shop.example/refunds";

/// A deposit of `minor` units of RUB by `shop`, approved now: its credit applied and its own
/// callback queued.
pub async fn approved_deposit(db: &Database, shop: &Merchant, minor: i64) -> Operation {
    let deposit = operation(shop, Direction::Deposit, minor);
    insert_plain(db, &deposit).await;
    let done = deposit
        .finish(&Outcome::Approve, now())
        .expect("processing");
    let completion = Completion {
        moves: moves_on_finish(&done),
        callback: callback_for(&done, &DebugCallbackFormat),
        operation: done.clone(),
        from_attempt: None,
    };
    db.finish(&completion).await.expect("approve the deposit");
    done
}

/// A new merchant and its deposit of 100.00 RUB, approved now ([`approved_deposit`]).
pub async fn shop_with_deposit(db: &Database) -> (Merchant, Operation) {
    let shop = merchant(db).await;
    let deposit = approved_deposit(db, &shop, 100_00).await;
    (shop, deposit)
}

/// [`shop_with_deposit`] for a merchant first credited with `funds` by hand.
pub async fn funded_shop_with_deposit(db: &Database, funds: i64) -> (Merchant, Operation) {
    let shop = funded_merchant(db, funds).await;
    let deposit = approved_deposit(db, &shop, 100_00).await;
    (shop, deposit)
}

/// A new processing refund of `minor` units of `deposit` with its hold, due a minute from
/// now, with a fingerprint when `mrid` is given.
pub fn new_refund(deposit: &Operation, minor: i64, mrid: Option<&str>) -> NewRefund {
    let at = now();
    let refund = Refund {
        id: RefundId::from_uuid(uuid::Uuid::new_v4()),
        operation_id: deposit.id(),
        merchant_id: deposit.merchant_id().clone(),
        merchant_refund_id: mrid.map(|m| MerchantRefundId::parse(m).expect("mrid")),
        amount: rub(minor),
        currency: deposit.currency(),
        state: State::Processing,
        callback_url: Some(HttpUrl::parse(REFUND_CALLBACK_URL).expect("url")),
        provider: deposit.provider().to_string(),
        acquirer_id: None,
        check_at: Some(at.plus_seconds(60)),
        unknown_since: None,
        created_at: at,
        updated_at: at,
        fee: domain::fee::Fee::NONE,
    };
    NewRefund {
        // Keyed by a secret rotated once: the version is stored with it.
        fingerprint: mrid.map(|m| Fingerprint::from_stored(format!("fp-{m}"), 2)),
        hold: refund_hold(&refund),
        refund,
    }
}

/// [`new_refund`] made (and held) at `at`.
pub fn made_at(deposit: &Operation, minor: i64, at: Timestamp) -> NewRefund {
    let mut new = new_refund(deposit, minor, None);
    new.refund.created_at = at;
    new.refund.updated_at = at;
    new.hold = refund_hold(&new.refund);
    new
}

/// [`new_refund`] due at `check_at`.
pub fn due_refund(deposit: &Operation, minor: i64, check_at: Timestamp) -> NewRefund {
    let mut new = new_refund(deposit, minor, None);
    new.refund.check_at = Some(check_at);
    new
}

/// Stores a refund of `minor` units of `deposit`, which must be accepted.
pub async fn refunded(db: &Database, deposit: &Operation, minor: i64) -> Refund {
    let new = new_refund(deposit, minor, None);
    db.insert_refund(&new).await.expect("refund accepted");
    new.refund
}

/// The refund `merchant` made with merchantRefundId `mrid`, which must be stored, and its
/// fingerprint.
pub async fn by_merchant_refund_id(
    db: &Database,
    merchant: &MerchantId,
    mrid: &str,
) -> (Refund, Option<Fingerprint>) {
    let mrid = MerchantRefundId::parse(mrid).expect("mrid");
    let found = db.find_by_merchant_refund_id(merchant, &mrid).await;
    found.expect("read").expect("stored")
}

/// Why inserting `new` was refused (it must be).
pub async fn refused(db: &Database, new: &NewRefund) -> RefundInsertError {
    db.insert_refund(new).await.expect_err("refund refused")
}

/// A decline a refund may meet.
pub fn declined() -> Outcome {
    Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined))
}

/// `refund` made final with `outcome` now, with its moves and callback.
pub fn completion(refund: &Refund, outcome: &Outcome) -> RefundCompletion {
    let done = refund.finish(outcome, now()).expect("processing");
    RefundCompletion {
        moves: moves_on_refund_finish(&done),
        callback: refund_callback_for(&done, &DebugCallbackFormat),
        refund: done,
    }
}

/// Finishes `refund` with `outcome`, which must be accepted; the refund as finished.
pub async fn finish_refund(db: &Database, refund: &Refund, outcome: &Outcome) -> Refund {
    let completion = completion(refund, outcome);
    db.finish_refund(&completion)
        .await
        .expect("finish the refund");
    completion.refund
}
