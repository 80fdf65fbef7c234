//! What the server answered, with assertions on the contract's error body.

use reqwest::header::HeaderMap;
use serde_json::Value;

/// What the server answered.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
    /// The body as JSON (`Value::Null` if it is not JSON).
    pub body: Value,
}

impl Answer {
    /// `data` of a 2xx answer.
    pub fn data(&self) -> &Value {
        &self.body["data"]
    }

    /// Asserts a 200 answer, showing the body otherwise.
    #[track_caller]
    pub fn assert_ok(&self) {
        assert_eq!(self.status, 200, "{}", self.text);
    }

    /// Asserts the contract's error body with this status and code.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{}", self.text);
        assert_eq!(self.body["errorCode"], code, "{}", self.text);
        assert!(self.body["errorMessage"].is_string(), "{}", self.text);
        assert!(
            self.headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/json")),
            "{:?}",
            self.headers
        );
    }

    /// The fields named in `details`.
    pub fn detail_fields(&self) -> Vec<String> {
        self.body["details"]
            .as_array()
            .map(|d| {
                d.iter()
                    .filter_map(|e| e["field"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The fields named in `details`, sorted.
    pub fn sorted_detail_fields(&self) -> Vec<String> {
        let mut fields = self.detail_fields();
        fields.sort();
        fields
    }

    pub fn operation_id(&self) -> String {
        self.data()["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("no operationId in {}", self.text))
            .to_string()
    }
}
