//! The fields every shape of a money movement writes alike: the creation and read answers
//! of an operation, a refund as answered, and both callbacks. Built once here, so a status
//! number, an amount or a decline reads the same in each.

use domain::operation::Decline;
use domain::{Amount, Currency, Status};
use serde::Serialize;

/// `status`, `amount`, `currency` and, for a declined movement, `errorCode` and
/// `errorMessage` (left out otherwise, never `null`). Flattened into each shape.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Movement<'a> {
    status: u8,
    amount: String,
    currency: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_message: Option<&'a str>,
}

impl<'a> Movement<'a> {
    /// A movement of `amount` in `currency` standing at `status`, `decline` saying why when
    /// it was declined.
    pub fn new(
        status: Status,
        amount: Amount,
        currency: &'a Currency,
        decline: Option<&'a Decline>,
    ) -> Self {
        Self {
            status: status.number(),
            amount: amount.to_string(),
            currency: currency.as_str(),
            error_code: decline.map(|d| d.code.as_str()),
            error_message: decline.map(|d| d.message.as_str()),
        }
    }
}
