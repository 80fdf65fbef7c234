//! The `providers` row: an acquirer and its credentials (encrypted when the database has a
//! master key).

use std::time::Duration;

use diesel::prelude::*;
use domain::merchant::Secret;
use domain::provider::{
    check_timeout, AcquirerProvider, Credentials, ProtocolName, ProviderName, ProviderUrl,
};

use super::{bad, flag};
use crate::crypto::{Place, Vault};
use crate::schema::providers;

/// The credential columns, as their places name them.
pub(crate) const API_KEY: &str = "api_key";
pub(crate) const WEBHOOK_SECRET: &str = "webhook_secret";

/// A provider's record as written by an insert or an update (all but its key and creation).
#[derive(Insertable, AsChangeset)]
#[diesel(table_name = providers)]
pub(crate) struct ProviderChanges<'a> {
    url: &'a str,
    api_key: String,
    webhook_secret: String,
    timeout_ms: i64,
    allow_insecure: i16,
    enabled: i16,
    updated_at: i64,
}

/// Where a provider's credential is stored.
fn place<'a>(name: &'a str, column: &'static str) -> Place<'a> {
    Place::Provider { name, column }
}

impl<'a> ProviderChanges<'a> {
    /// The record of `provider`, its credentials as `vault` stores them.
    pub(crate) fn new(
        vault: &Vault,
        provider: &'a AcquirerProvider,
        at: domain::Timestamp,
    ) -> anyhow::Result<Self> {
        let timeout_ms = i64::try_from(provider.timeout.as_millis())
            .map_err(|_| anyhow::anyhow!("timeout out of range"))?;
        let name = provider.name.as_str();
        let credentials = &provider.credentials;
        Ok(Self {
            url: provider.url.as_str(),
            api_key: vault.store(&place(name, API_KEY), credentials.api_key.expose())?,
            webhook_secret: vault.store(
                &place(name, WEBHOOK_SECRET),
                credentials.webhook_secret.expose(),
            )?,
            timeout_ms,
            allow_insecure: i16::from(provider.allow_insecure),
            enabled: i16::from(provider.enabled),
            updated_at: at.millis(),
        })
    }
}

/// A new provider's row: its record, name, kind and creation time.
#[derive(Insertable)]
#[diesel(table_name = providers)]
pub(crate) struct NewProviderRow<'a> {
    name: &'a str,
    /// The protocol it speaks (fixed at creation).
    kind: &'a str,
    #[diesel(embed)]
    record: ProviderChanges<'a>,
    created_at: i64,
}

impl<'a> NewProviderRow<'a> {
    pub(crate) fn new(
        vault: &Vault,
        provider: &'a AcquirerProvider,
        at: domain::Timestamp,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            name: provider.name.as_str(),
            kind: provider.protocol.as_str(),
            record: ProviderChanges::new(vault, provider, at)?,
            created_at: at.millis(),
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = providers)]
pub(crate) struct ProviderRow {
    name: String,
    kind: String,
    url: String,
    api_key: String,
    webhook_secret: String,
    timeout_ms: i64,
    allow_insecure: i16,
    enabled: i16,
}

impl ProviderRow {
    /// The provider, its credentials opened with `vault`.
    pub(crate) fn into_provider(self, vault: &Vault) -> anyhow::Result<AcquirerProvider> {
        let protocol = ProtocolName::parse(&self.kind).map_err(|e| bad("providers.kind", e))?;
        let timeout = u64::try_from(self.timeout_ms)
            .map(Duration::from_millis)
            .map_err(|_| bad("providers.timeout_ms", self.timeout_ms))
            .and_then(|t| check_timeout(t).map_err(|e| bad("providers.timeout_ms", e)))?;
        let credentials = Credentials {
            api_key: Secret::new(vault.read(&place(&self.name, API_KEY), &self.api_key)?),
            webhook_secret: Secret::new(
                vault.read(&place(&self.name, WEBHOOK_SECRET), &self.webhook_secret)?,
            ),
        };
        Ok(AcquirerProvider {
            name: ProviderName::from_stored(self.name),
            protocol,
            url: ProviderUrl::from_stored(self.url),
            credentials,
            timeout,
            allow_insecure: flag("providers.allow_insecure", self.allow_insecure)?,
            enabled: flag("providers.enabled", self.enabled)?,
        })
    }
}
