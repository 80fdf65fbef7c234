//! Fixtures for unit tests: operations, a merchant and a gateway on mockall mocks.

use std::sync::Arc;

use domain::merchant::{Merchant, Secret};
use domain::operation::{Action, Operation, State};
use domain::ports::{
    MockClock, MockDisputeStore, MockIdGenerator, MockMerchantDirectory, MockOperationStore,
    MockPaymentProvider, MockRefundStore, MockRouteTable, ProviderDirectory,
};
use domain::refund::Refund;
use domain::route::{Flow, Route};
use domain::service::{Gateway, Ports};
use domain::testkit::OperationBuilder;
use domain::{
    Amount, Currency, Direction, KeptObject, MerchantId, OperationId, PaymentMethod, RefundId,
    Status, Timestamp,
};
use uuid::Uuid;

/// 2026-11-21T10:00:00Z.
pub fn now() -> Timestamp {
    Timestamp::from_millis(1_795_255_200_000)
}

pub const MERCHANT: &str = "m-1";
pub const DEPOSIT_SECRET: &str = "d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1";
pub const WITHDRAWAL_SECRET: &str =
    "w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2w2";

pub fn merchant() -> Merchant {
    domain::testkit::merchant_with_secrets(
        MERCHANT,
        "Shop",
        Secret::new(DEPOSIT_SECRET),
        Secret::new(WITHDRAWAL_SECRET),
    )
}

pub fn op_id() -> OperationId {
    OperationId::from_uuid(Uuid::from_u128(0x6f1c_0000_0000_4000_8000_0000_0000_0001))
}

fn operation(direction: Direction, method: PaymentMethod, status: Status) -> OperationBuilder {
    let op = match direction {
        Direction::Deposit => OperationBuilder::deposit(method),
        Direction::Withdrawal => OperationBuilder::payout(method),
    };
    op.id(op_id())
        .merchant(MERCHANT)
        .status(status)
        .created(now())
}

/// The id of refund number `n` (of [`refund`]).
pub fn refund_id(n: u128) -> RefundId {
    RefundId::from_uuid(Uuid::from_u128(
        0x7e5d_0000_0000_4000_8000_0000_0000_0000 + n,
    ))
}

/// Refund number `n` of `minor` units of [`deposit`]'s operation: processing at the sandbox,
/// created `n` seconds after [`now`], without merchantRefundId.
pub fn refund(n: u128, minor: i64) -> Refund {
    let at = now().plus_seconds(n as i64);
    Refund {
        id: refund_id(n),
        operation_id: op_id(),
        merchant_id: MerchantId::parse(MERCHANT).expect("valid"),
        merchant_refund_id: None,
        amount: Amount::from_minor(minor).expect("positive"),
        currency: Currency::RUB,
        state: State::Processing,
        callback_url: None,
        provider: "sandbox".into(),
        acquirer_id: None,
        check_at: Some(at.plus_seconds(5)),
        unknown_since: None,
        created_at: at,
        updated_at: at,
        fee: domain::fee::Fee::NONE,
    }
}

/// A card deposit with `status` and `action`.
pub fn deposit(status: Status, action: Option<Action>) -> Operation {
    deposit_builder(status, action).build()
}

/// [`deposit`], to change before building.
pub fn deposit_builder(status: Status, action: Option<Action>) -> OperationBuilder {
    let op = operation(Direction::Deposit, PaymentMethod::Card, status);
    match action {
        Some(action) => op.action(action),
        None => op,
    }
}

/// A card payout with masked requisites and merchantOperationId `order-1`.
pub fn withdrawal(status: Status) -> Operation {
    withdrawal_builder(status).build()
}

/// [`withdrawal`], to change before building.
pub fn withdrawal_builder(status: Status) -> OperationBuilder {
    operation(Direction::Withdrawal, PaymentMethod::Card, status)
        .merchant_operation_id("order-1")
        .requisites(
            KeptObject::new()
                .with("pan", "424242******4242")
                .with("cardholderName", "IVAN IVANOV"),
        )
}

/// A route for every method and direction, in RUB.
pub fn routes() -> Vec<Route> {
    let mut all = Vec::new();
    for direction in Direction::ALL {
        for method in direction.methods() {
            all.push(Route {
                id: all.len() as i64 + 1,
                direction,
                method: *method,
                currency: Currency::RUB,
                min_amount: 1,
                max_amount: 1_000_000_000,
                priority: 100,
                provider: "sandbox".into(),
                flow: Flow::default_for(direction, *method),
                lifetime_secs: None,
                enabled: true,
            });
        }
    }
    all
}

/// The mocks a test gateway runs on: the merchant directory knows [`merchant`], the clock
/// says [`now`], ids are [`op_id`] and [`refund_id`]`(1)`; everything else is up to the test.
pub struct Mocks {
    pub store: MockOperationStore,
    pub refunds: MockRefundStore,
    pub disputes: MockDisputeStore,
    pub merchants: MockMerchantDirectory,
    pub routes: MockRouteTable,
    pub provider: MockPaymentProvider,
}

impl Mocks {
    /// Mocks whose store answers every read with `op` (`None`: no such operation).
    pub fn storing(op: Option<Operation>) -> Self {
        let mut mocks = Mocks::new();
        mocks.store.expect_get().returning(move |_| Ok(op.clone()));
        mocks
    }

    pub fn new() -> Self {
        let mut merchants = MockMerchantDirectory::new();
        merchants
            .expect_merchant()
            .returning(|id| Ok((id.as_str() == MERCHANT).then(merchant)));
        let mut routes = MockRouteTable::new();
        routes.expect_routes().returning(|| Ok(self::routes()));
        Self {
            store: MockOperationStore::new(),
            refunds: MockRefundStore::new(),
            disputes: MockDisputeStore::new(),
            merchants,
            routes,
            provider: MockPaymentProvider::new(),
        }
    }

    pub fn gateway(self) -> Gateway {
        self.gateway_with_providers(Arc::new(domain::testkit::NoAcquirers))
    }

    /// The gateway with `providers` as its directory of acquirers (none by default).
    pub fn gateway_with_providers(self, providers: Arc<dyn ProviderDirectory>) -> Gateway {
        self.gateway_with_acquirers(providers, Arc::new(domain::testkit::NoAcquirers))
    }

    /// The gateway with `providers` as its directory of acquirers, spoken to by `acquirer`.
    pub fn gateway_with_acquirers(
        self,
        providers: Arc<dyn ProviderDirectory>,
        acquirer: Arc<dyn domain::ports::Acquirer>,
    ) -> Gateway {
        let mut clock = MockClock::new();
        clock.expect_now().returning(now);
        let mut ids = MockIdGenerator::new();
        ids.expect_operation_id().returning(op_id);
        ids.expect_refund_id().returning(|| refund_id(1));
        Gateway::new(Ports {
            store: Arc::new(self.store),
            refunds: Arc::new(self.refunds),
            disputes: Arc::new(self.disputes),
            merchants: Arc::new(self.merchants),
            routes: Arc::new(self.routes),
            tariffs: Arc::new(domain::testkit::NoTariffs),
            ledger: Arc::new(domain::testkit::EmptyLedger),
            provider: Arc::new(self.provider),
            providers,
            acquirer,
            clock: Arc::new(clock),
            ids: Arc::new(ids),
            callback_format: Arc::new(domain::testkit::DebugCallbackFormat),
            callbacks: Arc::new(domain::testkit::NoCallbacks),
            qr: Arc::new(domain::testkit::TextQr),
        })
    }
}

impl Default for Mocks {
    fn default() -> Self {
        Self::new()
    }
}

/// An enabled acquirer `name` at `https://acq.example/api` (5 s timeout) with these credentials.
pub fn acquirer(
    name: &str,
    api_key: &str,
    webhook_secret: &str,
) -> domain::provider::AcquirerProvider {
    use domain::provider::{AcquirerProvider, Credentials, ProviderName, ProviderUrl};
    AcquirerProvider {
        name: ProviderName::parse(name).expect("valid"),
        protocol: domain::provider::ProtocolName::from_stored("acquirer".into()),
        url: ProviderUrl::parse("https://acq.example/api", false).expect("valid"),
        credentials: Credentials::new(api_key, webhook_secret).expect("valid"),
        timeout: std::time::Duration::from_secs(5),
        allow_insecure: false,
        enabled: true,
    }
}

/// The object `value` is; panics on any other JSON.
pub fn object(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        _ => panic!("not an object"),
    }
}

/// Sends `req` to `app`: the answer's status, headers and body.
pub async fn send<S, B>(
    app: &S,
    req: actix_web::test::TestRequest,
) -> (
    u16,
    actix_web::http::header::HeaderMap,
    actix_web::web::Bytes,
)
where
    S: actix_web::dev::Service<
        actix_http::Request,
        Response = actix_web::dev::ServiceResponse<B>,
        Error = actix_web::Error,
    >,
    B: actix_web::body::MessageBody,
{
    let res = actix_web::test::call_service(app, req.to_request()).await;
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let body = actix_web::body::to_bytes(res.into_body())
        .await
        .ok()
        .unwrap_or_default();
    (status, headers, body)
}
