//! The payment pages of acquirer deposits: `/pay/{id}` and `/pay/{id}/return` read the
//! payment at most once per operation per two seconds, claimed in storage across processes,
//! and requests of one process during or just after a read follow it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::executor::block_on;

use super::acquirer::{at_bank, expect_save_attempt, payment, with_attempts, BANK};
use super::fixtures::*;
use crate::acquirer::{Lookup, PaymentStatus};
use crate::attempt::Attempt;
use crate::operation::Operation;
use crate::ports::MockClock;
use crate::service::page_reads::{FOLLOW_WAIT, READ_GAP};
use crate::service::{Gateway, PayPage, ReadError};
use crate::testkit::TestClock;
use crate::{Status, Timestamp};

fn bank_deposit() -> Operation {
    deposit_builder(id(1)).provider(BANK).route(1).build()
}

/// The deposit's attempt whose creation answer is not known yet: no acquirer page.
fn unanswered() -> Attempt {
    Attempt::sent(id(1), 1, 1, BANK, now(), now())
}

/// Expects `times` claims of a page read of `id(1)` with the two-second gap, each answering
/// `won`; returns the times they were made at.
fn expect_claims(mocks: &mut Mocks, times: usize, won: bool) -> Captured<Timestamp> {
    let seen = Captured::default();
    let sink = seen.clone();
    mocks
        .store
        .expect_claim_page_read()
        .withf(|asked, _, gap| *asked == id(1) && *gap == READ_GAP)
        .times(times)
        .returning(move |_, at, _| {
            sink.push(at);
            Ok(won)
        });
    seen
}

/// A processing bank deposit with its unanswered attempt, read through `mocks`.
fn processing_deposit(mocks: &mut Mocks) {
    mocks.stored(bank_deposit());
    with_attempts(mocks, vec![unanswered()]);
}

#[test]
fn the_pay_page_sends_the_user_to_the_acquirers_page_once_it_is_known_without_reading() {
    let mut known = unanswered();
    known.redirect_url = Some("http://127.0.0.1:9100/pay/acq_1".into());
    let mut mocks = at_bank();
    mocks.stored(bank_deposit());
    with_attempts(&mut mocks, vec![known]);
    mocks.store.expect_claim_page_read().never();
    mocks.acquirer.expect_find().never();

    let page = block_on(mocks.gateway().steps().pay_page(id(1))).unwrap();

    assert_eq!(
        page,
        PayPage::Acquirer("http://127.0.0.1:9100/pay/acq_1".into())
    );
}

#[test]
fn without_the_acquirers_page_the_pay_page_reads_once_it_has_claimed_the_read() {
    let mut mocks = at_bank();
    processing_deposit(&mut mocks);
    let claims = expect_claims(&mut mocks, 1, true);
    mocks
        .acquirer
        .expect_find()
        .times(1)
        .returning(|_, _| Lookup::Failed("timeout".into()));

    let page = block_on(mocks.gateway().steps().pay_page(id(1))).unwrap();

    assert_eq!(page, PayPage::Processing(bank_deposit()));
    assert_eq!(claims.one(), now());
}

#[test]
fn the_return_page_applies_what_its_claimed_read_finds() {
    let mut mocks = at_bank();
    processing_deposit(&mut mocks);
    expect_claims(&mut mocks, 1, true);
    mocks
        .acquirer
        .expect_find()
        .times(1)
        .returning(|_, _| Lookup::Found(payment(PaymentStatus::Succeeded, None)));
    expect_save_attempt(&mut mocks);
    let finished = mocks.expect_finish(1, || Ok(()));

    let back = block_on(mocks.gateway().steps().pay_return(id(1))).unwrap();

    assert_eq!(back.status(), Status::Approved);
    assert_eq!(finished.one().operation.status(), Status::Approved);
}

#[test]
fn a_read_another_process_claimed_is_not_made_and_the_pages_show_what_is_stored() {
    let mut mocks = at_bank();
    processing_deposit(&mut mocks);
    expect_claims(&mut mocks, 2, false);
    mocks.acquirer.expect_find().never();
    let clock = Arc::new(TestClock::at(now()));
    let gateway = mocks.gateway_on(clock.clone());

    let back = block_on(gateway.steps().pay_return(id(1))).unwrap();
    assert_eq!(back, bank_deposit());
    // Past this process's own gap, the next request claims again (and loses again).
    clock.set(now().plus_millis(2_000));
    let page = block_on(gateway.steps().pay_page(id(1))).unwrap();
    assert_eq!(page, PayPage::Processing(bank_deposit()));
}

#[test]
fn within_two_seconds_of_a_page_read_this_process_neither_claims_nor_reads_again() {
    let mut mocks = at_bank();
    processing_deposit(&mut mocks);
    let claims = expect_claims(&mut mocks, 2, true);
    let reads = Arc::new(AtomicUsize::new(0));
    let counted = reads.clone();
    mocks.acquirer.expect_find().returning(move |_, _| {
        counted.fetch_add(1, Ordering::SeqCst);
        Lookup::Failed("timeout".into())
    });
    let clock = Arc::new(TestClock::at(now()));
    let gateway = mocks.gateway_on(clock.clone());

    for _ in 0..5 {
        block_on(gateway.steps().pay_return(id(1))).unwrap();
    }
    clock.set(now().plus_millis(1_999));
    block_on(gateway.steps().pay_page(id(1))).unwrap();
    block_on(gateway.steps().pay_return(id(1))).unwrap();
    assert_eq!(reads.load(Ordering::SeqCst), 1, "one read in the first 2 s");

    clock.set(now().plus_millis(2_000));
    block_on(gateway.steps().pay_return(id(1))).unwrap();
    assert_eq!(reads.load(Ordering::SeqCst), 2);
    assert_eq!(claims.all(), vec![now(), now().plus_millis(2_000)]);
}

#[test]
fn a_claim_that_cannot_be_stored_is_unavailable_and_reads_nothing() {
    let mut mocks = at_bank();
    processing_deposit(&mut mocks);
    mocks
        .store
        .expect_claim_page_read()
        .times(1)
        .returning(|_, _, _| Err(unavailable()));
    mocks.acquirer.expect_find().never();

    let back = block_on(mocks.gateway().steps().pay_return(id(1)));

    assert!(matches!(back, Err(ReadError::Unavailable(_))), "{back:?}");
}

/// Requests that come while a read is in flight wait for it, then take what it stored: the
/// read's thread starts the second request from inside the acquirer's call and answers only
/// once that request waits (on a clock whose waits never end by themselves).
#[test]
fn a_request_during_a_page_read_waits_for_it_and_takes_its_result() {
    let mut mocks = at_bank();
    let stored = Arc::new(Mutex::new(bank_deposit()));
    let current = stored.clone();
    mocks
        .store
        .expect_get()
        .returning(move |_| Ok(Some(current.lock().unwrap().clone())));
    with_attempts(&mut mocks, vec![unanswered()]);
    expect_claims(&mut mocks, 1, true);
    expect_save_attempt(&mut mocks);
    mocks.store.expect_finish().times(1).returning(move |c| {
        *stored.lock().unwrap() = c.operation.clone();
        Ok(())
    });
    let (waiting, waits) = std::sync::mpsc::channel();
    let waiting = Mutex::new(waiting);
    mocks.clock = MockClock::new();
    mocks.clock.expect_now().return_const(now());
    mocks.clock.expect_sleep().returning(move |duration| {
        waiting.lock().unwrap().send(duration).unwrap();
        Box::pin(futures::future::pending())
    });
    let gateway: Arc<OnceLock<Gateway>> = Arc::default();
    let follower = Arc::new(Mutex::new(None));
    let (in_flight, handle) = (gateway.clone(), follower.clone());
    let waits = Mutex::new(waits);
    mocks
        .acquirer
        .expect_find()
        .times(1)
        .returning(move |_, _| {
            let gateway = in_flight.get().cloned().unwrap();
            *handle.lock().unwrap() = Some(std::thread::spawn(move || {
                block_on(gateway.steps().pay_return(id(1)))
            }));
            let waited = waits
                .lock()
                .unwrap()
                .recv_timeout(Duration::from_secs(10))
                .expect("the second request waits for this read");
            assert_eq!(waited, FOLLOW_WAIT);
            Lookup::Found(payment(PaymentStatus::Succeeded, None))
        });
    assert!(gateway.set(mocks.gateway()).is_ok());
    let gateway = gateway.get().unwrap();

    let leader = block_on(gateway.steps().pay_return(id(1))).unwrap();

    let followed = follower
        .lock()
        .unwrap()
        .take()
        .expect("the second request was made")
        .join()
        .expect("its thread")
        .unwrap();
    assert_eq!(leader.status(), Status::Approved);
    assert_eq!(followed, leader, "the read's result, as stored");
}

#[test]
fn sandbox_operations_have_no_acquirer_pay_page() {
    let mut mocks = at_bank();
    mocks.stored(deposit(id(1)));
    mocks.store.expect_claim_page_read().never();
    assert!(matches!(
        block_on(mocks.gateway().steps().pay_page(id(1))),
        Err(ReadError::NotFound)
    ));
    let mut mocks = at_bank();
    mocks.stored(deposit(id(1)));
    assert!(matches!(
        block_on(mocks.gateway().steps().pay_return(id(1))),
        Err(ReadError::NotFound)
    ));
}
