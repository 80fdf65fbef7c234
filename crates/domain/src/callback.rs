//! The callback a merchant receives when an operation becomes final (the callback rules of docs/api.md).

use serde_json::{json, Map, Value};

use crate::operation::Operation;
use crate::{Direction, HttpUrl, MerchantId, OperationId, Timestamp};

/// A callback queued in the same unit of work as the final status it reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedCallback {
    pub operation_id: OperationId,
    pub merchant_id: MerchantId,
    pub direction: Direction,
    pub url: HttpUrl,
    /// The exact JSON body to send and sign.
    pub body: String,
    pub queued_at: Timestamp,
}

/// The `data` object of a callback for a final operation.
pub fn callback_data(op: &Operation) -> Map<String, Value> {
    let mut data = Map::new();
    data.insert("operationId".into(), json!(op.id.to_string()));
    if let Some(moid) = &op.merchant_operation_id {
        data.insert("merchantOperationId".into(), json!(moid.as_str()));
    }
    data.insert("type".into(), json!(op.direction.as_str()));
    data.insert("paymentMethod".into(), json!(op.method.as_str()));
    data.insert("userId".into(), json!(op.user_id.as_str()));
    data.insert("status".into(), json!(op.status.code()));
    data.insert("amount".into(), json!(op.amount.to_string()));
    data.insert("currency".into(), json!(op.currency.as_str()));
    data.insert("updatedAt".into(), json!(op.updated_at.to_rfc3339()));
    if let Some(decline) = &op.decline {
        data.insert("errorCode".into(), json!(decline.code.as_str()));
        data.insert("errorMessage".into(), json!(decline.message));
    }
    data
}

/// The callback for `done`, if it is final and has a `callbackUrl`.
pub fn callback_for(done: &Operation) -> Option<QueuedCallback> {
    if !done.status.is_final() {
        return None;
    }
    let url = done.urls.callback.clone()?;
    let body = json!({ "data": Value::Object(callback_data(done)) }).to_string();
    Some(QueuedCallback {
        operation_id: done.id,
        merchant_id: done.merchant_id.clone(),
        direction: done.direction,
        url,
        body,
        queued_at: done.updated_at,
    })
}

/// Delays between callback attempts: a schedule of N delays allows at most N + 1 attempts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule(pub Vec<std::time::Duration>);

impl RetrySchedule {
    /// 10 s, 30 s, 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h, 24 h.
    pub fn standard() -> Self {
        let secs = [
            10, 30, 60, 300, 900, 1_800, 3_600, 7_200, 14_400, 28_800, 43_200, 86_400,
        ];
        Self(
            secs.into_iter()
                .map(std::time::Duration::from_secs)
                .collect(),
        )
    }

    /// The delay before the next attempt after `failed_attempts` failures in this schedule
    /// run, or `None` when the callback should be marked failed.
    pub fn next_delay(&self, failed_attempts: u32) -> Option<std::time::Duration> {
        let index = usize::try_from(failed_attempts).ok()?.checked_sub(1)?;
        self.0.get(index).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_schedule_gives_thirteen_attempts() {
        let schedule = RetrySchedule::standard();
        assert_eq!(
            schedule.next_delay(1),
            Some(std::time::Duration::from_secs(10))
        );
        assert_eq!(
            schedule.next_delay(12),
            Some(std::time::Duration::from_secs(86_400))
        );
        assert_eq!(schedule.next_delay(13), None);
        assert_eq!(schedule.next_delay(0), None);
    }
}
