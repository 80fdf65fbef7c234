//! The `disputes` and `dispute_files` rows.

use diesel::prelude::*;
use domain::dispute::{
    Chargeback, Dispute, DisputeFile, DisputeKind, DisputeStatus, EvidenceState, FileType,
};
use domain::{Amount, Timestamp};

use super::{bad, parse};
use crate::schema::{dispute_files, disputes};

/// A dispute as written and read (the chargeback's provider and id are the store's own).
#[derive(Insertable, Queryable, Selectable)]
#[diesel(table_name = disputes, treat_none_as_default_value = false)]
pub(crate) struct DisputeRow {
    pub(crate) id: String,
    kind: String,
    operation_id: String,
    merchant_id: String,
    status: String,
    reason: String,
    amount: i64,
    currency: String,
    comment: Option<String>,
    due_by: Option<i64>,
    resolution: Option<String>,
    provider: Option<String>,
    acquirer_id: Option<String>,
    created_at: i64,
    updated_at: i64,
}

impl DisputeRow {
    /// The row of `dispute`, at a provider under its id there for a chargeback.
    pub(crate) fn new(dispute: &Dispute, at_provider: Option<(&str, &str)>) -> Self {
        Self {
            id: dispute.id.to_string(),
            kind: dispute.kind.as_str().to_string(),
            operation_id: dispute.operation_id.to_string(),
            merchant_id: dispute.merchant_id.as_str().to_string(),
            status: dispute.status.as_str().to_string(),
            reason: dispute.reason.clone(),
            amount: dispute.amount.minor(),
            currency: dispute.currency.as_str().to_string(),
            comment: dispute.comment.clone(),
            due_by: dispute.due_by.map(Timestamp::millis),
            resolution: dispute.resolution.clone(),
            provider: at_provider.map(|(p, _)| p.to_string()),
            acquirer_id: at_provider.map(|(_, id)| id.to_string()),
            created_at: dispute.created_at.millis(),
            updated_at: dispute.updated_at.millis(),
        }
    }

    /// The domain chargeback, with its evidence's stored state; `None` for an appeal.
    pub(crate) fn into_chargeback(
        self,
        evidence: Option<String>,
    ) -> anyhow::Result<Option<Chargeback>> {
        let (Some(provider), Some(acquirer_id)) = (self.provider.clone(), self.acquirer_id.clone())
        else {
            return Ok(None);
        };
        let evidence = evidence
            .map(|state| parse("disputes.evidence_state", &state, EvidenceState::parse))
            .transpose()?;
        Ok(Some(Chargeback {
            dispute: self.into_dispute()?,
            provider,
            acquirer_id,
            evidence,
        }))
    }

    /// The domain dispute.
    pub(crate) fn into_dispute(self) -> anyhow::Result<Dispute> {
        Ok(Dispute {
            id: parse("disputes.id", &self.id, domain::DisputeId::parse)?,
            kind: DisputeKind::parse(&self.kind)
                .ok_or_else(|| bad("disputes.kind", format!("{:?}", self.kind)))?,
            operation_id: super::operation_id("disputes.operation_id", &self.operation_id)?,
            merchant_id: super::merchant_id("disputes.merchant_id", &self.merchant_id)?,
            status: parse("disputes.status", &self.status, DisputeStatus::parse)?,
            reason: self.reason,
            amount: Amount::from_minor(self.amount)
                .map_err(|e| bad("disputes.amount", format!("{}: {e}", self.amount)))?,
            currency: super::currency("disputes.currency", &self.currency)?,
            comment: self.comment,
            due_by: self.due_by.map(Timestamp::from_millis),
            resolution: self.resolution,
            created_at: Timestamp::from_millis(self.created_at),
            updated_at: Timestamp::from_millis(self.updated_at),
        })
    }
}

/// A dispute's file as written and read.
#[derive(Insertable, Queryable, Selectable)]
#[diesel(table_name = dispute_files)]
pub(crate) struct DisputeFileRow {
    dispute_id: String,
    n: i32,
    file_name: String,
    content_type: String,
    data: Vec<u8>,
    created_at: i64,
}

impl DisputeFileRow {
    /// File number `n` of dispute `dispute`, received at `at`.
    pub(crate) fn new(dispute: &Dispute, n: i32, file: &DisputeFile, at: Timestamp) -> Self {
        Self {
            dispute_id: dispute.id.to_string(),
            n,
            file_name: file.file_name.clone(),
            content_type: file.content_type.as_str().to_string(),
            data: file.data.clone(),
            created_at: at.millis(),
        }
    }

    /// The domain file, checked again as it was when it came.
    pub(crate) fn into_file(self) -> anyhow::Result<DisputeFile> {
        let kind = parse(
            "dispute_files.content_type",
            &self.content_type,
            FileType::parse,
        )?;
        DisputeFile::new(&self.file_name, kind, self.data).map_err(|e| bad("dispute_files.data", e))
    }
}
