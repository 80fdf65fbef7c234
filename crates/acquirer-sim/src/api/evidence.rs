//! The body of `POST /v1/disputes/{id}/evidence`: a text and files in base64.

use serde::Deserialize;

use crate::error::ApiError;

/// The largest evidence body accepted: room for about 3 MiB of files in base64.
pub const BODY_LIMIT: usize = 8 * 1024 * 1024;

/// Evidence as posted.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceBody {
    /// The merchant's explanation.
    pub text: Option<String>,
    /// Documents; absent, `null` or empty is no file.
    pub files: Option<Vec<EvidenceFile>>,
}

/// One evidence document.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceFile {
    /// Its name, e.g. `receipt.pdf`.
    pub file_name: String,
    /// Its media type, e.g. `application/pdf`.
    pub content_type: String,
    /// Its bytes in standard base64 (with padding).
    pub data: String,
}

/// What arrived, for the log: the text's length, how many files and how many bytes they
/// decode to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Characters of text.
    pub text: usize,
    /// Files.
    pub files: usize,
    /// Their decoded bytes.
    pub bytes: usize,
}

impl EvidenceBody {
    /// Checks every file (a name, a media type, base64 data) and sums them up.
    pub fn check(&self) -> Result<Summary, ApiError> {
        let files = self.files.as_deref().unwrap_or_default();
        let mut bytes = 0;
        for (index, file) in files.iter().enumerate() {
            if file.file_name.trim().is_empty() || file.content_type.trim().is_empty() {
                return Err(ApiError::BadRequest(format!(
                    "files[{index}] needs a fileName and a contentType"
                )));
            }
            bytes += decoded_len(&file.data).ok_or_else(|| {
                ApiError::BadRequest(format!("files[{index}].data is not base64"))
            })?;
        }
        Ok(Summary {
            text: self.text.as_deref().map_or(0, |text| text.chars().count()),
            files: files.len(),
            bytes,
        })
    }
}

/// The decoded length of standard base64 with padding, or `None` if it is not that.
fn decoded_len(data: &str) -> Option<usize> {
    let data = data.as_bytes();
    if !data.len().is_multiple_of(4) {
        return None;
    }
    let padding = data.iter().rev().take_while(|&&byte| byte == b'=').count();
    if padding > 2 {
        return None;
    }
    let digits = &data[..data.len() - padding];
    let alphabet = |byte: &u8| byte.is_ascii_alphanumeric() || *byte == b'+' || *byte == b'/';
    digits
        .iter()
        .all(alphabet)
        .then_some(data.len() / 4 * 3 - padding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_lengths() {
        assert_eq!(decoded_len(""), Some(0));
        assert_eq!(decoded_len("aGk="), Some(2));
        assert_eq!(decoded_len("aGkh"), Some(3));
        assert_eq!(decoded_len("aA=="), Some(1));
        assert_eq!(decoded_len("aGk"), None);
        assert_eq!(decoded_len("a==="), None);
        assert_eq!(decoded_len("a=Gk"), None);
        assert_eq!(decoded_len("aG-k"), None);
    }

    #[test]
    fn files_are_optional_but_checked() {
        let body: EvidenceBody = serde_json::from_str(r#"{"text": "x"}"#).expect("parses");
        assert_eq!(
            body.check().ok(),
            Some(Summary {
                text: 1,
                files: 0,
                bytes: 0
            })
        );
        let body: EvidenceBody = serde_json::from_str(
            r#"{"files": [{"fileName": "a.txt", "contentType": "text/plain", "data": "aGk="}]}"#,
        )
        .expect("parses");
        assert_eq!(
            body.check().ok(),
            Some(Summary {
                text: 0,
                files: 1,
                bytes: 2
            })
        );
        let body: EvidenceBody = serde_json::from_str(
            r#"{"files": [{"fileName": "a.txt", "contentType": "text/plain", "data": "hi!"}]}"#,
        )
        .expect("parses");
        assert!(body.check().is_err());
    }
}
