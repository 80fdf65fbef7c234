//! The Acquirer API's JSON of disputes: the dispute object (an evidence call's answer, a
//! read), its notification, and the evidence body.
//!
//! The evidence body carries the merchant's files: it never derives `Debug`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use domain::acquirer::{AcquirerDispute, Evidence};
use domain::{Amount, Timestamp};
use serde::{Deserialize, Serialize};

use crate::words;

/// A dispute as the acquirer sends it: `{"id", "paymentId", "reference", "amount",
/// "currency", "status", "dueBy", "evidence", "updatedAt"}`; unknown keys are ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DisputeAnswer {
    pub(crate) id: String,
    payment_id: String,
    reference: String,
    amount: i64,
    status: String,
    #[serde(default)]
    due_by: Option<String>,
    #[serde(default)]
    evidence: u32,
}

impl DisputeAnswer {
    /// Reads an answer body; `None` if it is not a dispute.
    pub(crate) fn parse(body: &[u8]) -> Option<(Self, AcquirerDispute)> {
        let answer: DisputeAnswer = serde_json::from_slice(body).ok()?;
        let dispute = answer.meaning()?;
        Some((answer, dispute))
    }

    /// What it says: `None` for an empty id, an unknown status, an amount that is not
    /// positive or a `dueBy` that is not RFC 3339.
    fn meaning(&self) -> Option<AcquirerDispute> {
        if self.id.is_empty() || self.amount <= 0 {
            return None;
        }
        let due_by = match &self.due_by {
            Some(text) => Some(Timestamp::parse_rfc3339(text).ok()?),
            None => None,
        };
        Some(AcquirerDispute {
            id: self.id.clone(),
            payment_id: self.payment_id.clone(),
            reference: self.reference.clone(),
            amount: Amount::from_minor(self.amount).ok()?,
            status: words::dispute_status(&self.status)?,
            due_by,
            evidence: self.evidence,
        })
    }
}

/// A dispute notification's body: `{"event": "dispute", "disputeId", "paymentId",
/// "reference", "amount", "status", "dueBy", ...}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DisputeNotice {
    dispute_id: String,
    payment_id: String,
    reference: String,
    amount: i64,
    status: String,
    #[serde(default)]
    due_by: Option<String>,
}

impl DisputeNotice {
    /// What the notification says, read as a dispute object would be.
    pub(crate) fn meaning(self) -> Option<AcquirerDispute> {
        DisputeAnswer {
            id: self.dispute_id,
            payment_id: self.payment_id,
            reference: self.reference,
            amount: self.amount,
            status: self.status,
            due_by: self.due_by,
            evidence: 0,
        }
        .meaning()
    }
}

/// The body of `POST /v1/disputes/{id}/evidence`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EvidenceBody<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    files: Vec<EvidenceFile<'a>>,
}

/// One file of the evidence, its bytes in standard base64.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EvidenceFile<'a> {
    file_name: &'a str,
    content_type: &'static str,
    data: String,
}

impl<'a> EvidenceBody<'a> {
    pub(crate) fn new(evidence: &'a Evidence) -> Self {
        Self {
            text: evidence.text.as_deref(),
            files: evidence
                .files
                .iter()
                .map(|file| EvidenceFile {
                    file_name: &file.file_name,
                    content_type: file.content_type.as_str(),
                    data: STANDARD.encode(&file.data),
                })
                .collect(),
        }
    }

    pub(crate) fn to_json(&self) -> Vec<u8> {
        // A struct of strings always serializes.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use domain::acquirer::AcquirerDisputeStatus;
    use domain::dispute::{DisputeFile, FileType};
    use serde_json::{json, Value};

    use super::*;

    fn answer(status: &str) -> Value {
        json!({"id": "dsp_1", "paymentId": "acq_1", "reference": "r", "amount": 6000,
               "currency": "RUB", "status": status, "dueBy": "2026-01-08T12:00:00.250Z",
               "evidence": 1, "updatedAt": "2026-01-01T12:00:00.250Z", "extra": true})
    }

    #[test]
    fn a_dispute_is_read_with_its_status_deadline_and_evidence_count() {
        let (_, dispute) =
            DisputeAnswer::parse(answer("won").to_string().as_bytes()).expect("a dispute");
        assert_eq!(dispute.status, AcquirerDisputeStatus::Won);
        assert_eq!(dispute.amount.minor(), 6000);
        assert_eq!(dispute.evidence, 1);
        assert_eq!(
            dispute.due_by,
            Some(Timestamp::parse_rfc3339("2026-01-08T12:00:00.250Z").expect("a time"))
        );
    }

    #[test]
    fn what_is_not_a_dispute_is_not_read() {
        let mut bad = vec![answer("pending"), json!({"id": "dsp_1"})];
        let mut no_id = answer("open");
        no_id["id"] = json!("");
        bad.push(no_id);
        let mut zero = answer("open");
        zero["amount"] = json!(0);
        bad.push(zero);
        let mut late = answer("open");
        late["dueBy"] = json!("tomorrow");
        bad.push(late);
        for value in bad {
            assert!(
                DisputeAnswer::parse(value.to_string().as_bytes()).is_none(),
                "{value}"
            );
        }
    }

    #[test]
    fn evidence_files_go_in_base64() {
        let file = DisputeFile::new("r.pdf", FileType::Pdf, b"%PDF-1.7".to_vec()).expect("a file");
        let evidence = Evidence {
            key: uuid::Uuid::nil(),
            text: Some("delivered".into()),
            files: vec![file],
        };
        let body: Value =
            serde_json::from_slice(&EvidenceBody::new(&evidence).to_json()).expect("json");
        assert_eq!(
            body,
            json!({"text": "delivered", "files": [{"fileName": "r.pdf",
                   "contentType": "application/pdf", "data": "JVBERi0xLjc="}]})
        );
    }
}
