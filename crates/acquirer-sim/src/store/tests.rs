use serde_json::json;
use time::macros::datetime;
use time::Duration;

use super::*;
use crate::model::{DisputeStatus, Kind, Outcome, Recipient};
use crate::stats::{collect, recipient_key, Reads};

const NOW: OffsetDateTime = datetime!(2025-01-01 12:00 UTC);

fn payout(key: &str, reference: &str, amount: i64) -> NewPayment {
    NewPayment {
        key: key.to_owned(),
        request: json!({"reference": reference, "amount": amount}),
        reference: reference.to_owned(),
        kind: Kind::Payout,
        method: "card".to_owned(),
        amount,
        currency: "RUB".to_owned(),
        return_url: None,
        notify_url: None,
        not_after: Some(NOW + Duration::minutes(1)),
        expires_at: None,
        recipient: Some(Recipient::Card("4111111111111111".to_owned())),
    }
}

fn payin(key: &str, amount: i64) -> NewPayment {
    NewPayment {
        kind: Kind::Payin,
        recipient: None,
        expires_at: Some(NOW + Duration::minutes(10)),
        ..payout(key, key, amount)
    }
}

fn pending(_: &NewPayment) -> (Status, Option<FailureCode>) {
    (Status::Pending, None)
}

fn created(store: &mut Store, new: NewPayment) -> Payment {
    match store.create_payment(new, NOW, pending) {
        Ok(Created::New(payment)) => payment,
        other => panic!("not created: {other:?}"),
    }
}

fn refund(key: &str, amount: i64) -> NewRefund {
    NewRefund {
        key: key.to_owned(),
        request: json!({"reference": key, "amount": amount}),
        reference: key.to_owned(),
        amount,
    }
}

#[test]
fn same_key_same_body_is_a_repeat_and_other_body_a_conflict() {
    let mut store = Store::default();
    let first = created(&mut store, payout("k1", "r1", 100));
    let repeat = store.create_payment(payout("k1", "r1", 100), NOW, |_| {
        panic!("no plan for a repeat")
    });
    assert!(matches!(repeat, Ok(Created::Repeat(p)) if p.id == first.id));
    let other = store.create_payment(payout("k1", "r1", 200), NOW, |_| panic!("no plan"));
    assert!(matches!(other, Ok(Created::Conflict(p)) if p.id == first.id));
    let reused = store.create_payment(payout("k2", "r1", 100), NOW, |_| panic!("no plan"));
    assert!(matches!(reused, Ok(Created::Conflict(p)) if p.id == first.id));
}

#[test]
fn after_not_after_nothing_is_created() {
    let mut store = Store::default();
    let late = NOW + Duration::minutes(2);
    let answer = store.create_payment(payout("k1", "r1", 100), late, pending);
    assert_eq!(answer.err(), Some(PaymentRefused::NotAfterPassed));
    assert!(store.payments().by_reference("r1").is_none());
}

#[test]
fn settling_and_cancel_respect_final_states() {
    let mut store = Store::default();
    let payment = created(&mut store, payout("k1", "r1", 100));
    let settled = store
        .settle::<Payment>(&payment.id, None, NOW)
        .expect("pending settles");
    assert_eq!(settled.progress.status, Status::Succeeded);
    assert!(store.settle::<Payment>(&payment.id, None, NOW).is_none());
    assert!(matches!(
        store.cancel(&payment.id, NOW),
        Cancel::AlreadyFinal(_)
    ));
    let other = created(&mut store, payout("k2", "r2", 100));
    assert!(
        matches!(store.cancel(&other.id, NOW), Cancel::Canceled(p) if p.progress.status == Status::Canceled)
    );
    assert!(store.settle::<Payment>(&other.id, None, NOW).is_none());
    assert!(matches!(store.cancel("nope", NOW), Cancel::NotFound));
}

#[test]
fn payins_complete_once_and_expire_only_when_due() {
    let mut store = Store::default();
    let new = payin("k1", 100);
    let payment = match store.create_payment(new, NOW, |_| (Status::ActionRequired, None)) {
        Ok(Created::New(payment)) => payment,
        other => panic!("{other:?}"),
    };
    assert!(store.expire_payin(&payment.id, NOW).is_none());
    let done = store.complete_payin(&payment.id, None, NOW).expect("known");
    assert!(matches!(done, Ok(p) if p.progress.status == Status::Succeeded));
    let again = store
        .complete_payin(&payment.id, Some(FailureCode::Rejected), NOW)
        .expect("known");
    assert!(matches!(again, Err(p) if p.progress.status == Status::Succeeded));
    assert!(store
        .expire_payin(&payment.id, NOW + Duration::hours(1))
        .is_none());

    let waiting =
        match store.create_payment(payin("k2", 100), NOW, |_| (Status::ActionRequired, None)) {
            Ok(Created::New(payment)) => payment,
            other => panic!("{other:?}"),
        };
    let expired = store
        .expire_payin(&waiting.id, NOW + Duration::hours(1))
        .expect("expires");
    assert_eq!(expired.progress.failure_code, Some(FailureCode::Expired));
}

#[test]
fn refunds_need_a_succeeded_payin_and_stay_within_its_amount() {
    let mut store = Store::default();
    let payment =
        match store.create_payment(payin("p1", 1000), NOW, |_| (Status::ActionRequired, None)) {
            Ok(Created::New(payment)) => payment,
            other => panic!("{other:?}"),
        };
    let early = store.create_refund(&payment.id, refund("f0", 100), NOW, || None);
    assert_eq!(early.err(), Some(RefundRefused::NotRefundable));
    let _ = store.complete_payin(&payment.id, None, NOW);

    let first = match store.create_refund(&payment.id, refund("f1", 600), NOW, || None) {
        Ok(Created::New(refund)) => refund,
        other => panic!("{other:?}"),
    };
    let too_much = store.create_refund(&payment.id, refund("f2", 500), NOW, || None);
    assert_eq!(too_much.err(), Some(RefundRefused::OverAmount));
    assert!(store.refunds().by_reference("f2").is_none());
    // A failed refund frees its amount.
    let _ = store.settle::<Refund>(&first.id, Some(FailureCode::Declined), NOW);
    assert!(matches!(
        store.create_refund(&payment.id, refund("f2", 1000), NOW, || None),
        Ok(Created::New(_))
    ));
    assert!(matches!(
        store.create_refund(&payment.id, refund("f2", 1000), NOW, || None),
        Ok(Created::Repeat(_))
    ));
    assert!(matches!(
        store.create_refund(&payment.id, refund("f3", 0), NOW, || None),
        Err(RefundRefused::OverAmount)
    ));
    assert_eq!(
        store
            .create_refund("nope", refund("f4", 1), NOW, || None)
            .err(),
        Some(RefundRefused::NoPayment)
    );
}

#[test]
fn stats_count_only_succeeded() {
    let mut store = Store::default();
    let a = created(&mut store, payout("k1", "r1", 100));
    let _pending = created(&mut store, payout("k2", "r2", 300));
    let _ = store.settle::<Payment>(&a.id, None, NOW);
    let stats = collect(&store, Reads::default());
    assert_eq!(stats.payouts.count, 1);
    assert_eq!(stats.payouts.amount, 100);
    assert_eq!(stats.by_reference.get("r1").map(|r| r.payouts), Some(1));
    assert!(!stats.by_reference.contains_key("r2"));
    let key = recipient_key("4111111111111111");
    assert_eq!(
        stats.by_recipient.get(&key).map(|r| (r.payouts, r.amount)),
        Some((1, 100))
    );
}

fn paid_payin(store: &mut Store, key: &str, amount: i64) -> Payment {
    let payment =
        match store.create_payment(payin(key, amount), NOW, |_| (Status::ActionRequired, None)) {
            Ok(Created::New(payment)) => payment,
            other => panic!("{other:?}"),
        };
    let _ = store.complete_payin(&payment.id, None, NOW);
    payment
}

fn dispute(reference: &str, amount: Option<i64>, due_in_seconds: Option<i64>) -> NewDispute {
    NewDispute {
        reference: reference.to_owned(),
        amount,
        due_in_seconds,
    }
}

#[test]
fn disputes_open_only_on_succeeded_payins_within_their_amount() {
    let mut store = Store::default();
    let payment = paid_payin(&mut store, "p1", 1000);
    let whole = store
        .open_dispute(dispute("p1", None, None), NOW)
        .expect("opens");
    assert_eq!((whole.amount, whole.status), (1000, DisputeStatus::Open));
    assert_eq!(whole.payment_id, payment.id);
    assert_eq!(whole.due_by, NOW + Duration::days(7));
    let part = store.open_dispute(dispute("p1", Some(1), Some(60)), NOW);
    assert_eq!(
        part.map(|d| d.due_by).ok(),
        Some(NOW + Duration::minutes(1))
    );
    let refused = |store: &mut Store, new| store.open_dispute(new, NOW).err();
    let too_much = dispute("p1", Some(1001), None);
    assert_eq!(
        refused(&mut store, too_much),
        Some(DisputeRefused::BadAmount)
    );
    let nothing = dispute("p1", Some(0), None);
    assert_eq!(
        refused(&mut store, nothing),
        Some(DisputeRefused::BadAmount)
    );
    let past = dispute("p1", None, Some(-1));
    assert_eq!(refused(&mut store, past), Some(DisputeRefused::BadDueIn));
    let unknown = dispute("nope", None, None);
    assert_eq!(
        refused(&mut store, unknown),
        Some(DisputeRefused::NoPayment)
    );
    let _ = created(&mut store, payout("k2", "out", 100));
    let out = dispute("out", None, None);
    assert_eq!(
        refused(&mut store, out),
        Some(DisputeRefused::NotDisputable)
    );
}

#[test]
fn disputes_are_decided_once_and_lost_at_due_by_only_without_evidence() {
    let mut store = Store::default();
    let _ = paid_payin(&mut store, "p1", 1000);
    let open = |store: &mut Store| {
        store
            .open_dispute(dispute("p1", None, Some(60)), NOW)
            .expect("opens")
            .id
    };
    let (bare, argued, decided) = (open(&mut store), open(&mut store), open(&mut store));
    let due = NOW + Duration::minutes(1);

    assert!(matches!(store.lapse_dispute(&bare, NOW), Some(Lapse::Early(at)) if at == due));
    let lost = store.lapse_dispute(&bare, due);
    assert!(matches!(lost, Some(Lapse::Lost(d)) if d.status == DisputeStatus::Lost));
    assert!(matches!(
        store.add_evidence(&bare, due),
        Some(Evidence::Closed(_))
    ));

    assert!(
        matches!(store.add_evidence(&argued, NOW), Some(Evidence::Accepted(d)) if d.evidence == 1)
    );
    assert!(
        matches!(store.add_evidence(&argued, due), Some(Evidence::Accepted(d)) if d.evidence == 2)
    );
    assert_eq!(store.lapse_dispute(&argued, due), Some(Lapse::Stays));

    let won = store.resolve_dispute(&decided, Outcome::Won, NOW);
    assert!(matches!(won, Some(Ok(d)) if d.status == DisputeStatus::Won));
    let again = store.resolve_dispute(&decided, Outcome::Lost, NOW);
    assert!(matches!(again, Some(Err(d)) if d.status == DisputeStatus::Won));
    assert!(
        matches!(store.add_evidence(&decided, NOW), Some(Evidence::Closed(d)) if d.evidence == 0)
    );
    assert!(store.resolve_dispute("nope", Outcome::Won, NOW).is_none());

    let late = open(&mut store);
    let answer = store.add_evidence(&late, due + Duration::seconds(1));
    assert!(matches!(answer, Some(Evidence::Late(d)) if d.status == DisputeStatus::Lost));
}
