//! The user's steps on a waiting deposit: input fields and a confirmation code (the
//! acquirer deposits' payment pages are in `pay_pages`).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::calls::Calls;
use super::core::Core;
use super::page_reads::PageReads;
use super::StepError;
use crate::merchant::Merchant;
use crate::operation::{
    Action, Decline, DeclineCode, InputField, Operation, Outcome, CONFIRMATION_ATTEMPTS,
};
use crate::ports::{FinishError, ProviderVerdict};
use crate::{Direction, OperationId, ValidationErrors};

/// The hosted checkout's steps: what a user does on a waiting deposit, through the API or
/// the gateway's payment pages.
#[derive(Clone)]
pub struct Steps {
    pub(super) core: Arc<Core>,
    pub(super) calls: Arc<Calls>,
    /// This process's payment-page reads of acquirers, at most one per operation at a time.
    pub(super) page_reads: PageReads,
}

impl Steps {
    /// The merchant's processing deposit, or why it cannot take a step now.
    async fn waiting_deposit(
        &self,
        merchant: &Merchant,
        id: OperationId,
    ) -> Result<Operation, StepError> {
        let operation = self.core.store.get(id).await?.ok_or(StepError::NotFound)?;
        if *operation.merchant_id() != merchant.id || operation.direction() != Direction::Deposit {
            return Err(StepError::NotFound);
        }
        Ok(operation)
    }

    /// Submits input-field values; the provider then decides. Unknown fields, missing required
    /// ones and `select` values outside the options are `Invalid`.
    #[tracing::instrument(skip_all, fields(operation.id = %id))]
    pub async fn submit_input(
        &self,
        merchant: &Merchant,
        id: OperationId,
        values: BTreeMap<String, String>,
    ) -> Result<Operation, StepError> {
        let operation = self.waiting_deposit(merchant, id).await?;
        let Some(Action::InputFields { fields }) = &operation.action() else {
            return Err(StepError::InvalidState);
        };
        if !operation.status().is_final() {
            check_input(fields, &values).map_err(StepError::Invalid)?;
        }
        self.refuse_if_not_waiting(&operation).await?;
        let outcome = match self
            .calls
            .provider
            .submit_input(&operation, &values)
            .await?
        {
            ProviderVerdict::Approve => Outcome::Approve,
            ProviderVerdict::Decline(decline) => Outcome::Decline(decline),
            ProviderVerdict::Pending(_) => return Ok(operation),
        };
        Ok(self.core.complete_loaded(&operation, outcome).await?)
    }

    /// Submits a confirmation code: the right one approves; a wrong one answers `InvalidCode`
    /// while attempts remain, and the last wrong one declines with `ConfirmationFailed`.
    ///
    /// A wrong code spends its attempt in the write that checks the count it read (the
    /// action's `attempts_left`, compared and replaced in one guarded update), so concurrent
    /// wrong codes spend one attempt each: a code whose write lost to another reads the
    /// deposit again and counts from there. The decline is written only while the deposit is
    /// still processing, so of all the codes that read the last attempt exactly one declines
    /// it; the others find it final (`InvalidState`).
    #[tracing::instrument(skip_all, fields(operation.id = %id))]
    pub async fn confirm(
        &self,
        merchant: &Merchant,
        id: OperationId,
        code: &str,
    ) -> Result<Operation, StepError> {
        // Each lost write is another code's won one, and a deposit takes at most
        // CONFIRMATION_ATTEMPTS of those: more rounds than that mean the stored action never
        // matches what was read, a fault to report rather than to spin on.
        for _ in 0..=2 * usize::from(CONFIRMATION_ATTEMPTS) {
            let operation = self.waiting_deposit(merchant, id).await?;
            let Some(
                action @ Action::Confirmation {
                    channels,
                    attempts_left,
                },
            ) = &operation.action()
            else {
                return Err(StepError::InvalidState);
            };
            self.refuse_if_not_waiting(&operation).await?;
            if self.calls.provider.check_code(&operation, code).await? {
                return Ok(self
                    .core
                    .complete_loaded(&operation, Outcome::Approve)
                    .await?);
            }
            let left = attempts_left.saturating_sub(1);
            if left == 0 {
                let decline = Decline::new(DeclineCode::ConfirmationFailed);
                return Ok(self
                    .core
                    .complete_loaded(&operation, Outcome::Decline(decline))
                    .await?);
            }
            let fewer = Action::Confirmation {
                channels: channels.clone(),
                attempts_left: left,
            };
            let now = self.core.clock.now();
            match self
                .core
                .store
                .replace_action(id, action, &fewer, now)
                .await
            {
                Ok(()) => return Err(StepError::InvalidCode),
                // Another code (or the deposit's end) changed it first: count again.
                Err(FinishError::NotProcessing) => continue,
                Err(error) => return Err(error.into()),
            }
        }
        Err(StepError::Unknown(anyhow::anyhow!(
            "the confirmation attempts of {id} changed under every count"
        )))
    }

    /// `InvalidState` for a final deposit; an expired one is declined as `Expired` first.
    async fn refuse_if_not_waiting(&self, operation: &Operation) -> Result<(), StepError> {
        if operation.status().is_final() {
            return Err(StepError::InvalidState);
        }
        if operation.is_expired(self.core.clock.now()) {
            let expired = Outcome::expired();
            self.core.complete_loaded(operation, expired).await?;
            return Err(StepError::InvalidState);
        }
        // A provider taken out of service (the sandbox with GATEWAY_SANDBOX=false) takes no
        // more steps: its waiting deposits only expire.
        if !self.calls.in_service(operation) {
            return Err(StepError::InvalidState);
        }
        Ok(())
    }
}

/// Checks values against the fields: every key known, required ones present and non-empty,
/// no control characters, `select` values among the options. Errors are named `fields.<name>`.
pub fn check_input(
    fields: &[InputField],
    values: &BTreeMap<String, String>,
) -> Result<(), ValidationErrors> {
    let mut errors = ValidationErrors::default();
    for name in values.keys() {
        if !fields.iter().any(|f| &f.name == name) {
            errors.push(format!("fields.{name}"), "is not a field of this operation");
        }
    }
    for field in fields {
        let path = format!("fields.{}", field.name);
        match values.get(&field.name) {
            None => {
                if field.required {
                    errors.push(path, "is required");
                }
            }
            Some(value) if value.is_empty() && field.required => errors.push(path, "is required"),
            Some(value) if value.chars().any(crate::is_refused_control) => {
                errors.push(path, crate::CONTROL_CHARACTERS)
            }
            Some(value) => {
                if let Some(options) = &field.options {
                    if !options.iter().any(|o| &o.value == value) {
                        errors.push(path, "must be one of the field's options");
                    }
                }
            }
        }
    }
    errors.into_result()
}
