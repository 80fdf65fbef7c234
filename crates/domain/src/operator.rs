//! The operator's use cases: merchants, routes, manual balance credits and debits, the
//! ledger check and the story of one operation. The CLI is one caller; any other merchant
//! tool reuses the same rules.
//!
//! The rules live here; storage is the [`OperatorStore`] port (and the [`OperationStore`] for
//! reading operations). Each new value is checked
//! into a typed one first ([`Merchant`], [`CheckedRoute`](crate::route::CheckedRoute), a manual [`BalanceMove`]) and only
//! that reaches the store.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::console::Actor;
use crate::discrepancy::{RecordedDiscrepancy, Resolution, ResolutionNote, Resolved};
use crate::ledger::{manual_move, BalanceMove, LedgerReport, ManualEntry};
use crate::merchant::{KeyRing, KeyRotation, Merchant, Secret, SigningRulesChange};
use crate::ports::{
    Clock, IdGenerator, ManualMoveError, MerchantInsertError, OperationStore, OperatorStore,
    ProviderInsertError, StoreError,
};
use crate::provider::{
    check_timeout, AcquirerProvider, Credentials, ProtocolName, ProviderName, ProviderUrl, SANDBOX,
};
use crate::route::{acquirer_flow, NewRoute, Route, RouteRule};
use crate::story::OperationStory;
use crate::{is_refused_control, ValueError, CONTROL_CHARACTERS};
use crate::{Amount, Currency, Direction, MerchantId, OperationId, PaymentMethod, Timestamp};

/// The most broken ledger entries one check lists.
pub const BROKEN_SHOWN: u32 = 100;

/// The longest merchant name, in characters (after trimming).
pub const MAX_NAME_CHARS: usize = 128;

/// A merchant to create, as the operator gives it. The secrets are made by the caller (the CLI
/// makes 64 random hex characters).
#[derive(Debug, Clone)]
pub struct NewMerchant {
    /// `None`: a fresh id from the [`IdGenerator`].
    pub id: Option<MerchantId>,
    /// Trimmed before it is checked and stored.
    pub name: String,
    pub access: BTreeSet<(Direction, PaymentMethod)>,
    pub deposit_secret: Secret,
    pub withdrawal_secret: Secret,
    /// Every request must carry `x-timestamp`.
    pub require_timestamp: bool,
    /// Every request must be signed with version 2.
    pub require_signature_v2: bool,
}

/// The rule a new merchant breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MerchantRule {
    /// Empty after trimming, or longer than `max` characters.
    #[error("the name must be 1 to {max} characters")]
    NameLength { max: usize },
    #[error("the name {CONTROL_CHARACTERS}")]
    NameControlCharacter,
    /// An access pair whose method does not exist in its direction.
    #[error("the method {method} is not allowed in the direction {direction}")]
    AccessPair {
        direction: Direction,
        method: PaymentMethod,
    },
}

impl NewMerchant {
    /// The merchant to store (enabled) under `id`, its secrets the first of their directions
    /// from `at`, or the first rule it breaks.
    pub fn check(self, id: MerchantId, at: Timestamp) -> Result<Merchant, MerchantRule> {
        let name = merchant_name(&self.name)?;
        if let Some(&(direction, method)) = self
            .access
            .iter()
            .find(|(direction, method)| !direction.methods().contains(method))
        {
            return Err(MerchantRule::AccessPair { direction, method });
        }
        Ok(Merchant {
            id,
            name,
            deposit_keys: KeyRing::single(self.deposit_secret, at),
            withdrawal_keys: KeyRing::single(self.withdrawal_secret, at),
            access: self.access,
            enabled: true,
            require_timestamp: self.require_timestamp,
            require_signature_v2: self.require_signature_v2,
        })
    }
}

/// A merchant's name as kept: trimmed, 1 to [`MAX_NAME_CHARS`] characters, no control
/// characters (the control-character rule is checked first).
pub fn merchant_name(name: &str) -> Result<String, MerchantRule> {
    let name = name.trim();
    if name.chars().any(is_refused_control) {
        return Err(MerchantRule::NameControlCharacter);
    }
    if !(1..=MAX_NAME_CHARS).contains(&name.chars().count()) {
        return Err(MerchantRule::NameLength {
            max: MAX_NAME_CHARS,
        });
    }
    Ok(name.to_string())
}

/// Why a merchant was not created.
#[derive(Debug, thiserror::Error)]
pub enum CreateMerchantError {
    #[error(transparent)]
    Invalid(#[from] MerchantRule),
    #[error("a merchant with this name already exists")]
    NameTaken,
    #[error("a merchant with this id already exists")]
    IdTaken,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<MerchantInsertError> for CreateMerchantError {
    fn from(error: MerchantInsertError) -> Self {
        match error {
            MerchantInsertError::NameTaken => Self::NameTaken,
            MerchantInsertError::IdTaken => Self::IdTaken,
            MerchantInsertError::Store(e) => Self::Store(e),
        }
    }
}

/// The longest overlap of a rotation: 720 hours.
pub const MAX_OVERLAP_SECS: i64 = 720 * 3600;

/// A rotation's overlap: `Ns`, `Nm`, `Nh` or `Nd` (N decimal digits), from `0s` to `720h`, in
/// seconds.
pub fn parse_overlap(text: &str) -> Result<i64, String> {
    let refuse = || format!("{text:?}: expected Ns, Nm, Nh or Nd from 0s to 720h, e.g. 24h");
    let unit = match text.chars().last() {
        Some('s') => 1,
        Some('m') => 60,
        Some('h') => 3600,
        Some('d') => 86_400,
        _ => return Err(refuse()),
    };
    let digits = &text[..text.len() - 1];
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refuse());
    }
    let secs = digits.parse::<i64>().map_err(|_| refuse())? * unit;
    if secs > MAX_OVERLAP_SECS {
        return Err(refuse());
    }
    Ok(secs)
}

/// A rotation done: the direction's secrets after it (the new one newest).
#[derive(Debug, Clone)]
pub struct Rotated {
    pub merchant_id: MerchantId,
    pub direction: Direction,
    pub keys: KeyRing,
    /// When the secret that was newest before stops working.
    pub old_secret_expires_at: Timestamp,
}

/// Why a route was not added.
#[derive(Debug, thiserror::Error)]
pub enum AddRouteError {
    #[error(transparent)]
    Invalid(#[from] RouteRule),
    /// No provider has this name.
    #[error("no provider {0}")]
    UnknownProvider(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A new acquirer provider as the operator describes it; [`Operator::add_provider`] checks it.
#[derive(Debug, Clone)]
pub struct NewProvider {
    pub name: String,
    /// The protocol it speaks, one the wiring has an adapter for (`--kind`).
    pub protocol: ProtocolName,
    pub url: String,
    pub allow_insecure: bool,
    pub timeout: std::time::Duration,
    pub credentials: Credentials,
}

/// What `provider update` changes; `None` keeps the stored value.
#[derive(Debug, Clone, Default)]
pub struct ProviderChanges {
    pub url: Option<String>,
    pub allow_insecure: Option<bool>,
    pub timeout: Option<std::time::Duration>,
    pub credentials: Option<Credentials>,
    pub enabled: Option<bool>,
}

/// Why a provider was not added or changed. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// A value breaks a rule: the field and the rule.
    #[error("{field}: {rule}")]
    Invalid {
        field: &'static str,
        rule: ValueError,
    },
    /// The name is taken (`sandbox` always is).
    #[error("a provider named {0} already exists")]
    NameTaken(String),
    #[error("no provider {0}")]
    Unknown(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn invalid(field: &'static str) -> impl FnOnce(ValueError) -> ProviderError {
    move |rule| ProviderError::Invalid { field, rule }
}

/// Credit or debit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManualMove {
    /// The available balance grows by the amount.
    Credit,
    /// The available balance shrinks by the amount, only if it covers it.
    Debit,
}

/// Why a manual credit or debit was refused. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum BalanceError {
    #[error("no merchant {merchant}")]
    UnknownMerchant { merchant: MerchantId },
    /// The entry names an operation that does not exist.
    #[error("no operation {operation}")]
    UnknownOperation { operation: OperationId },
    /// The entry names an operation of another merchant, or in another currency: an entry
    /// moves the money of the operation it names.
    #[error("operation {operation} is {merchant}'s in {currency}")]
    NotTheOperations {
        operation: OperationId,
        merchant: MerchantId,
        currency: Currency,
    },
    #[error("the available balance is lower than {} {currency}", amount.format(*currency))]
    InsufficientBalance { amount: Amount, currency: Currency },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A manual credit or debit as the operator asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManualAdjustment {
    pub merchant: MerchantId,
    pub currency: Currency,
    pub amount: Amount,
    pub kind: ManualMove,
    /// The operation the entry is about (`--operation`): it must be the merchant's, in
    /// `currency`; the entry resolves its open discrepancies.
    pub operation: Option<OperationId>,
}

/// Why a discrepancy was not resolved. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The note breaks a rule (empty, too long, control characters).
    #[error("note: {0}")]
    Note(ValueError),
    #[error("no discrepancy {0}")]
    NotFound(i64),
    /// It was resolved before; as it stands.
    #[error("discrepancy {} is already resolved", .0.id)]
    AlreadyResolved(Box<RecordedDiscrepancy>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The operator's use cases over the [`OperatorStore`] (and the [`OperationStore`], read only).
#[derive(Clone)]
pub struct Operator {
    store: Arc<dyn OperatorStore>,
    operations: Arc<dyn OperationStore>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl Operator {
    /// `operations` is only read (an operation and its attempts, for
    /// [`Operator::operation_story`]).
    pub fn new(
        store: Arc<dyn OperatorStore>,
        operations: Arc<dyn OperationStore>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            store,
            operations,
            clock,
            ids,
        }
    }

    /// Creates an enabled merchant: the rules, then the store (`NameTaken` / `IdTaken` on a
    /// clash). A merchant without an id gets a fresh one.
    pub async fn create_merchant(&self, new: NewMerchant) -> Result<Merchant, CreateMerchantError> {
        let id = match &new.id {
            Some(id) => id.clone(),
            None => self.ids.merchant_id(),
        };
        let now = self.clock.now();
        let merchant = new.check(id, now)?;
        self.store.insert_merchant(&merchant, now).await?;
        Ok(merchant)
    }

    /// Gives the merchant's `direction` a new newest secret and ends every older live one at
    /// the earlier of its own end and now plus `overlap_secs` (0: at once). `None` if the
    /// merchant is unknown.
    pub async fn rotate_secret(
        &self,
        id: &MerchantId,
        direction: Direction,
        secret: Secret,
        overlap_secs: i64,
    ) -> Result<Option<Rotated>, StoreError> {
        let at = self.clock.now();
        let rotation = KeyRotation {
            merchant: id.clone(),
            direction,
            secret,
            at,
            older_end: at.plus_seconds(overlap_secs),
        };
        let Some(keys) = self.store.rotate_key(&rotation).await? else {
            return Ok(None);
        };
        tracing::info!(merchant.id = %id, %direction, version = keys.newest().version, "secret rotated");
        Ok(Some(Rotated {
            merchant_id: id.clone(),
            direction,
            keys,
            old_secret_expires_at: rotation.older_end,
        }))
    }

    /// Makes `x-timestamp` or signature version 2 mandatory (or optional again) for every
    /// request of the merchant. `false` if it is unknown.
    pub async fn change_signing_rules(
        &self,
        id: &MerchantId,
        change: SigningRulesChange,
    ) -> Result<bool, StoreError> {
        self.store.change_signing_rules(id, change).await
    }

    /// The operator's clock now (what a listing's "live" is judged at).
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Every merchant, by name.
    pub async fn merchants(&self) -> Result<Vec<Merchant>, StoreError> {
        self.store.list_merchants().await
    }

    /// The merchant with this name, enabled or not.
    pub async fn merchant_by_name(&self, name: &str) -> Result<Option<Merchant>, StoreError> {
        self.store.merchant_by_name(name).await
    }

    /// The merchant with this id, enabled or not.
    pub async fn merchant(&self, id: &MerchantId) -> Result<Option<Merchant>, StoreError> {
        self.store.find_merchant(id).await
    }

    /// The route with this id, enabled or not.
    pub async fn route(&self, id: i64) -> Result<Option<Route>, StoreError> {
        Ok(self.routes().await?.into_iter().find(|r| r.id == id))
    }

    /// The acquirer with this name, enabled or not.
    pub async fn provider(&self, name: &str) -> Result<Option<AcquirerProvider>, StoreError> {
        Ok(self
            .providers()
            .await?
            .into_iter()
            .find(|p| p.name.as_str() == name))
    }

    /// Takes a disabled merchant's requests again and sends its held callbacks on their
    /// schedule (due at once if their time has passed); returns how many were held, or `None`
    /// if there is no such merchant.
    pub async fn enable_merchant(&self, id: &MerchantId) -> Result<Option<u64>, StoreError> {
        let released = self.store.enable_merchant(id, self.clock.now()).await?;
        if let Some(released) = released {
            tracing::info!(merchant.id = %id, callbacks.released = released, "merchant enabled");
        }
        Ok(released)
    }

    /// Disables a merchant: its requests are refused from then on and its callbacks wait
    /// (held) until it is enabled again. `false` if it is unknown.
    pub async fn disable_merchant(&self, id: &MerchantId) -> Result<bool, StoreError> {
        self.store.disable_merchant(id).await
    }

    /// Every route, enabled or not, by id.
    pub async fn routes(&self) -> Result<Vec<Route>, StoreError> {
        self.store.list_routes().await
    }

    /// Adds an enabled route after the rules and returns it with its id. Its provider must
    /// exist; an acquirer route's flow must be the one its acquirer's page serves.
    pub async fn add_route(&self, new: NewRoute) -> Result<Route, AddRouteError> {
        let route = new.check()?;
        let provider = &route.get().provider;
        if provider != SANDBOX {
            let providers = self.store.list_providers().await?;
            if !providers.iter().any(|p| p.name.as_str() == provider) {
                return Err(AddRouteError::UnknownProvider(provider.clone()));
            }
            let expected = acquirer_flow(route.get().direction, route.get().method);
            if route.get().flow != expected {
                return Err(RouteRule::AcquirerFlow {
                    expected: expected.as_str(),
                }
                .into());
            }
        }
        let id = self.store.insert_route(&route).await?;
        Ok(route.into_route(id))
    }

    /// Enables a route. `false` if there is no route with this id.
    pub async fn enable_route(&self, id: i64) -> Result<bool, StoreError> {
        self.store.enable_route(id).await
    }

    /// Sets a route's priority (higher wins). `false` if there is no route with this id.
    pub async fn set_route_priority(&self, id: i64, priority: i32) -> Result<bool, StoreError> {
        self.store.set_route_priority(id, priority).await
    }

    /// Adds an enabled acquirer provider after the rules (name, URL, timeout).
    pub async fn add_provider(&self, new: NewProvider) -> Result<AcquirerProvider, ProviderError> {
        let name = ProviderName::parse(&new.name).map_err(invalid("--name"))?;
        if name.is_sandbox() {
            return Err(ProviderError::NameTaken(new.name));
        }
        let provider = AcquirerProvider {
            name,
            protocol: new.protocol,
            url: ProviderUrl::parse(&new.url, new.allow_insecure).map_err(invalid("--url"))?,
            credentials: new.credentials,
            timeout: check_timeout(new.timeout).map_err(invalid("--timeout"))?,
            allow_insecure: new.allow_insecure,
            enabled: true,
        };
        match self
            .store
            .insert_provider(&provider, self.clock.now())
            .await
        {
            Ok(()) => Ok(provider),
            Err(ProviderInsertError::NameTaken) => Err(ProviderError::NameTaken(new.name)),
            Err(ProviderInsertError::Store(e)) => Err(e.into()),
        }
    }

    /// Every acquirer provider, by name.
    pub async fn providers(&self) -> Result<Vec<AcquirerProvider>, StoreError> {
        self.store.list_providers().await
    }

    /// Changes a provider's record; the rules apply to the result as to a new one.
    pub async fn update_provider(
        &self,
        name: &str,
        changes: ProviderChanges,
    ) -> Result<AcquirerProvider, ProviderError> {
        let unknown = || ProviderError::Unknown(name.to_string());
        let mut provider = self
            .store
            .list_providers()
            .await?
            .into_iter()
            .find(|p| p.name.as_str() == name)
            .ok_or_else(unknown)?;
        if let Some(allow) = changes.allow_insecure {
            provider.allow_insecure = allow;
        }
        let url = changes
            .url
            .unwrap_or_else(|| provider.url.as_str().to_string());
        provider.url =
            ProviderUrl::parse(&url, provider.allow_insecure).map_err(invalid("--url"))?;
        if let Some(timeout) = changes.timeout {
            provider.timeout = check_timeout(timeout).map_err(invalid("--timeout"))?;
        }
        if let Some(credentials) = changes.credentials {
            provider.credentials = credentials;
        }
        if let Some(enabled) = changes.enabled {
            provider.enabled = enabled;
        }
        if self
            .store
            .update_provider(&provider, self.clock.now())
            .await?
        {
            Ok(provider)
        } else {
            Err(unknown())
        }
    }

    /// Disables a route. `false` if there is no route with this id.
    pub async fn disable_route(&self, id: i64) -> Result<bool, StoreError> {
        self.store.disable_route(id).await
    }

    /// Credits (`ManualMove::Credit`) or debits the merchant's available balance by the
    /// amount, written with a manual ledger entry, and returns the balance after it with the
    /// entry. The merchant must exist (enabled or not); a debit must be covered by the
    /// available balance. An entry that names an operation is linked to it (the operation
    /// must be the merchant's, in the same currency) and resolves its open discrepancies in
    /// the same transaction.
    pub async fn adjust_balance(
        &self,
        adjustment: &ManualAdjustment,
        note: &crate::ledger::ManualNote,
    ) -> Result<ManualEntry, BalanceError> {
        let ManualAdjustment {
            merchant,
            currency,
            amount,
            kind,
            operation,
        } = adjustment;
        if self.store.find_merchant(merchant).await?.is_none() {
            return Err(BalanceError::UnknownMerchant {
                merchant: merchant.clone(),
            });
        }
        if let Some(id) = operation {
            let found = self.operations.get(*id).await?;
            let Some(named) = found else {
                return Err(BalanceError::UnknownOperation { operation: *id });
            };
            if named.merchant_id() != merchant || named.currency() != *currency {
                return Err(BalanceError::NotTheOperations {
                    operation: *id,
                    merchant: named.merchant_id().clone(),
                    currency: named.currency(),
                });
            }
        }
        let mut entry: BalanceMove = manual_move(
            merchant.clone(),
            *currency,
            *amount,
            *kind == ManualMove::Credit,
            self.clock.now(),
        );
        entry.operation_id = *operation;
        match self.store.apply_manual_move(&entry, note).await {
            Ok(written) => {
                if !written.resolved.is_empty() {
                    tracing::info!(operation.id = ?operation, entry = written.entry_id, discrepancies = ?written.resolved, "manual entry resolved discrepancies");
                }
                Ok(written)
            }
            Err(ManualMoveError::InsufficientBalance) => Err(BalanceError::InsufficientBalance {
                amount: *amount,
                currency: *currency,
            }),
            Err(ManualMoveError::Store(e)) => Err(BalanceError::Store(e)),
        }
    }

    /// Recorded discrepancies, newest first, at most `limit`; only open ones if `open_only`.
    pub async fn discrepancies(
        &self,
        open_only: bool,
        limit: u32,
    ) -> Result<Vec<RecordedDiscrepancy>, StoreError> {
        self.store.discrepancies(open_only, limit).await
    }

    /// Marks discrepancy `id` resolved by `actor` now, with `note` (trimmed, 1 to 500
    /// characters). It changes no status and moves no money; a resolved one stays as it was.
    pub async fn resolve_discrepancy(
        &self,
        id: i64,
        actor: &Actor,
        note: &str,
    ) -> Result<RecordedDiscrepancy, ResolveError> {
        let note = ResolutionNote::parse(note).map_err(ResolveError::Note)?;
        let resolution = Resolution {
            at: self.clock.now(),
            actor: actor.clone(),
            note,
            ledger_entry: None,
        };
        match self.store.resolve_discrepancy(id, &resolution).await? {
            Resolved::Now(done) => {
                tracing::info!(discrepancy = id, operation.id = %done.operation_id, actor = %actor, "discrepancy resolved");
                Ok(done)
            }
            Resolved::Already(found) => Err(ResolveError::AlreadyResolved(Box::new(found))),
            Resolved::NotFound => Err(ResolveError::NotFound(id)),
        }
    }

    /// The ledger check: every merchant and currency whose balance differs from its ledger,
    /// the first [`BROKEN_SHOWN`] entries whose recorded balance does not chain, and each
    /// currency's flows; it holds when nothing is wrong.
    pub async fn verify_ledger(&self) -> Result<LedgerReport, StoreError> {
        Ok(LedgerReport {
            mismatches: self.store.verify_ledger().await?,
            broken: self.store.broken_entries(BROKEN_SHOWN).await?,
            flows: self.store.ledger_flows().await?,
        })
    }

    /// The operation with this id, whoever owns it, with its provider attempts, its ledger
    /// entries and its callbacks; `Ok(None)` if there is no such operation (nothing else is
    /// read then).
    pub async fn operation_story(
        &self,
        id: OperationId,
    ) -> Result<Option<OperationStory>, StoreError> {
        let Some(operation) = self.operations.get(id).await? else {
            return Ok(None);
        };
        Ok(Some(OperationStory {
            operation,
            attempts: self.operations.attempts(id).await?,
            ledger: self.store.operation_ledger(id).await?,
            callbacks: self.store.operation_callbacks(id).await?,
            discrepancies: self.store.operation_discrepancies(id).await?,
        }))
    }
}

#[cfg(test)]
mod tests;
