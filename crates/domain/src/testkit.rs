//! Test doubles and builders shared by every crate's tests (feature `testkit`; never in a
//! release build): clocks, id generators and an operation builder, in place of the
//! operation literals and clocks each test file used to write out.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;

use crate::acquirer::{
    AcquirerPayment, AcquirerRefund, CallResult, Failure, FailureReason, Lookup, Notification,
    NotificationRefusal, PaymentOrder, PaymentStatus, RefundOrder,
};
use crate::callback::{CallbackBody, CallbackData, RefundCallbackData};
use crate::operation::{
    Action, Decline, DeclineCode, DepositPart, Opening, Operation, OperationUrls, Part, PayoutPart,
    ProviderState, State,
};
use crate::ports::{
    Acquirer, BoxError, CallbackFormat, Clock, IdGenerator, ProviderDirectory, QrEncoder,
    StoreError,
};
use crate::provider::AcquirerProvider;
use crate::{
    Amount, Currency, HttpUrl, KeptObject, MerchantId, MerchantOperationId, OperationId,
    PaymentMethod, RefundId, Status, Timestamp, UserData, UserId,
};

/// Has `store` answer a read of the operation processing the first time and `then` every
/// time after: another writer finished it in between. `operation` builds it in a status.
#[cfg(feature = "mock")]
pub fn finished_meanwhile(
    store: &mut crate::ports::MockOperationStore,
    then: Status,
    operation: impl Fn(Status) -> Operation + Send + 'static,
) {
    let mut reads = 0;
    store.expect_get().returning(move |_| {
        reads += 1;
        let status = if reads == 1 { Status::Processing } else { then };
        Ok(Some(operation(status)))
    });
}

/// A fixed moment tests start from: 2026-11-21T10:00:00Z.
pub const T0: Timestamp = Timestamp::from_millis(1_795_255_200_000);

/// `seconds` after [`T0`] (negative: before).
pub fn at(seconds: i64) -> Timestamp {
    T0.plus_seconds(seconds)
}

/// A clock that stands still until a test moves it.
#[derive(Debug)]
pub struct TestClock(AtomicI64);

impl TestClock {
    /// Standing at `start`.
    pub fn at(start: Timestamp) -> Self {
        Self(AtomicI64::new(start.millis()))
    }

    /// Standing at the wall clock's current time.
    pub fn starting_now() -> Self {
        Self::at(WallClock.now())
    }

    /// Moves the clock `seconds` forward.
    pub fn advance(&self, seconds: i64) {
        self.0.fetch_add(seconds * 1000, Ordering::SeqCst);
    }

    /// Sets the clock to `to`.
    pub fn set(&self, to: Timestamp) {
        self.0.store(to.millis(), Ordering::SeqCst);
    }
}

impl Clock for TestClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_millis(self.0.load(Ordering::SeqCst))
    }

    /// Ready at once: this clock moves only when the test moves it, so a bounded wait on it
    /// is already over.
    fn sleep(&self, _duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(futures::future::ready(()))
    }
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct WallClock;

impl Clock for WallClock {
    fn now(&self) -> Timestamp {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        Timestamp::from_millis(millis)
    }

    /// Ready once `duration` has passed, timed by a thread of its own (the domain has no
    /// runtime of its own to time it with).
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        let (done, slept) = futures::channel::oneshot::channel();
        std::thread::spawn(move || {
            std::thread::sleep(duration);
            // The waiter may have stopped waiting.
            let _ = done.send(());
        });
        Box::pin(async move {
            let _ = slept.await;
        })
    }
}

/// Random (v4) operation and merchant ids.
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomIds;

impl IdGenerator for RandomIds {
    fn operation_id(&self) -> OperationId {
        OperationId::from_uuid(uuid::Uuid::new_v4())
    }

    fn merchant_id(&self) -> MerchantId {
        MerchantId::from_uuid(uuid::Uuid::new_v4())
    }

    fn refund_id(&self) -> RefundId {
        RefundId::from_uuid(uuid::Uuid::new_v4())
    }

    fn dispute_id(&self) -> crate::DisputeId {
        crate::DisputeId::from_uuid(uuid::Uuid::new_v4())
    }

    fn change_id(&self) -> uuid::Uuid {
        uuid::Uuid::new_v4()
    }
}

/// Operation ids 1, 2, 3, ... (as UUIDs), so a test can name the next one; merchant ids and
/// refund ids ([`refund_id`]) and dispute ids ([`dispute_id`]) likewise, each counted apart;
/// change ids are random.
#[derive(Debug, Default)]
pub struct SequentialIds(AtomicU64, AtomicU64, AtomicU64, AtomicU64);

impl IdGenerator for SequentialIds {
    fn operation_id(&self) -> OperationId {
        id(u128::from(self.0.fetch_add(1, Ordering::SeqCst) + 1))
    }

    /// Merchant ids count on their own: 1, 2, 3, ... as UUIDs in text form.
    fn merchant_id(&self) -> MerchantId {
        MerchantId::from_uuid(uuid::Uuid::from_u128(u128::from(
            self.1.fetch_add(1, Ordering::SeqCst) + 1,
        )))
    }

    fn refund_id(&self) -> RefundId {
        refund_id(u128::from(self.2.fetch_add(1, Ordering::SeqCst) + 1))
    }

    fn dispute_id(&self) -> crate::DisputeId {
        dispute_id(u128::from(self.3.fetch_add(1, Ordering::SeqCst) + 1))
    }

    fn change_id(&self) -> uuid::Uuid {
        uuid::Uuid::new_v4()
    }
}

/// The dispute id numbered `n` (above every operation and refund id a test uses).
pub fn dispute_id(n: u128) -> crate::DisputeId {
    crate::DisputeId::from_uuid(uuid::Uuid::from_u128((2 << 64) + n))
}

/// A failure for `reason` with the code the Acquirer API gives it (`declined` for `Other`).
pub fn failure(reason: FailureReason) -> Failure {
    let code = match reason {
        FailureReason::ProviderUnavailable => "provider_unavailable",
        FailureReason::IssuerUnavailable => "issuer_unavailable",
        FailureReason::InsufficientFunds => "insufficient_funds",
        FailureReason::CardDeclined => "card_declined",
        FailureReason::RecipientNotFound => "recipient_not_found",
        FailureReason::Rejected => "rejected",
        FailureReason::Expired => "expired",
        FailureReason::Other => "declined",
    };
    Failure::new(reason, code)
}

/// The refund id numbered `n` (above every operation id a test uses, so never one of them).
pub fn refund_id(n: u128) -> RefundId {
    RefundId::from_uuid(uuid::Uuid::from_u128((1 << 64) + n))
}

/// The operation id numbered `n`.
pub fn id(n: u128) -> OperationId {
    OperationId::from_uuid(uuid::Uuid::from_u128(n))
}

/// A processing refund `n` of `deposit`, of `minor` units paying `fee`, with the sandbox,
/// created at [`T0`].
pub fn refund_of(
    n: u128,
    deposit: &Operation,
    minor: i64,
    fee: crate::fee::Fee,
) -> crate::refund::Refund {
    crate::refund::Refund {
        id: RefundId::from_uuid(uuid::Uuid::from_u128(n)),
        operation_id: deposit.id(),
        merchant_id: deposit.merchant_id().clone(),
        merchant_refund_id: None,
        amount: Amount::from_minor(minor).unwrap_or_else(|e| panic!("{e}")),
        currency: deposit.currency(),
        state: State::Processing,
        callback_url: None,
        provider: crate::provider::SANDBOX.to_string(),
        acquirer_id: None,
        check_at: Some(at(2)),
        unknown_since: None,
        created_at: T0,
        updated_at: T0,
        fee,
    }
}

/// An open appeal `n` for `reason` of `amount` (RUB), of deposit 1 of merchant `m-1`, created
/// at [`T0`].
pub fn appeal_of(
    n: u128,
    amount: &str,
    reason: crate::dispute::AppealReason,
) -> crate::dispute::Dispute {
    crate::dispute::Dispute {
        id: dispute_id(n),
        kind: crate::dispute::DisputeKind::Appeal,
        operation_id: id(1),
        merchant_id: MerchantId::parse("m-1").unwrap_or_else(|e| panic!("{e}")),
        status: crate::dispute::DisputeStatus::Open,
        reason: reason.as_str().to_string(),
        amount: Amount::parse(amount, Currency::RUB).unwrap_or_else(|e| panic!("{e}")),
        currency: Currency::RUB,
        comment: None,
        due_by: None,
        resolution: None,
        created_at: T0,
        updated_at: T0,
    }
}

/// Writes callback bodies as the debug form of their data: for tests that check what a
/// callback says ([`crate::callback::QueuedCallback::data`]), not its wire format.
#[derive(Debug, Clone, Copy, Default)]
pub struct DebugCallbackFormat;

impl CallbackFormat for DebugCallbackFormat {
    fn body(&self, data: &CallbackData) -> CallbackBody {
        CallbackBody::around(format!("{data:?} sequence="), "")
    }

    fn refund_body(&self, data: &RefundCallbackData) -> CallbackBody {
        CallbackBody::around(format!("{data:?} sequence="), "")
    }

    fn dispute_body(&self, dispute: &crate::dispute::Dispute) -> CallbackBody {
        CallbackBody::around(format!("{dispute:?} sequence="), "")
    }
}

/// No tariffs at all: nothing pays a fee, and a tariff cannot be written. For tests of
/// gateways that charge no fees.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTariffs;

#[async_trait::async_trait]
impl crate::ports::TariffStore for NoTariffs {
    async fn terms(
        &self,
        _key: &crate::ports::TariffKey,
    ) -> Result<Option<crate::fee::FeeTerms>, StoreError> {
        Ok(None)
    }

    async fn put_tariff(
        &self,
        _tariff: &crate::fee::Tariff,
        _at: Timestamp,
    ) -> Result<Option<crate::fee::FeeTerms>, StoreError> {
        Err(StoreError::Other(anyhow::anyhow!(
            "this gateway keeps no tariffs"
        )))
    }

    async fn remove_tariff(
        &self,
        _key: &crate::ports::TariffKey,
    ) -> Result<Option<crate::fee::FeeTerms>, StoreError> {
        Ok(None)
    }

    async fn tariffs<'a>(
        &self,
        _merchant: Option<&'a MerchantId>,
    ) -> Result<Vec<crate::fee::Tariff>, StoreError> {
        Ok(Vec::new())
    }
}

/// An outbox with no callbacks: every page is empty and no callback is found to requeue.
/// For tests of gateways whose merchants do not read their callbacks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCallbacks;

#[async_trait::async_trait]
impl crate::ports::CallbackLog for NoCallbacks {
    async fn callbacks(
        &self,
        _query: &crate::callback_log::CallbackQuery,
    ) -> Result<Vec<crate::callback_log::LoggedCallback>, StoreError> {
        Ok(Vec::new())
    }

    async fn requeue(
        &self,
        _owner: &crate::callback_log::CallbackOwner,
        which: &crate::callback_log::Requeue,
        _now: Timestamp,
    ) -> Result<Option<u64>, StoreError> {
        Ok(match which {
            crate::callback_log::Requeue::One(_) => None,
            crate::callback_log::Requeue::Since { .. } => Some(0),
        })
    }
}

/// A ledger with no entries: no transactions, and statements of zeros. For tests of
/// gateways whose ledger nothing reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmptyLedger;

#[async_trait::async_trait]
impl crate::ports::LedgerReader for EmptyLedger {
    async fn transactions(
        &self,
        _query: &crate::transactions::TransactionQuery,
    ) -> Result<Vec<crate::transactions::BalanceTransaction>, StoreError> {
        Ok(Vec::new())
    }

    async fn book(
        &self,
        _merchant: &MerchantId,
        _currency: crate::Currency,
        days: &[crate::statement::Day],
    ) -> Result<crate::statement::Book, StoreError> {
        Ok(crate::statement::Book {
            opening: crate::statement::Held::default(),
            days: days
                .iter()
                .map(|_| (Vec::new(), crate::statement::Held::default()))
                .collect(),
        })
    }

    /// It is the primary.
    async fn read_lag(&self) -> Result<Option<i64>, StoreError> {
        Ok(None)
    }
}

/// No acquirers at all: the directory is empty and every call fails. For tests of gateways
/// that run on the sandbox only.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAcquirers;

#[async_trait::async_trait]
impl ProviderDirectory for NoAcquirers {
    async fn acquirers(&self) -> Result<Vec<AcquirerProvider>, StoreError> {
        Ok(Vec::new())
    }

    async fn acquirer(&self, _name: &str) -> Result<Option<AcquirerProvider>, StoreError> {
        Ok(None)
    }
}

#[async_trait::async_trait]
impl Acquirer for NoAcquirers {
    fn notification_signature_header(&self, _: &AcquirerProvider) -> &'static str {
        "x-test-signature"
    }

    /// It speaks no protocol, so it authenticates no notification.
    fn read_notification(
        &self,
        _: &AcquirerProvider,
        _: &str,
        _: &[u8],
    ) -> Result<Notification, NotificationRefusal> {
        Err(NotificationRefusal::BadSignature)
    }

    async fn create(&self, _: &AcquirerProvider, _: &PaymentOrder) -> CallResult<AcquirerPayment> {
        CallResult::Unavailable("no acquirer in this test".into())
    }

    async fn find(&self, _: &AcquirerProvider, _: OperationId) -> Lookup<AcquirerPayment> {
        Lookup::Failed("no acquirer in this test".into())
    }

    async fn cancel(&self, _: &AcquirerProvider, _: &str) -> Lookup<AcquirerPayment> {
        Lookup::Failed("no acquirer in this test".into())
    }

    async fn refund(&self, _: &AcquirerProvider, _: &RefundOrder) -> CallResult<AcquirerRefund> {
        CallResult::Unavailable("no acquirer in this test".into())
    }

    async fn find_refund(&self, _: &AcquirerProvider, _: RefundId) -> Lookup<AcquirerRefund> {
        Lookup::Failed("no acquirer in this test".into())
    }

    async fn submit_evidence(
        &self,
        _: &AcquirerProvider,
        _: &str,
        _: &crate::acquirer::Evidence,
    ) -> CallResult<crate::acquirer::AcquirerDispute> {
        CallResult::Unavailable("no acquirer in this test".into())
    }

    async fn find_dispute(
        &self,
        _: &AcquirerProvider,
        _: &str,
    ) -> Lookup<crate::acquirer::AcquirerDispute> {
        Lookup::Failed("no acquirer in this test".into())
    }
}

/// An acquirer that takes every payment and never finishes one: creations answer
/// `action_required` (payins, with a page at `{provider url}/pay/{reference}`) or `pending`,
/// reads find the payment in that state, cancels fail, evidence is taken and no dispute is
/// decided. For tests that need operations at an
/// acquirer without a network.
#[derive(Debug, Clone, Copy, Default)]
pub struct PendingAcquirer;

impl PendingAcquirer {
    fn payment(
        provider: &AcquirerProvider,
        reference: OperationId,
        payin: bool,
    ) -> AcquirerPayment {
        AcquirerPayment {
            id: format!("acq_{}", reference.as_uuid().simple()),
            status: if payin {
                PaymentStatus::ActionRequired
            } else {
                PaymentStatus::Pending
            },
            redirect_url: payin.then(|| format!("{}/pay/{reference}", provider.url.as_str())),
            failure: None,
        }
    }
}

#[async_trait::async_trait]
impl Acquirer for PendingAcquirer {
    fn notification_signature_header(&self, provider: &AcquirerProvider) -> &'static str {
        NoAcquirers.notification_signature_header(provider)
    }

    /// As [`NoAcquirers`]: it authenticates no notification.
    fn read_notification(
        &self,
        provider: &AcquirerProvider,
        signature: &str,
        body: &[u8],
    ) -> Result<Notification, NotificationRefusal> {
        NoAcquirers.read_notification(provider, signature, body)
    }

    async fn create(
        &self,
        provider: &AcquirerProvider,
        order: &PaymentOrder,
    ) -> CallResult<AcquirerPayment> {
        let payin = order.direction == crate::Direction::Deposit;
        CallResult::Answered(Self::payment(provider, order.reference, payin))
    }

    async fn find(
        &self,
        provider: &AcquirerProvider,
        reference: OperationId,
    ) -> Lookup<AcquirerPayment> {
        Lookup::Found(Self::payment(provider, reference, false))
    }

    async fn cancel(&self, _: &AcquirerProvider, _: &str) -> Lookup<AcquirerPayment> {
        Lookup::Failed("this test acquirer cancels nothing".into())
    }

    async fn refund(&self, _: &AcquirerProvider, _: &RefundOrder) -> CallResult<AcquirerRefund> {
        CallResult::Unavailable("this test acquirer refunds nothing".into())
    }

    async fn find_refund(&self, _: &AcquirerProvider, _: RefundId) -> Lookup<AcquirerRefund> {
        Lookup::NotFound
    }

    /// Takes the evidence and decides nothing: the dispute answered as still open, with
    /// this one evidence call counted. It keeps no disputes, so the answer tells only what
    /// the gateway reads of it (its id, status and count; amount 0.01, no deadline).
    async fn submit_evidence(
        &self,
        _: &AcquirerProvider,
        dispute_id: &str,
        _: &crate::acquirer::Evidence,
    ) -> CallResult<crate::acquirer::AcquirerDispute> {
        let Ok(amount) = crate::Amount::from_minor(1) else {
            return CallResult::Unavailable("no amount".into());
        };
        CallResult::Answered(crate::acquirer::AcquirerDispute {
            id: dispute_id.to_string(),
            payment_id: String::new(),
            reference: String::new(),
            amount,
            status: crate::acquirer::AcquirerDisputeStatus::Open,
            due_by: None,
            evidence: 1,
        })
    }

    async fn find_dispute(
        &self,
        _: &AcquirerProvider,
        _: &str,
    ) -> Lookup<crate::acquirer::AcquirerDispute> {
        Lookup::NotFound
    }
}

/// "QR codes" that are the text itself, as a `data:text/plain` URI.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextQr;

impl QrEncoder for TextQr {
    fn data_uri(&self, text: &str) -> Result<String, BoxError> {
        Ok(format!("data:text/plain,{text}"))
    }
}

/// Builds an operation: by default a processing 100.00 RUB card operation of merchant
/// `shop` for user `user-1` on route 1, created at [`T0`], with nothing else set.
#[derive(Debug, Clone)]
pub struct OperationBuilder {
    opening: Opening,
    part: Part,
    state: State,
    updated_at: Timestamp,
}

impl OperationBuilder {
    fn new(method: PaymentMethod, part: Part) -> Self {
        Self {
            opening: Opening {
                id: id(1),
                merchant_id: MerchantId::parse("shop").unwrap_or_else(|_| unreachable!()),
                method,
                amount: Amount::from_minor(10_000).unwrap_or_else(|_| unreachable!()),
                currency: Currency::RUB,
                user_id: UserId::parse("user-1").unwrap_or_else(|_| unreachable!()),
                merchant_operation_id: None,
                urls: OperationUrls::default(),
                user_data: UserData::default(),
                route_id: 1,
                provider: crate::provider::SANDBOX.to_string(),
                created_at: T0,
                fee: crate::fee::Fee::NONE,
            },
            part,
            state: State::Processing,
            updated_at: T0,
        }
    }

    /// A processing deposit by `method`.
    pub fn deposit(method: PaymentMethod) -> Self {
        Self::new(method, Part::Deposit(DepositPart::default()))
    }

    /// A processing payout by `method`.
    pub fn payout(method: PaymentMethod) -> Self {
        Self::new(method, Part::Payout(PayoutPart::default()))
    }

    pub fn id(mut self, id: OperationId) -> Self {
        self.opening.id = id;
        self
    }

    /// Pays `fee`.
    pub fn fee(mut self, fee: crate::fee::Fee) -> Self {
        self.opening.fee = fee;
        self
    }

    /// Panics on an invalid id: tests pass literals.
    pub fn merchant(mut self, merchant: &str) -> Self {
        self.opening.merchant_id = MerchantId::parse(merchant).unwrap_or_else(|e| panic!("{e}"));
        self
    }

    /// In `status`; `Declined` with the provider's default decline.
    pub fn status(mut self, status: Status) -> Self {
        self.state = match status {
            Status::Processing => State::Processing,
            Status::Approved => State::Approved,
            Status::Declined => State::Declined(Decline::new(DeclineCode::ProviderDeclined)),
        };
        self
    }

    /// Declined with `decline`.
    pub fn declined(mut self, decline: Decline) -> Self {
        self.state = State::Declined(decline);
        self
    }

    /// Panics on an invalid amount: tests pass literals such as `"100.00"`, in the
    /// operation's currency (set it first for another than RUB).
    pub fn amount(mut self, amount: &str) -> Self {
        self.opening.amount = Amount::parse(amount, self.opening.currency)
            .unwrap_or_else(|e| panic!("{amount}: {e}"));
        self
    }

    pub fn minor(mut self, units: i64) -> Self {
        self.opening.amount = Amount::from_minor(units).unwrap_or_else(|e| panic!("{units}: {e}"));
        self
    }

    pub fn currency(mut self, currency: Currency) -> Self {
        self.opening.currency = currency;
        self
    }

    pub fn user(mut self, user: &str) -> Self {
        self.opening.user_id = UserId::parse(user).unwrap_or_else(|e| panic!("{e}"));
        self
    }

    pub fn merchant_operation_id(mut self, moid: &str) -> Self {
        self.opening.merchant_operation_id =
            Some(MerchantOperationId::parse(moid).unwrap_or_else(|e| panic!("{e}")));
        self
    }

    pub fn no_merchant_operation_id(mut self) -> Self {
        self.opening.merchant_operation_id = None;
        self
    }

    pub fn callback(mut self, url: &str) -> Self {
        self.opening.urls.callback = Some(HttpUrl::parse(url).unwrap_or_else(|e| panic!("{e}")));
        self
    }

    pub fn urls(mut self, urls: OperationUrls) -> Self {
        self.opening.urls = urls;
        self
    }

    pub fn user_data(mut self, user_data: UserData) -> Self {
        self.opening.user_data = user_data;
        self
    }

    /// Panics on a payout: only deposits ask their user for actions.
    pub fn action(mut self, action: Action) -> Self {
        self.deposit_part("a payout has no action").action = Some(action);
        self
    }

    pub fn requisites(mut self, requisites: KeptObject) -> Self {
        match &mut self.part {
            Part::Deposit(deposit) => deposit.requisites = Some(requisites),
            Part::Payout(payout) => payout.requisites = Some(requisites),
        }
        self
    }

    pub fn route(mut self, route_id: i64) -> Self {
        self.opening.route_id = route_id;
        self
    }

    /// With its current attempt at `provider` (default: the sandbox).
    pub fn provider(mut self, provider: &str) -> Self {
        self.opening.provider = provider.to_string();
        self
    }

    /// Created (and last changed) at `at`.
    pub fn created(mut self, at: Timestamp) -> Self {
        self.opening.created_at = at;
        self.updated_at = at;
        self
    }

    /// Last changed at `at`.
    pub fn updated(mut self, at: Timestamp) -> Self {
        self.updated_at = at;
        self
    }

    /// Panics on a payout: payouts never expire.
    pub fn expires(mut self, at: Timestamp) -> Self {
        self.deposit_part("a payout never expires").expires_at = Some(at);
        self
    }

    /// Panics on a deposit: only payouts are polled.
    pub fn due(mut self, at: Timestamp) -> Self {
        self.payout_part("a deposit is never due").due_at = Some(at);
        self
    }

    /// Panics on a deposit.
    pub fn provider_state(mut self, state: &str) -> Self {
        self.payout_part("a deposit has no provider state")
            .provider_state = Some(ProviderState::new(state));
        self
    }

    /// The deposit's part; panics with `refusal` on a payout.
    fn deposit_part(&mut self, refusal: &str) -> &mut DepositPart {
        match &mut self.part {
            Part::Deposit(deposit) => deposit,
            Part::Payout(_) => panic!("{refusal}"),
        }
    }

    /// The payout's part; panics with `refusal` on a deposit.
    fn payout_part(&mut self, refusal: &str) -> &mut PayoutPart {
        match &mut self.part {
            Part::Payout(payout) => payout,
            Part::Deposit(_) => panic!("{refusal}"),
        }
    }

    /// Panics if the method does not fit the kind.
    pub fn build(self) -> Operation {
        Operation::restore(self.opening, self.part, self.state, self.updated_at)
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// An enabled merchant with every method and one secret per direction (version 1, from
/// [`T0`], no end), no timestamp required.
pub fn merchant_with_secrets(
    id: &str,
    name: &str,
    deposit: crate::merchant::Secret,
    withdrawal: crate::merchant::Secret,
) -> crate::merchant::Merchant {
    use crate::merchant::{full_access, KeyRing, Merchant};
    Merchant {
        id: MerchantId::parse(id).expect("a valid merchant id"),
        name: name.into(),
        deposit_keys: KeyRing::single(deposit, T0),
        withdrawal_keys: KeyRing::single(withdrawal, T0),
        access: full_access(),
        enabled: true,
        require_timestamp: false,
        require_signature_v2: false,
    }
}

/// The note of a manual ledger entry made by the CLI user `tester` for `a test`.
pub fn note() -> crate::ledger::ManualNote {
    crate::ledger::ManualNote {
        actor: crate::console::Actor::cli("tester"),
        reason: "a test".to_string(),
    }
}

/// The `n`th UTC day after the epoch, named `date` (statements' tests).
pub fn day(date: &str, n: i64) -> crate::statement::Day {
    crate::statement::Day {
        date: date.to_string(),
        start: Timestamp::from_millis(n * 86_400_000),
        end: Timestamp::from_millis((n + 1) * 86_400_000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_operation_is_a_processing_card_deposit_at_t0() {
        let op = OperationBuilder::deposit(PaymentMethod::Card).build();
        assert_eq!(op.status(), Status::Processing);
        assert_eq!(op.amount().format(op.currency()), "100.00");
        assert_eq!(op.created_at(), T0);
        assert_eq!(T0.to_rfc3339(), "2026-11-21T10:00:00Z");
    }

    #[test]
    fn sequential_ids_count_from_one_and_the_test_clock_moves_when_told() {
        let ids = SequentialIds::default();
        assert_eq!(ids.operation_id(), id(1));
        assert_eq!(ids.operation_id(), id(2));
        let clock = TestClock::at(T0);
        clock.advance(30);
        assert_eq!(clock.now(), at(30));
    }
}
