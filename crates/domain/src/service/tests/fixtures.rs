//! A merchant with full access, a route per method and direction, a fixed clock and fixed ids.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::executor::block_on;
use uuid::Uuid;

use crate::callback::QueuedCallback;
use crate::ledger::BalanceMove;
use crate::merchant::{Merchant, Secret};
use crate::operation::{Action, Decline, DeclineCode, Operation, Outcome};
use crate::ports::{
    Completion, FinishError, InsertError, MockAcquirer, MockClock, MockDisputeStore,
    MockIdGenerator, MockMerchantDirectory, MockOperationStore, MockPaymentProvider,
    MockProviderDirectory, MockQrEncoder, MockRefundStore, MockRouteTable, MockTariffStore,
    NewOperation, StoreError,
};
use crate::request::{NewDeposit, NewWithdrawal, RawRequest};
use crate::route::{Flow, Route};
use crate::service::{CompleteError, CreateError, Created, Gateway, Ports, StepError};
pub use crate::testkit::{DebugCallbackFormat, OperationBuilder};
use crate::{
    Currency, Direction, MerchantId, MerchantOperationId, OperationId, PaymentMethod, Status,
    Timestamp,
};

pub use crate::operation::{OperationUrls, ProviderState};
pub use crate::KeptObject;

/// 2026-11-21T10:00:00Z.
pub const NOW_MS: i64 = 1_795_255_200_000;
pub const CALLBACK_URL: &str = "https://shop.example/callbacks";
pub const MOID: &str = "order-1";
pub const CANONICAL: &[u8] = br#"{"amount":"100.00"}"#;

pub fn now() -> Timestamp {
    Timestamp::from_millis(NOW_MS)
}

/// The id the fixed id generator hands out.
/// What a queued save answers when asked whether it was committed.
pub fn committed(yes: bool) -> crate::ports::SaveCommitted {
    use futures::FutureExt;
    futures::future::ready(yes).boxed().shared()
}

pub fn new_id() -> OperationId {
    OperationId::from_uuid(Uuid::from_u128(0x6f1c_0000_0000_4000_8000_0000_0000_0001))
}

/// The id of an operation that already exists.
pub fn existing_id() -> OperationId {
    OperationId::from_uuid(Uuid::from_u128(0x6f1c_0000_0000_4000_8000_0000_0000_0099))
}

pub fn id(n: u128) -> OperationId {
    OperationId::from_uuid(Uuid::from_u128(
        0x7a00_0000_0000_4000_8000_0000_0000_0000 + n,
    ))
}

pub fn merchant() -> Merchant {
    crate::testkit::merchant_with_secrets(
        "m-1",
        "Shop",
        Secret::new("d".repeat(64)),
        Secret::new("w".repeat(64)),
    )
}

pub fn other_merchant() -> Merchant {
    Merchant {
        id: MerchantId::parse("m-2").unwrap(),
        name: "Other".into(),
        ..merchant()
    }
}

pub fn moid() -> MerchantOperationId {
    MerchantOperationId::parse(MOID).unwrap()
}

/// Route ids: deposits 1..=6 in method order, withdrawals 11 (card) and 12 (sbp).
pub fn routes() -> Vec<Route> {
    let mut all = Vec::new();
    for (i, method) in PaymentMethod::ALL.into_iter().enumerate() {
        all.push(route(1 + i as i64, Direction::Deposit, method));
    }
    all.push(route(11, Direction::Withdrawal, PaymentMethod::Card));
    all.push(route(12, Direction::Withdrawal, PaymentMethod::Sbp));
    all
}

pub fn route(id: i64, direction: Direction, method: PaymentMethod) -> Route {
    Route {
        id,
        direction,
        method,
        currency: Currency::RUB,
        min_amount: 1,
        max_amount: 1_000_000_000,
        priority: 100,
        provider: "sandbox".into(),
        flow: Flow::default_for(direction, method),
        lifetime_secs: None,
        enabled: true,
    }
}

/// The fixed clock's wait: over at once, as the clock does not move by itself.
fn stood_still() -> futures::future::BoxFuture<'static, ()> {
    Box::pin(futures::future::ready(()))
}

/// The mocks one gateway runs on; fields are public so a test can swap one before `gateway()`.
pub struct Mocks {
    pub store: MockOperationStore,
    pub refunds: MockRefundStore,
    pub disputes: MockDisputeStore,
    pub merchants: MockMerchantDirectory,
    pub routes: MockRouteTable,
    /// No tariff for anything unless a test sets one ([`Mocks::set_tariff`]).
    pub tariffs: MockTariffStore,
    pub provider: MockPaymentProvider,
    pub providers: MockProviderDirectory,
    pub acquirer: MockAcquirer,
    pub qr: MockQrEncoder,
    pub clock: MockClock,
    pub ids: MockIdGenerator,
}

impl Mocks {
    /// Clock at [`now`], ids from [`new_id`], the route table of [`routes`]; nothing else expected.
    pub fn new() -> Self {
        let mut mocks = Self {
            store: MockOperationStore::new(),
            refunds: MockRefundStore::new(),
            disputes: MockDisputeStore::new(),
            merchants: MockMerchantDirectory::new(),
            routes: MockRouteTable::new(),
            tariffs: MockTariffStore::new(),
            provider: MockPaymentProvider::new(),
            providers: MockProviderDirectory::new(),
            acquirer: MockAcquirer::new(),
            qr: MockQrEncoder::new(),
            clock: MockClock::new(),
            ids: MockIdGenerator::new(),
        };
        mocks.clock.expect_now().return_const(now());
        mocks.clock.expect_sleep().returning(|_| stood_still());
        mocks.tariffs.expect_terms().returning(|_| Ok(None));
        mocks.ids.expect_operation_id().return_const(new_id());
        mocks.set_routes(routes());
        mocks
    }

    pub fn set_routes(&mut self, table: Vec<Route>) {
        self.routes = MockRouteTable::new();
        self.routes
            .expect_routes()
            .returning(move || Ok(table.clone()));
    }

    /// Every tariff read of `direction` answers `terms` (for any merchant, method and
    /// currency); the other directions have none.
    pub fn set_tariff(&mut self, direction: crate::fee::FeeDirection, terms: crate::fee::FeeTerms) {
        self.tariffs = MockTariffStore::new();
        self.tariffs
            .expect_terms()
            .returning(move |key| Ok((key.direction == direction).then_some(terms)));
    }

    pub fn set_clock(&mut self, at: Timestamp) {
        self.clock = MockClock::new();
        self.clock.expect_now().return_const(at);
        self.clock.expect_sleep().returning(|_| stood_still());
    }

    pub fn gateway(mut self) -> Gateway {
        let clock = Arc::new(std::mem::replace(&mut self.clock, MockClock::new()));
        self.gateway_on(clock)
    }

    /// The gateway on these mocks with another clock (one a test moves, say).
    pub fn gateway_on(self, clock: Arc<dyn crate::ports::Clock>) -> Gateway {
        Gateway::new(Ports {
            store: Arc::new(self.store),
            refunds: Arc::new(self.refunds),
            disputes: Arc::new(self.disputes),
            merchants: Arc::new(self.merchants),
            routes: Arc::new(self.routes),
            tariffs: Arc::new(self.tariffs),
            ledger: Arc::new(crate::testkit::EmptyLedger),
            provider: Arc::new(self.provider),
            providers: Arc::new(self.providers),
            acquirer: Arc::new(self.acquirer),
            clock,
            ids: Arc::new(self.ids),
            callback_format: Arc::new(DebugCallbackFormat),
            callbacks: Arc::new(crate::testkit::NoCallbacks),
            qr: Arc::new(self.qr),
        })
    }

    /// These mocks after `setup`, such as a provider's answer.
    pub fn with(mut self, setup: impl FnOnce(&mut Mocks)) -> Self {
        setup(&mut self);
        self
    }

    /// Creates the deposit `request` on a store that takes the insert: the answer and what was
    /// inserted.
    pub fn stores_deposit(mut self, request: NewDeposit) -> (Created, NewOperation) {
        let inserted = self.expect_insert(|| Ok(()));
        let created = self.create_deposit(request).unwrap();
        (created, inserted.one())
    }

    /// Creates the withdrawal `request` on a store that takes the insert: the answer and what
    /// was inserted.
    pub fn stores_withdrawal(mut self, request: NewWithdrawal) -> (Created, NewOperation) {
        let inserted = self.expect_insert(|| Ok(()));
        let created = self.create_withdrawal(request).unwrap();
        (created, inserted.one())
    }

    /// `create_deposit` of `request` by [`merchant`], signed over [`CANONICAL`].
    pub fn create_deposit(self, request: NewDeposit) -> Result<Created, CreateError> {
        deposit_by(&self.gateway(), &merchant(), request)
    }

    /// `create_withdrawal` of `request` by [`merchant`], signed over [`CANONICAL`].
    pub fn create_withdrawal(self, request: NewWithdrawal) -> Result<Created, CreateError> {
        block_on(
            self.gateway()
                .creation()
                .create_withdrawal(&merchant(), request, CANONICAL),
        )
    }

    /// `complete(id, outcome)`.
    pub fn complete(self, id: OperationId, outcome: Outcome) -> Result<Operation, CompleteError> {
        block_on(self.gateway().answers().complete(id, outcome))
    }

    /// Completes the stored `op` with `outcome` on a store that finishes it once: the answer and
    /// the completion handed to the store.
    pub fn finishing(
        mut self,
        op: Operation,
        outcome: Outcome,
    ) -> (Result<Operation, CompleteError>, Completion) {
        let id = op.id();
        self.stored(op);
        let finished = self.expect_finish(1, || Ok(()));
        let result = self.complete(id, outcome);
        (result, finished.one())
    }

    /// `confirm` of operation `id(1)` with `code` by `who`.
    pub fn confirm(self, who: &Merchant, code: &str) -> Result<Operation, StepError> {
        block_on(self.gateway().steps().confirm(who, id(1), code))
    }

    /// `submit_input` of `values` to operation `id(1)` by [`merchant`].
    pub fn submit_input(self, values: BTreeMap<String, String>) -> Result<Operation, StepError> {
        block_on(
            self.gateway()
                .steps()
                .submit_input(&merchant(), id(1), values),
        )
    }

    /// Expects one insert answering `result`; returns what was inserted.
    pub fn expect_insert(
        &mut self,
        result: impl Fn() -> Result<(), InsertError> + Send + 'static,
    ) -> Captured<NewOperation> {
        let seen = Captured::default();
        self.store
            .expect_insert()
            .times(1)
            .returning(seen.answering(result));
        seen
    }

    /// Expects `times` finishes answering `result`; returns every completion handed over.
    pub fn expect_finish(
        &mut self,
        times: usize,
        result: impl Fn() -> Result<(), FinishError> + Send + 'static,
    ) -> Captured<Completion> {
        let seen = Captured::default();
        self.store
            .expect_finish()
            .times(times)
            .returning(seen.answering(result));
        seen
    }

    /// The store answers `get(op.id())` with `op`.
    pub fn stored(&mut self, op: Operation) {
        let id = op.id();
        self.store
            .expect_get()
            .withf(move |asked| *asked == id)
            .returning(move |_| Ok(Some(op.clone())));
    }

    /// The store knows an earlier operation of `direction` with [`MOID`], created by `canonical`.
    pub fn earlier(&mut self, direction: Direction, op: Operation, canonical: &'static [u8]) {
        let merchant = merchant();
        let fingerprint =
            crate::signature::Fingerprint::of(merchant.keys(direction).newest(), canonical);
        self.store
            .expect_find_by_merchant_operation_id()
            .withf(move |m, d, moid| *m == merchant.id && *d == direction && moid.as_str() == MOID)
            .times(1)
            .returning(move |_, _, _| Ok(Some((op.clone(), Some(fingerprint.clone())))));
    }

    /// No deposit reaches the provider and nothing is written.
    pub fn expect_no_deposit_started(&mut self) {
        self.provider.expect_start_deposit().never();
        self.expect_no_store_writes();
    }

    pub fn expect_no_store_writes(&mut self) {
        self.store.expect_insert().never();
        self.store.expect_finish().never();
        self.store.expect_replace_action().never();
        self.store.expect_advance().never();
    }
}

/// Completes `op` with `outcome`, which must succeed: the final operation and its completion.
pub fn completed(op: Operation, outcome: Outcome) -> (Operation, Completion) {
    let (result, completion) = Mocks::new().finishing(op, outcome);
    (result.unwrap(), completion)
}

/// `done` is declined with `code`, moved no money and queued its callback.
pub fn assert_declined_without_moves(done: &Operation, completion: &Completion, code: DeclineCode) {
    assert_eq!(done.status(), Status::Declined);
    assert_eq!(done.decline(), Some(&Decline::new(code)));
    assert!(completion.moves.is_empty());
    assert!(completion.callback.is_some());
}

/// The creation answered `earlier` as a replay, creating nothing new.
pub fn assert_replay_of(created: &Created, earlier: &Operation) {
    assert!(created.replayed);
    assert_eq!(&created.operation, earlier);
}

/// The callback reports a decline with `code`.
pub fn assert_callback_declined(callback: &QueuedCallback, code: DeclineCode) {
    assert_eq!(callback.data.status, Status::Declined);
    assert_eq!(callback.data.decline.as_ref().map(|d| d.code), Some(code));
}

/// `create_deposit` of `request` by `who` on `gateway`, signed over [`CANONICAL`].
pub fn deposit_by(
    gateway: &Gateway,
    who: &Merchant,
    request: NewDeposit,
) -> Result<Created, CreateError> {
    block_on(gateway.creation().create_deposit(who, request, CANONICAL))
}

/// Values a mock saw, shared with the test.
#[derive(Clone)]
pub struct Captured<T>(Arc<Mutex<Vec<T>>>);

impl<T> Default for Captured<T> {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(Vec::new())))
    }
}

impl<T: Clone> Captured<T> {
    pub fn push(&self, value: T) {
        self.0.lock().unwrap().push(value);
    }

    pub fn all(&self) -> Vec<T> {
        self.0.lock().unwrap().clone()
    }

    /// The only value seen.
    pub fn one(&self) -> T {
        let all = self.all();
        assert_eq!(all.len(), 1, "expected exactly one call");
        all[0].clone()
    }

    /// A mock's answer that keeps a copy of what it is handed and returns `result()`.
    pub fn answering<R>(
        &self,
        result: impl Fn() -> R + Send + 'static,
    ) -> impl FnMut(&T) -> R + Send + 'static
    where
        T: Send + 'static,
    {
        let sink = self.clone();
        move |value| {
            sink.push(value.clone());
            result()
        }
    }
}

pub fn unavailable() -> StoreError {
    StoreError::Unavailable("connection refused".into())
}

/// The fields both kinds of request share; `moid` and `callback` add those optional fields.
fn raw_request<'a>(amount: &'a str, method: &'a str, moid: bool, callback: bool) -> RawRequest<'a> {
    RawRequest {
        amount: Some(amount),
        currency: Some("RUB"),
        payment_method: Some(method),
        user_id: Some("user-7"),
        merchant_operation_id: moid.then_some(MOID),
        callback_url: callback.then_some(CALLBACK_URL),
        ..RawRequest::default()
    }
}

/// A deposit request; `moid` and `callback` add those optional fields.
pub fn deposit_request(amount: &str, method: &str, moid: bool, callback: bool) -> NewDeposit {
    NewDeposit::parse(&raw_request(amount, method, moid, callback)).unwrap()
}

/// A withdrawal request with valid requisites for `method` (`card` or `sbp`).
pub fn withdrawal_request(amount: &str, method: &str, moid: bool, callback: bool) -> NewWithdrawal {
    let requisites = match method {
        "card" => KeptObject::new()
            .with("pan", "4242424242424242")
            .with("cardholderName", "IVAN IVANOV"),
        _ => KeptObject::new()
            .with("phone", "+79001234567")
            .with("accountName", "Ivan Ivanov")
            .with("bankName", "Bank A"),
    };
    NewWithdrawal::parse(&RawRequest {
        requisites: Some(&requisites),
        ..raw_request(amount, method, moid, callback)
    })
    .unwrap()
}

/// A processing card deposit of 100.00 RUB created a minute ago, waiting on a redirect
/// for nine more minutes.
pub fn deposit(id: OperationId) -> Operation {
    deposit_builder(id).build()
}

/// [`deposit`], to change before building.
pub fn deposit_builder(id: OperationId) -> OperationBuilder {
    ours(OperationBuilder::deposit(PaymentMethod::Card), id)
        .action(Action::Redirect {
            url: format!("http://127.0.0.1:8080/pay/{id}"),
        })
        .expires(now().plus_seconds(540))
}

/// A processing card payout of 250.00 RUB, due now.
pub fn payout(id: OperationId) -> Operation {
    payout_builder(id).build()
}

/// [`payout`], to change before building.
pub fn payout_builder(id: OperationId) -> OperationBuilder {
    ours(OperationBuilder::payout(PaymentMethod::Card), id)
        .amount("250.00")
        .route(11)
        .due(now())
        .provider_state(r#"{"plan":"approve"}"#)
}

/// `base` under `id`: [`merchant`]'s, for user-7, with [`MOID`] and [`CALLBACK_URL`], created a
/// minute ago.
fn ours(base: OperationBuilder, id: OperationId) -> OperationBuilder {
    base.id(id)
        .merchant(merchant().id.as_str())
        .user("user-7")
        .merchant_operation_id(MOID)
        .callback(CALLBACK_URL)
        .created(now().plus_seconds(-60))
}

/// Values for the input-fields step.
pub fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The sum of (available, held) over `moves`.
pub fn net(moves: &[BalanceMove]) -> (i64, i64) {
    moves
        .iter()
        .fold((0, 0), |(a, h), m| (a + m.available, h + m.held))
}

/// An enabled acquirer `name` at `http://127.0.0.1:9100` with calls bounded by `timeout_secs`.
pub fn acquirer(name: &str, timeout_secs: u64) -> crate::provider::AcquirerProvider {
    use crate::provider::{AcquirerProvider, Credentials, ProviderName, ProviderUrl};
    AcquirerProvider {
        name: ProviderName::parse(name).unwrap(),
        protocol: crate::provider::ProtocolName::from_stored("acquirer".into()),
        url: ProviderUrl::parse("http://127.0.0.1:9100", false).unwrap(),
        credentials: Credentials {
            api_key: Secret::new("key"),
            webhook_secret: Secret::new("whsec"),
        },
        timeout: std::time::Duration::from_secs(timeout_secs),
        allow_insecure: false,
        enabled: true,
    }
}
