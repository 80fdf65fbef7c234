//! Merchants, balances, requests and operations to test with.

use std::time::Duration;

use adapters_db::Database;
use domain::attempt::Attempt;
use domain::ledger::{manual_move, Balance, BalanceMove};
use domain::merchant::{full_access, Merchant, Secret};
use domain::operation::{Decline, DeclineCode, Operation, OperationUrls};
use domain::operator::NewMerchant;
use domain::ports::{Clock, OperationStore, OperatorStore};
use domain::provider::{AcquirerProvider, Credentials, ProviderName, ProviderUrl};
use domain::request::{Common, NewDeposit, NewWithdrawal};
use domain::testkit::{DebugCallbackFormat, OperationBuilder};
use domain::{
    Amount, Currency, MerchantId, MerchantOperationId, OperationId, PaymentMethod, Timestamp,
    UserData, UserId, WithdrawalRequisites,
};

use crate::doubles::{operator, SystemClock};

/// 64 hex characters, like the CLI makes.
pub fn secret(seed: char) -> Secret {
    Secret::new(seed.to_string().repeat(64))
}

/// A new enabled merchant with every method.
pub async fn merchant(db: &Database) -> Merchant {
    let ops = operator(db);
    ops.create_merchant(NewMerchant {
        id: None,
        name: format!("shop-{}", uuid::Uuid::new_v4().simple()),
        access: full_access(),
        deposit_secret: secret('d'),
        withdrawal_secret: secret('w'),
        require_timestamp: false,
        require_signature_v2: false,
    })
    .await
    .expect("create merchant")
}

pub fn now() -> Timestamp {
    SystemClock.now()
}

pub fn rub(minor: i64) -> Amount {
    Amount::from_minor(minor).expect("positive amount")
}

/// A move by hand of `minor` units of RUB for `merchant`, now: a credit or a debit.
pub fn rub_move(merchant: MerchantId, minor: i64, credit: bool) -> BalanceMove {
    manual_move(merchant, Currency::RUB, rub(minor), credit, now())
}

/// Credits `minor` units of RUB by hand.
pub async fn credit(db: &Database, merchant: &Merchant, minor: i64) {
    let mv = rub_move(merchant.id.clone(), minor, true);
    db.apply_manual_move(&mv, &domain::testkit::note())
        .await
        .expect("credit");
}

/// Applies `mv`, which must be accepted: the balance after it.
pub async fn applied(db: &Database, mv: &BalanceMove) -> Balance {
    let entry = db.apply_manual_move(mv, &domain::testkit::note()).await;
    entry.expect("the move applied").balance
}

/// A credit to the unknown merchant `nobody` is refused, naming it.
pub async fn assert_nobody_is_refused(db: &Database) {
    let nobody = MerchantId::parse("nobody").expect("id");
    let refused = db
        .apply_manual_move(&rub_move(nobody, 1, true), &domain::testkit::note())
        .await
        .expect_err("unknown merchant");
    assert!(
        refused.to_string().contains("unknown merchant nobody"),
        "{refused}"
    );
}

/// A new merchant ([`merchant`]) credited with `minor` units of RUB.
pub async fn funded_merchant(db: &Database, minor: i64) -> Merchant {
    let shop = merchant(db).await;
    credit(db, &shop, minor).await;
    shop
}

/// (available, held) in RUB, zeros if there is no balance yet.
pub async fn balance(db: &Database, merchant: &Merchant) -> (i64, i64) {
    let all = db.balances(&merchant.id).await.expect("balances");
    all.iter()
        .find(|b| b.currency == Currency::RUB)
        .map_or((0, 0), |b| (b.available, b.held))
}

fn common(method: PaymentMethod, minor: i64, moid: Option<&str>, callback: bool) -> Common {
    Common {
        amount: rub(minor),
        currency: Currency::RUB,
        method,
        user_id: UserId::parse("user-1").expect("user id"),
        merchant_operation_id: moid.map(|m| MerchantOperationId::parse(m).expect("moid")),
        urls: OperationUrls {
            callback: callback
                .then(|| domain::HttpUrl::parse("https://shop.example/cb").expect("url")),
            ..OperationUrls::default()
        },
        user_data: UserData::default(),
    }
}

pub fn withdrawal(minor: i64, moid: Option<&str>) -> NewWithdrawal {
    NewWithdrawal {
        common: common(PaymentMethod::Card, minor, moid, true),
        requisites: WithdrawalRequisites::card(Some("4242424242424242"), Some("IVAN PETROV"))
            .expect("card requisites"),
    }
}

pub fn deposit(minor: i64, moid: Option<&str>) -> NewDeposit {
    NewDeposit {
        common: common(PaymentMethod::Card, minor, moid, true),
        requisites: None,
    }
}

/// A processing operation of the merchant, on route 1 (deposits) or 7 (withdrawals), with a
/// callback URL; direct store tests build on it.
pub fn operation(merchant: &Merchant, direction: domain::Direction, minor: i64) -> Operation {
    operation_builder(merchant, direction, minor).build()
}

/// [`operation`], to change before building.
pub fn operation_builder(
    merchant: &Merchant,
    direction: domain::Direction,
    minor: i64,
) -> OperationBuilder {
    let op = match direction {
        domain::Direction::Deposit => OperationBuilder::deposit(PaymentMethod::Card).route(1),
        domain::Direction::Withdrawal => OperationBuilder::payout(PaymentMethod::Card).route(7),
    };
    op.id(OperationId::from_uuid(uuid::Uuid::new_v4()))
        .merchant(merchant.id.as_str())
        .minor(minor)
        .callback("https://shop.example/cb")
        .created(now())
}

/// A card deposit of 1.00 RUB by `merchant` that expires at `at`.
pub fn deposit_expiring(merchant: &Merchant, at: Timestamp) -> Operation {
    let op = operation_builder(merchant, domain::Direction::Deposit, 1_00);
    op.expires(at).build()
}

/// A card payout of 1.00 RUB by `merchant` due at `at`.
pub fn payout_due(merchant: &Merchant, at: Timestamp) -> Operation {
    let op = operation_builder(merchant, domain::Direction::Withdrawal, 1_00);
    op.due(at).build()
}

/// Stores `op` with no moves and no callback.
pub async fn insert_plain(db: &Database, op: &Operation) {
    let new = domain::ports::NewOperation {
        operation: op.clone(),
        fingerprint: None,
        moves: Vec::new(),
        callback: None,
        attempts: Vec::new(),
    };
    db.insert(&new).await.expect("insert");
}

/// Stores `n` deposits declined at creation, each with a callback queued at `at`.
pub async fn queue_callbacks(
    db: &Database,
    merchant: &Merchant,
    n: usize,
    at: Timestamp,
) -> Vec<OperationId> {
    let mut ids = Vec::new();
    for _ in 0..n {
        let op = operation(merchant, domain::Direction::Deposit, 1_00);
        let decline =
            domain::operation::Outcome::Decline(Decline::new(DeclineCode::PaymentRejected));
        let done = op.finish(&decline, at).expect("processing");
        let new = domain::ports::NewOperation {
            callback: domain::service::callbacks::callback_for(&done, &DebugCallbackFormat),
            operation: done,
            fingerprint: None,
            moves: Vec::new(),
            attempts: Vec::new(),
        };
        db.insert(&new).await.expect("insert");
        ids.push(op.id());
    }
    ids
}

/// `op` as an operation whose current attempt is with `provider`.
pub fn at_provider(op: Operation, provider: &str) -> Operation {
    Operation::restore(
        domain::operation::Opening {
            provider: provider.to_string(),
            ..op.opening().clone()
        },
        op.part().clone(),
        op.state().clone(),
        op.updated_at(),
    )
    .expect("the same kind")
}

/// The first attempt of `op` at its provider, sent at `at` and checked at `check_at`.
pub fn first_attempt(op: &Operation, at: Timestamp, check_at: Timestamp) -> Attempt {
    Attempt::sent(op.id(), 1, op.route_id(), op.provider(), at, check_at)
}

/// Stores `op` with its first attempt `attempt`, no moves and no callback.
pub async fn insert_with_attempt(db: &Database, op: &Operation, attempt: &Attempt) {
    let new = domain::ports::NewOperation {
        operation: op.clone(),
        fingerprint: None,
        moves: Vec::new(),
        callback: None,
        attempts: vec![attempt.clone()],
    };
    db.insert(&new).await.expect("insert with its attempt");
}

/// An enabled acquirer named `name`, reached over https in 5 s, with credentials from `seed`.
pub fn acquirer(name: &str, seed: &str) -> AcquirerProvider {
    AcquirerProvider {
        name: ProviderName::parse(name).expect("provider name"),
        protocol: domain::provider::ProtocolName::from_stored("acquirer".into()),
        url: ProviderUrl::parse(&format!("https://{name}.example/api/"), false).expect("url"),
        credentials: Credentials::new(&format!("key-{seed}"), &format!("whsec-{seed}"))
            .expect("credentials"),
        timeout: Duration::from_secs(5),
        allow_insecure: false,
        enabled: true,
    }
}

/// Approves `id`, a sandbox operation of `gw`, as the sandbox's completion does.
pub async fn approve(gw: &domain::service::Gateway, id: domain::OperationId) {
    gw.answers()
        .complete(id, domain::operation::Outcome::Approve)
        .await
        .expect("approve");
}

pub fn callback_attempt(
    claimed: &domain::ports::PendingCallback,
    at: Timestamp,
    status: u16,
) -> domain::callback::CallbackAttempt {
    domain::callback::CallbackAttempt {
        operation_id: claimed.operation_id,
        refund_id: claimed.refund_id,
        dispute: claimed.dispute,
        attempt: claimed.attempt,
        at,
        duration_ms: 37,
        http_status: Some(status),
        error: (status >= 500).then(|| "server error".to_string()),
    }
}

/// The first `limit` balance transactions of `shop` in RUB, any time.
pub fn rub_transactions(shop: &Merchant, limit: u32) -> domain::transactions::TransactionQuery {
    domain::transactions::TransactionQuery {
        merchant_id: shop.id.clone(),
        currency: Currency::RUB,
        from: None,
        to: None,
        after: None,
        limit,
    }
}
