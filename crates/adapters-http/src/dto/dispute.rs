//! Disputes at the edge: the body of `POST /deposits/{id}/appeals` (its receipt in base64,
//! checked by its first bytes) and the `Dispute` answer, which a dispute's callback carries
//! too.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use domain::dispute::{
    dispute_text, AppealReason, AppealRequest, Dispute, DisputeFile, EvidenceRequest, FileType,
};
use domain::{AmountText, ValidationErrors};
use serde::Serialize;
use serde_json::{Map, Value};

use super::create::{object, string, unknown_fields};

/// The fields an appeal body may have.
const KNOWN_FIELDS: [&str; 4] = ["reason", "paidAmount", "comment", "receipt"];

/// The fields a file may have.
const FILE_FIELDS: [&str; 3] = ["fileName", "contentType", "data"];

/// A valid appeal from a parsed body, or every invalid field.
pub fn appeal(body: &Map<String, Value>) -> Result<AppealRequest, ValidationErrors> {
    let mut edge = ValidationErrors::default();
    unknown_fields(body, &KNOWN_FIELDS, "", &mut edge);
    let reason = string(body, "reason", &mut edge);
    let paid_amount = string(body, "paidAmount", &mut edge);
    let comment = string(body, "comment", &mut edge);
    let receipt = object(body, "receipt", &mut edge);
    let mut values = ValidationErrors::default();
    let reason = values.required("reason", reason, AppealReason::parse);
    let paid_amount = values.required("paidAmount", paid_amount, AmountText::parse);
    let comment = values.optional("comment", comment, dispute_text).flatten();
    let receipt = receipt.and_then(|r| file(r, "receipt", &mut values));
    edge.extend_unreported(values);
    match (reason, paid_amount) {
        (Some(reason), Some(paid_amount)) if edge.is_empty() => Ok(AppealRequest {
            reason,
            paid_amount,
            comment,
            receipt,
        }),
        _ => Err(edge),
    }
}

/// The fields an evidence body may have.
const EVIDENCE_FIELDS: [&str; 2] = ["text", "files"];

/// Valid evidence (`{"text", "files": [File]}`, both optional) from a parsed body, or every
/// invalid field (`files[0].data`, ...).
pub fn evidence(body: &Map<String, Value>) -> Result<EvidenceRequest, ValidationErrors> {
    let mut edge = ValidationErrors::default();
    unknown_fields(body, &EVIDENCE_FIELDS, "", &mut edge);
    let text = string(body, "text", &mut edge);
    let mut values = ValidationErrors::default();
    let text = values.optional("text", text, dispute_text).flatten();
    let mut files = Vec::new();
    match body.get("files") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (index, item) in items.iter().enumerate() {
                let at = format!("files[{index}]");
                match item {
                    Value::Object(fields) => {
                        files.extend(file(fields, &at, &mut values));
                    }
                    _ => values.push(at, "must be an object"),
                }
            }
        }
        Some(_) => edge.push("files", "must be an array"),
    }
    edge.extend_unreported(values);
    if edge.is_empty() {
        Ok(EvidenceRequest { text, files })
    } else {
        Err(edge)
    }
}

/// A file (`{"fileName", "contentType", "data": BASE64}`) at `at` in the body, checked: its
/// data decoded, at most 2 MiB, of the type its first bytes show; `None` with its errors
/// under `at.field`.
pub fn file(
    body: &Map<String, Value>,
    at: &str,
    errors: &mut ValidationErrors,
) -> Option<DisputeFile> {
    let prefix = format!("{at}.");
    let mut edge = ValidationErrors::default();
    unknown_fields(body, &FILE_FIELDS, &prefix, &mut edge);
    let name = string(body, "fileName", &mut edge);
    let kind = string(body, "contentType", &mut edge);
    let data = string(body, "data", &mut edge);
    let mut values = ValidationErrors::default();
    let name = values.required("fileName", name, |n| Ok(n.to_string()));
    let kind = values.required("contentType", kind, FileType::parse);
    let data = values.required("data", data, |d| {
        STANDARD
            .decode(d)
            .map_err(|_| domain::ValueError::new("must be base64"))
    });
    edge.extend_unreported(values);
    let checked = match (name, kind, data) {
        (Some(name), Some(kind), Some(data)) if edge.is_empty() => {
            DisputeFile::new(&name, kind, data)
                .map_err(|rule| edge.push(rule.field(), rule.to_string()))
        }
        _ => Err(()),
    };
    for error in edge.0 {
        let field = if error.field.starts_with(&prefix) {
            error.field
        } else {
            format!("{prefix}{}", error.field)
        };
        errors.push(field, error.message);
    }
    checked.ok()
}

/// A dispute as answered and as its callback reports it (`Dispute` of docs/openapi.yaml):
/// every field present, `null` when it has no value.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DisputeView {
    pub amount: String,
    pub created_at: String,
    pub currency: String,
    pub dispute_id: String,
    pub due_by: Option<String>,
    pub kind: &'static str,
    pub operation_id: String,
    pub reason: String,
    pub resolution: Option<String>,
    /// The callback's sequence number in a callback (a mark the callback format sets, until
    /// the outbox draws it); absent in the API's answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence: Option<u64>,
    pub status: &'static str,
    /// `dispute` in a callback, which names its type; absent in the API's answers.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub callback_type: Option<&'static str>,
    pub updated_at: String,
}

impl DisputeView {
    /// The dispute as its callback reports it: with `type: dispute`.
    pub fn reported(dispute: &Dispute) -> Self {
        Self {
            callback_type: Some("dispute"),
            ..Self::new(dispute)
        }
    }

    pub fn new(dispute: &Dispute) -> Self {
        Self {
            amount: dispute.amount.format(dispute.currency),
            created_at: dispute.created_at.to_rfc3339(),
            currency: dispute.currency.as_str().to_string(),
            dispute_id: dispute.id.to_string(),
            due_by: dispute.due_by.map(|t| t.to_rfc3339()),
            kind: dispute.kind.as_str(),
            operation_id: dispute.operation_id.to_string(),
            reason: dispute.reason.clone(),
            resolution: dispute.resolution.clone(),
            sequence: None,
            status: dispute.status.as_str(),
            callback_type: None,
            updated_at: dispute.updated_at.to_rfc3339(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fields(errors: &ValidationErrors) -> Vec<&str> {
        errors.0.iter().map(|e| e.field.as_str()).collect()
    }

    fn body(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn evidence_takes_a_text_and_files_checked_by_their_first_bytes() {
        let read = evidence(&body(json!({"text": " delivered ", "files": [
            {"fileName": "r.pdf", "contentType": "application/pdf", "data": "JVBERi0xLjcK"}]})))
        .expect("valid");
        assert_eq!(read.text.as_deref(), Some("delivered"));
        assert_eq!(read.files.len(), 1);
        assert_eq!(read.files[0].content_type, FileType::Pdf);
        let empty = evidence(&body(json!({}))).expect("both fields are optional");
        assert_eq!((empty.text, empty.files.len()), (None, 0));
    }

    #[test]
    fn every_bad_evidence_field_is_named() {
        let errors = evidence(&body(json!({"note": "x", "files": [
            {"fileName": "r.pdf", "contentType": "application/pdf", "data": "iVBORw0KGgo="},
            {"fileName": "r.pdf", "contentType": "text/plain", "data": "eA=="},
            "not a file"]})))
        .expect_err("invalid");
        assert_eq!(
            fields(&errors),
            ["note", "files[0].data", "files[1].contentType", "files[2]"]
        );
        let errors = evidence(&body(json!({"files": "r.pdf"}))).expect_err("invalid");
        assert_eq!(fields(&errors), ["files"]);
    }
}
