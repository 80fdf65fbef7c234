//! The simulator's core: the store, the faults and their dice, notifications and timers
//! (disputes and refunds in their own modules).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use time::OffsetDateTime;
use tokio::runtime::Handle;
use tokio::sync::oneshot;

use crate::dice::Dice;
use crate::faults::{BadRate, Faults, FaultsPatch};
use crate::model::{FailureCode, Kind, Payment, Status};
use crate::notify::{Notification, Notifier, Policy};
use crate::rules::{self, Decision, PayoutPlan};
use crate::secret::Secret;
use crate::stats::{self, Reads, Stats};

mod disputes;
mod refunds;
use crate::store::{Cancel, Created, NewPayment, PaymentRefused, Store};

/// Settings the core needs from the configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long payouts and refunds take to settle.
    pub settle: Duration,
    /// How long `timeoutRate` holds an answer.
    pub hold: Duration,
    /// The base of payin page URLs, e.g. `http://127.0.0.1:9100`.
    pub page_base: String,
    /// The bearer token of the Acquirer API.
    pub api_key: Secret,
}

/// The shared state behind both listeners.
pub struct Sim {
    store: Mutex<Store>,
    /// The payment reads answered, for the stats.
    reads: Mutex<Reads>,
    faults: Mutex<Faults>,
    dice: Mutex<Dice>,
    notifier: Notifier,
    settings: Settings,
    runtime: Handle,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

/// The JSON bytes of a notification body.
fn body_bytes(body: &serde_json::Value) -> Vec<u8> {
    body.to_string().into_bytes()
}

impl Sim {
    /// A simulator with no payments yet; timers and notifications run on `runtime`.
    pub fn new(
        settings: Settings,
        faults: Faults,
        dice: Dice,
        notifier: Notifier,
        runtime: Handle,
    ) -> Arc<Self> {
        Arc::new(Self {
            store: Mutex::new(Store::default()),
            reads: Mutex::new(Reads::default()),
            faults: Mutex::new(faults),
            dice: Mutex::new(dice),
            notifier,
            settings,
            runtime,
        })
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The current fault set.
    pub fn faults(&self) -> Faults {
        lock(&self.faults).clone()
    }

    /// Applies a partial fault update and answers the whole set.
    pub fn update_faults(&self, patch: FaultsPatch) -> Result<Faults, BadRate> {
        let mut faults = lock(&self.faults);
        faults.apply(patch)?;
        Ok(faults.clone())
    }

    /// Rolls against the rate `pick` reads from the current faults.
    pub fn roll(&self, pick: impl FnOnce(&Faults) -> f64) -> bool {
        let rate = pick(&lock(&self.faults));
        lock(&self.dice).hit(rate)
    }

    fn policy(&self) -> Policy {
        let faults = self.faults();
        let mut dice = lock(&self.dice);
        Policy {
            drop: dice.hit(faults.drop_notify_rate),
            duplicate: dice.hit(faults.duplicate_notify_rate),
            reorder: faults.reorder_notify,
        }
    }

    /// The injected decline for a creation, if the dice say so.
    fn injected_decline(&self) -> Option<FailureCode> {
        let faults = self.faults();
        lock(&self.dice)
            .hit(faults.decline_rate)
            .then_some(faults.decline_code)
    }

    fn notify_payment(&self, payment: &Payment) {
        drop(self.notify_payment_tracked(payment));
    }

    /// Queues the payment's notification; the receiver fires after its first attempt.
    fn notify_payment_tracked(&self, payment: &Payment) -> oneshot::Receiver<()> {
        let Some(url) = payment.order.notify_url.clone() else {
            return oneshot::channel().1;
        };
        let notification = Notification {
            object: payment.id.clone(),
            url,
            body: body_bytes(&payment.notification()),
            is_final: payment.progress.status.is_final(),
        };
        self.notifier.send(notification, self.policy())
    }

    fn after(self: &Arc<Self>, delay: Duration, then: impl FnOnce(&Arc<Sim>) + Send + 'static) {
        let sim = self.clone();
        self.runtime.spawn(async move {
            tokio::time::sleep(delay).await;
            then(&sim);
        });
    }

    /// Creates a payment (or answers the existing one); visible to reads on return.
    pub fn create_payment(
        self: &Arc<Self>,
        new: NewPayment,
    ) -> Result<Created<Payment>, PaymentRefused> {
        let mut store = lock(&self.store);
        let created = store.create_payment(new, now(), |new| self.initial_status(new))?;
        if let Created::New(payment) = &created {
            // Queued under the store's lock so that no later status is notified first.
            self.notify_payment(payment);
            self.schedule(payment);
        }
        Ok(created)
    }

    fn initial_status(&self, new: &NewPayment) -> (Status, Option<FailureCode>) {
        let plan = match (new.kind, &new.recipient) {
            (Kind::Payout, Some(recipient)) => rules::payout_plan(new.amount, recipient),
            (Kind::Payin, _) if rules::declined_amount(new.amount) => {
                PayoutPlan::FailNow(FailureCode::Declined)
            }
            (Kind::Payin, _) | (Kind::Payout, None) => PayoutPlan::Settle(None),
        };
        if let PayoutPlan::FailNow(code) = plan {
            return (Status::Failed, Some(code));
        }
        if let Some(code) = self.injected_decline() {
            return (Status::Failed, Some(code));
        }
        match new.kind {
            Kind::Payin => (Status::ActionRequired, None),
            Kind::Payout => (Status::Pending, None),
        }
    }

    fn schedule(self: &Arc<Self>, payment: &Payment) {
        let id = payment.id.clone();
        match (payment.order.kind, payment.progress.status) {
            (Kind::Payout, Status::Pending) => {
                let failure = match payment
                    .order
                    .recipient
                    .as_ref()
                    .map(|r| rules::payout_plan(payment.order.amount, r))
                {
                    Some(PayoutPlan::Settle(failure)) => failure,
                    Some(PayoutPlan::FailNow(code)) => Some(code),
                    None => None,
                };
                self.after(self.settings.settle, move |sim| {
                    sim.settle_payout(&id, failure)
                });
            }
            (Kind::Payin, Status::ActionRequired) => {
                if let Some(expires_at) = payment.order.expires_at {
                    let delay = (expires_at - now()).max(time::Duration::ZERO);
                    let delay = Duration::try_from(delay).unwrap_or_default();
                    self.after(delay, move |sim| sim.expire_payin(&id));
                }
            }
            // Final at creation, or states a new payment never starts in: nothing to schedule.
            (Kind::Payout, Status::ActionRequired)
            | (Kind::Payin, Status::Pending)
            | (_, Status::Succeeded | Status::Failed | Status::Canceled) => {}
        }
    }

    fn settle_payout(&self, id: &str, failure: Option<FailureCode>) {
        let mut store = lock(&self.store);
        if let Some(payment) = store.settle::<Payment>(id, failure, now()) {
            self.notify_payment(&payment);
        }
    }

    fn expire_payin(&self, id: &str) {
        let mut store = lock(&self.store);
        if let Some(payment) = store.expire_payin(id, now()) {
            self.notify_payment(&payment);
        }
    }

    /// A payment by id.
    pub fn payment(&self, id: &str) -> Option<Payment> {
        lock(&self.store).payments().get(id).cloned()
    }

    /// A payment by reference.
    pub fn payment_by_reference(&self, reference: &str) -> Option<Payment> {
        lock(&self.store)
            .payments()
            .by_reference(reference)
            .cloned()
    }

    /// Cancels a payment that is not final.
    pub fn cancel(&self, id: &str) -> Cancel {
        let mut store = lock(&self.store);
        let answer = store.cancel(id, now());
        if let Cancel::Canceled(payment) = &answer {
            self.notify_payment(payment);
        }
        answer
    }

    /// Finishes a waiting payin with the payer's choice; `None` if unknown, `Err` with the
    /// payment if it was not waiting. The receiver fires after the first notification attempt.
    pub fn complete_payin(
        &self,
        id: &str,
        decision: Decision,
        pan: Option<&str>,
    ) -> Option<(Result<Payment, Payment>, oneshot::Receiver<()>)> {
        let mut store = lock(&self.store);
        if store.payments().get(id)?.order.kind != Kind::Payin {
            let payment = store.payments().get(id)?.clone();
            return Some((Err(payment), oneshot::channel().1));
        }
        let failure = rules::payin_outcome(decision, pan);
        match store.complete_payin(id, failure, now())? {
            Ok(payment) => {
                let notified = self.notify_payment_tracked(&payment);
                Some((Ok(payment), notified))
            }
            Err(payment) => Some((Err(payment), oneshot::channel().1)),
        }
    }

    /// Counts a read of the payment with `reference` answered by the API.
    pub fn record_read(&self, reference: &str) {
        lock(&self.reads).record(reference);
    }

    /// What has been paid out and refunded, and the payment reads answered.
    pub fn stats(&self) -> Stats {
        let reads = lock(&self.reads).clone();
        stats::collect(&lock(&self.store), reads)
    }
}
