//! The fields every shape of a money movement writes alike: the creation and read answers
//! of an operation, a refund as answered, and both callbacks. Built once here, so an amount
//! or a decline reads the same in each (the status is written beside it, as
//! `Status::number`, where each shape puts it).

use domain::operation::Decline;
use domain::{Amount, Currency};
use serde::Serialize;

/// `amount`, `currency` and, for a declined movement, `errorCode` and `errorMessage` (left
/// out otherwise, never `null`), in that order: flattened into each shape, they keep a
/// callback's keys in alphabetical order.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Movement<'a> {
    amount: String,
    currency: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_message: Option<&'a str>,
}

impl<'a> Movement<'a> {
    /// A movement of `amount` in `currency`, `decline` saying why when it was declined.
    pub fn new(amount: Amount, currency: &'a Currency, decline: Option<&'a Decline>) -> Self {
        Self {
            amount: amount.to_string(),
            currency: currency.as_str(),
            error_code: decline.map(|d| d.code.as_str()),
            error_message: decline.map(|d| d.message.as_str()),
        }
    }
}
