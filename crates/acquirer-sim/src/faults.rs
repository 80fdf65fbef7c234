//! The fault set: what the Acquirer API does wrong, set by flags and `POST /_sim/faults`.

use serde::{Deserialize, Serialize};

use crate::model::FailureCode;

/// The whole fault set, as `POST /_sim/faults` answers it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Faults {
    /// Added after each call has been processed.
    pub latency_ms: u64,
    /// Share of calls answered 503 without changing anything.
    pub fail_rate: f64,
    /// Share of creations answered 201 `failed` with `decline_code`.
    pub decline_rate: f64,
    /// The failure code of injected declines.
    pub decline_code: FailureCode,
    /// Share of calls processed, then answered 502.
    pub ambiguous_rate: f64,
    /// Share of calls processed, then held for `--hold-ms`.
    pub timeout_rate: f64,
    /// Share of notifications never sent.
    pub drop_notify_rate: f64,
    /// Share of notifications sent twice.
    pub duplicate_notify_rate: f64,
    /// A payment's pending notifications are delivered newest first.
    pub reorder_notify: bool,
    /// The API listener is closed.
    pub down: bool,
}

impl Default for Faults {
    fn default() -> Self {
        Self {
            latency_ms: 0,
            fail_rate: 0.0,
            decline_rate: 0.0,
            decline_code: FailureCode::ProviderUnavailable,
            ambiguous_rate: 0.0,
            timeout_rate: 0.0,
            drop_notify_rate: 0.0,
            duplicate_notify_rate: 0.0,
            reorder_notify: false,
            down: false,
        }
    }
}

/// A partial update: absent fields keep their value.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FaultsPatch {
    /// See [`Faults::latency_ms`].
    pub latency_ms: Option<u64>,
    /// See [`Faults::fail_rate`].
    pub fail_rate: Option<f64>,
    /// See [`Faults::decline_rate`].
    pub decline_rate: Option<f64>,
    /// See [`Faults::decline_code`].
    pub decline_code: Option<FailureCode>,
    /// See [`Faults::ambiguous_rate`].
    pub ambiguous_rate: Option<f64>,
    /// See [`Faults::timeout_rate`].
    pub timeout_rate: Option<f64>,
    /// See [`Faults::drop_notify_rate`].
    pub drop_notify_rate: Option<f64>,
    /// See [`Faults::duplicate_notify_rate`].
    pub duplicate_notify_rate: Option<f64>,
    /// See [`Faults::reorder_notify`].
    pub reorder_notify: Option<bool>,
    /// See [`Faults::down`].
    pub down: Option<bool>,
}

/// A rate outside 0 to 1.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{name} must be between 0 and 1, got {value}")]
pub struct BadRate {
    /// The field's name.
    pub name: &'static str,
    /// The value given.
    pub value: f64,
}

fn rate(name: &'static str, value: Option<f64>) -> Result<Option<f64>, BadRate> {
    match value {
        Some(value) if !(0.0..=1.0).contains(&value) => Err(BadRate { name, value }),
        other => Ok(other),
    }
}

impl Faults {
    /// Applies `patch` whole, or nothing if a rate is out of range.
    pub fn apply(&mut self, patch: FaultsPatch) -> Result<(), BadRate> {
        let fail_rate = rate("failRate", patch.fail_rate)?;
        let decline_rate = rate("declineRate", patch.decline_rate)?;
        let ambiguous_rate = rate("ambiguousRate", patch.ambiguous_rate)?;
        let timeout_rate = rate("timeoutRate", patch.timeout_rate)?;
        let drop_notify_rate = rate("dropNotifyRate", patch.drop_notify_rate)?;
        let duplicate_notify_rate = rate("duplicateNotifyRate", patch.duplicate_notify_rate)?;
        let keep = |new: Option<f64>, old: f64| new.unwrap_or(old);
        self.latency_ms = patch.latency_ms.unwrap_or(self.latency_ms);
        self.fail_rate = keep(fail_rate, self.fail_rate);
        self.decline_rate = keep(decline_rate, self.decline_rate);
        self.decline_code = patch.decline_code.unwrap_or(self.decline_code);
        self.ambiguous_rate = keep(ambiguous_rate, self.ambiguous_rate);
        self.timeout_rate = keep(timeout_rate, self.timeout_rate);
        self.drop_notify_rate = keep(drop_notify_rate, self.drop_notify_rate);
        self.duplicate_notify_rate = keep(duplicate_notify_rate, self.duplicate_notify_rate);
        self.reorder_notify = patch.reorder_notify.unwrap_or(self.reorder_notify);
        self.down = patch.down.unwrap_or(self.down);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_changes_only_what_it_names() {
        let mut faults = Faults::default();
        faults
            .apply(patch(
                r#"{"failRate": 0.5, "declineCode": "issuer_unavailable"}"#,
            ))
            .expect("valid");
        assert_eq!(faults.fail_rate, 0.5);
        assert_eq!(faults.decline_code, FailureCode::IssuerUnavailable);
        assert_eq!(faults.latency_ms, 0);
        faults.apply(patch(r#"{"down": true}"#)).expect("valid");
        assert_eq!(faults.fail_rate, 0.5);
        assert!(faults.down);
    }

    #[test]
    fn a_bad_rate_changes_nothing() {
        let mut faults = Faults::default();
        let error = faults
            .apply(patch(r#"{"latencyMs": 5, "timeoutRate": 1.5}"#))
            .expect_err("out of range");
        assert_eq!(error.name, "timeoutRate");
        assert_eq!(faults, Faults::default());
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert!(serde_json::from_str::<FaultsPatch>(r#"{"failrate": 1}"#).is_err());
    }

    #[test]
    fn the_whole_set_is_camel_case() {
        let json = serde_json::to_value(Faults::default()).expect("serializes");
        assert_eq!(json["declineCode"], "provider_unavailable");
        assert_eq!(json["reorderNotify"], false);
        assert_eq!(json.as_object().map(|o| o.len()), Some(10));
    }

    fn patch(json: &str) -> FaultsPatch {
        serde_json::from_str(json).expect("valid patch")
    }
}
