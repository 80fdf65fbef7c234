//! The provider protocols this binary speaks, each an adapter behind the `Acquirer` port,
//! and the one `Acquirer` the use cases get: it hands each call to the adapter of the
//! calling provider's protocol (`AcquirerProvider::protocol`, stored as the provider's
//! `kind`). A new protocol is a new adapter crate and one line in [`Protocols::new`].

use std::collections::BTreeMap;
use std::sync::Arc;

use adapters_acquirer::AcquirerClient;
use async_trait::async_trait;
use domain::acquirer::{
    AcquirerDispute, AcquirerPayment, AcquirerRefund, CallResult, Evidence, Lookup, Notification,
    NotificationRefusal, PaymentOrder, RefundOrder,
};
use domain::ports::Acquirer;
use domain::provider::AcquirerProvider;
use domain::{OperationId, RefundId};

/// The Acquirer API's protocol name: the built-in one, and the default of `provider add`.
pub const ACQUIRER_API: &str = "acquirer";

/// The adapters by protocol name.
#[derive(Clone)]
pub struct Protocols {
    adapters: BTreeMap<&'static str, Arc<dyn Acquirer>>,
}

impl Protocols {
    /// Every protocol this binary speaks; the Acquirer API through `acquirer_api`.
    pub fn new(acquirer_api: Arc<AcquirerClient>) -> Self {
        let mut adapters: BTreeMap<&'static str, Arc<dyn Acquirer>> = BTreeMap::new();
        adapters.insert(ACQUIRER_API, acquirer_api);
        Self { adapters }
    }

    /// The protocol names, in order: what `provider add --kind` takes.
    pub fn names(&self) -> Vec<&'static str> {
        self.adapters.keys().copied().collect()
    }

    /// Whether `name` is a protocol this binary speaks.
    pub fn speaks(&self, name: &str) -> bool {
        self.adapters.contains_key(name)
    }

    /// The adapter of `provider`'s protocol; `Err` with the reason (for logs) when this
    /// binary does not speak it, in which case nothing is sent.
    fn of(&self, provider: &AcquirerProvider) -> Result<&dyn Acquirer, String> {
        self.adapters
            .get(provider.protocol.as_str())
            .map(|adapter| adapter.as_ref())
            .ok_or_else(|| format!("no adapter speaks protocol {}", provider.protocol))
    }
}

#[async_trait]
impl Acquirer for Protocols {
    fn notification_signature_header(&self, provider: &AcquirerProvider) -> &'static str {
        // A protocol this binary does not speak has no header: its requests read as unsigned.
        self.of(provider).map_or("", |adapter| {
            adapter.notification_signature_header(provider)
        })
    }

    fn read_notification(
        &self,
        provider: &AcquirerProvider,
        signature: &str,
        body: &[u8],
    ) -> Result<Notification, NotificationRefusal> {
        let adapter = self
            .of(provider)
            .map_err(|_| NotificationRefusal::BadSignature)?;
        adapter.read_notification(provider, signature, body)
    }

    async fn create(
        &self,
        provider: &AcquirerProvider,
        order: &PaymentOrder,
    ) -> CallResult<AcquirerPayment> {
        match self.of(provider) {
            Ok(adapter) => adapter.create(provider, order).await,
            Err(reason) => CallResult::Unavailable(reason),
        }
    }

    async fn find(
        &self,
        provider: &AcquirerProvider,
        reference: OperationId,
    ) -> Lookup<AcquirerPayment> {
        match self.of(provider) {
            Ok(adapter) => adapter.find(provider, reference).await,
            Err(reason) => Lookup::Failed(reason),
        }
    }

    async fn cancel(
        &self,
        provider: &AcquirerProvider,
        acquirer_id: &str,
    ) -> Lookup<AcquirerPayment> {
        match self.of(provider) {
            Ok(adapter) => adapter.cancel(provider, acquirer_id).await,
            Err(reason) => Lookup::Failed(reason),
        }
    }

    async fn refund(
        &self,
        provider: &AcquirerProvider,
        order: &RefundOrder,
    ) -> CallResult<AcquirerRefund> {
        match self.of(provider) {
            Ok(adapter) => adapter.refund(provider, order).await,
            Err(reason) => CallResult::Unavailable(reason),
        }
    }

    async fn find_refund(
        &self,
        provider: &AcquirerProvider,
        reference: RefundId,
    ) -> Lookup<AcquirerRefund> {
        match self.of(provider) {
            Ok(adapter) => adapter.find_refund(provider, reference).await,
            Err(reason) => Lookup::Failed(reason),
        }
    }

    async fn submit_evidence(
        &self,
        provider: &AcquirerProvider,
        acquirer_id: &str,
        evidence: &Evidence,
    ) -> CallResult<AcquirerDispute> {
        match self.of(provider) {
            Ok(adapter) => {
                adapter
                    .submit_evidence(provider, acquirer_id, evidence)
                    .await
            }
            Err(reason) => CallResult::Unavailable(reason),
        }
    }

    async fn find_dispute(
        &self,
        provider: &AcquirerProvider,
        acquirer_id: &str,
    ) -> Lookup<AcquirerDispute> {
        match self.of(provider) {
            Ok(adapter) => adapter.find_dispute(provider, acquirer_id).await,
            Err(reason) => Lookup::Failed(reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use domain::provider::{Credentials, ProtocolName, ProviderName, ProviderUrl};
    use domain::{Amount, Currency, Direction, PaymentMethod, Timestamp};

    use super::*;

    fn speaking(protocol: &str) -> AcquirerProvider {
        AcquirerProvider {
            name: ProviderName::parse("bank").expect("a name"),
            protocol: ProtocolName::parse(protocol).expect("a protocol"),
            // Nothing listens here: a call that went out would fail to connect.
            url: ProviderUrl::parse("http://127.0.0.1:9", false).expect("a URL"),
            credentials: Credentials::new("key", "secret").expect("credentials"),
            timeout: Duration::from_secs(1),
            allow_insecure: false,
            enabled: true,
        }
    }

    #[test]
    fn the_acquirer_api_is_spoken_and_named() {
        let protocols = Protocols::new(Arc::new(AcquirerClient::new()));
        assert_eq!(protocols.names(), [ACQUIRER_API]);
        assert!(protocols.speaks("acquirer"));
        assert!(!protocols.speaks("other"));
        assert_eq!(
            protocols.notification_signature_header(&speaking(ACQUIRER_API)),
            adapters_acquirer::SIGNATURE_HEADER
        );
    }

    #[tokio::test]
    async fn a_protocol_nobody_speaks_sends_nothing_and_reads_nothing() {
        let protocols = Protocols::new(Arc::new(AcquirerClient::new()));
        let provider = speaking("other");
        let order = PaymentOrder {
            reference: OperationId::parse("6f1c2a52-3c7e-4bd0-9a3f-7a1d3c2b9e10").expect("id"),
            direction: Direction::Deposit,
            method: PaymentMethod::Card,
            amount: Amount::from_minor(100).expect("amount"),
            currency: Currency::RUB,
            notify_url: "http://127.0.0.1:9/n".into(),
            not_after: Timestamp::from_millis(0),
            return_url: None,
            expires_at: None,
            payout: None,
        };
        assert_eq!(
            protocols.create(&provider, &order).await,
            CallResult::Unavailable("no adapter speaks protocol other".into())
        );
        assert!(matches!(
            protocols.find(&provider, order.reference).await,
            Lookup::Failed(_)
        ));
        assert_eq!(
            protocols.read_notification(&provider, "", b"{}"),
            Err(NotificationRefusal::BadSignature)
        );
        assert_eq!(protocols.notification_signature_header(&provider), "");
    }
}
