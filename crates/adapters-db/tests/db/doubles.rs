//! Test doubles for the gateway's other ports: provider, clock, ids.

use std::sync::Arc;
use std::time::Duration;

use adapters_db::Database;
use async_trait::async_trait;
use domain::operation::{Action, Decline, DeclineCode, Operation, ProviderState};
use domain::operator::Operator;
use domain::ports::{DepositStart, PaymentProvider, PayoutStart, ProviderError, ProviderVerdict};
use domain::refund::Refund;
use domain::route::Route;
use domain::service::{Gateway, Ports};
use domain::{Timestamp, WithdrawalRequisites};

/// A gateway over `db` with the test provider, the system clock and UUID v4 ids.
pub fn gateway(db: &Database) -> Gateway {
    let db = Arc::new(db.clone());
    Gateway::new(Ports {
        store: db.clone(),
        refunds: db.clone(),
        disputes: db.clone(),
        merchants: db.clone(),
        routes: db.clone(),
        tariffs: db.clone(),
        ledger: db.clone(),
        provider: Arc::new(TestProvider),
        providers: db.clone(),
        // No acquirer answers: these tests route to the sandbox only.
        acquirer: Arc::new(domain::testkit::NoAcquirers),
        clock: Arc::new(SystemClock),
        ids: Arc::new(UuidIds),
        callback_format: Arc::new(domain::testkit::DebugCallbackFormat),
        callbacks: db,
        qr: Arc::new(domain::testkit::TextQr),
    })
}

/// The operator's use cases over `db`, with the system clock and UUID v4 merchant ids.
pub fn operator(db: &Database) -> Operator {
    Operator::new(
        Arc::new(db.clone()),
        Arc::new(db.clone()),
        Arc::new(SystemClock),
        Arc::new(UuidIds),
    )
}

pub use domain::testkit::{RandomIds as UuidIds, WallClock as SystemClock};

/// Accepts everything (waiting deposits, payouts due in an hour), except amounts ending in 05,
/// which it declines, like the sandbox.
pub struct TestProvider;

fn declines(op: &Operation) -> bool {
    op.amount().minor() % 100 == 5
}

/// After a little latency, so concurrent requests overlap in the store: the decline `op` meets.
async fn decline_of(op: &Operation) -> Option<Decline> {
    tokio::time::sleep(Duration::from_millis(2)).await;
    declines(op).then(|| Decline::new(DeclineCode::ProviderDeclined))
}

#[async_trait]
impl PaymentProvider for TestProvider {
    async fn start_deposit(
        &self,
        deposit: &Operation,
        _: &Route,
    ) -> Result<DepositStart, ProviderError> {
        if let Some(decline) = decline_of(deposit).await {
            return Ok(DepositStart::Declined(decline));
        }
        Ok(DepositStart::Wait(Action::Redirect {
            url: format!("https://gateway.example/pay/{}", deposit.id()),
        }))
    }

    async fn start_payout(
        &self,
        payout: &Operation,
        _: &WithdrawalRequisites,
        _: &Route,
    ) -> Result<PayoutStart, ProviderError> {
        if let Some(decline) = decline_of(payout).await {
            return Ok(PayoutStart::Declined(decline));
        }
        Ok(PayoutStart::Accepted {
            state: Some(ProviderState::new(r#"{"plan":"approve"}"#)),
            due_at: payout.created_at().plus_seconds(3_600),
        })
    }

    async fn poll_payout(
        &self,
        _: &Operation,
        now: Timestamp,
    ) -> Result<ProviderVerdict, ProviderError> {
        Ok(ProviderVerdict::Pending(now.plus_seconds(60)))
    }

    async fn submit_input(
        &self,
        _: &Operation,
        _: &std::collections::BTreeMap<String, String>,
    ) -> Result<ProviderVerdict, ProviderError> {
        Ok(ProviderVerdict::Approve)
    }

    async fn check_code(&self, _: &Operation, code: &str) -> Result<bool, ProviderError> {
        Ok(code == "0000")
    }

    /// Settles a minute after it was made.
    async fn start_refund(&self, refund: &Refund) -> Result<Timestamp, ProviderError> {
        Ok(refund.created_at.plus_seconds(60))
    }

    /// Approves, except amounts ending in 05, which it declines.
    async fn poll_refund(
        &self,
        refund: &Refund,
        _: Timestamp,
    ) -> Result<ProviderVerdict, ProviderError> {
        if refund.amount.minor() % 100 == 5 {
            return Ok(ProviderVerdict::Decline(Decline::new(
                DeclineCode::ProviderDeclined,
            )));
        }
        Ok(ProviderVerdict::Approve)
    }
}
