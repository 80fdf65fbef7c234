//! The fields every shape of a money movement writes alike: the creation and read answers
//! of an operation, a refund as answered, and both callbacks. Built once here, so an amount
//! or a decline reads the same in each (the status is written beside it, as
//! `Status::number`, where each shape has always put it).

use domain::operation::Decline;
use domain::{Amount, Currency};
use serde::Serialize;

/// `amount`, `currency` and, for a declined movement, `errorCode` and `errorMessage` (left
/// out otherwise, never `null`), in that order: flattened into an operation's answers and
/// into the callbacks, whose keys it keeps in alphabetical order.
#[derive(Debug, Serialize)]
pub struct Movement<'a> {
    #[serde(flatten)]
    pub money: Money<'a>,
    #[serde(flatten)]
    pub decline: DeclineFields<'a>,
}

/// `amount` and `currency`: a refund's answer writes its status between them and the
/// decline.
#[derive(Debug, Serialize)]
pub struct Money<'a> {
    amount: String,
    currency: &'a str,
}

/// `errorCode` and `errorMessage` of a declined movement; nothing otherwise.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeclineFields<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    error_code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_message: Option<&'a str>,
}

impl<'a> Movement<'a> {
    /// A movement of `amount` in `currency`, `decline` saying why when it was declined.
    pub fn new(amount: Amount, currency: &'a Currency, decline: Option<&'a Decline>) -> Self {
        Self {
            money: Money {
                amount: amount.format(*currency),
                currency: currency.as_str(),
            },
            decline: DeclineFields {
                error_code: decline.map(|d| d.code.as_str()),
                error_message: decline.map(|d| d.message.as_str()),
            },
        }
    }
}
