//! The fields every shape of a money movement writes alike: the creation and read answers
//! of an operation, a refund as answered, and both callbacks. Built once here, so an amount
//! or a decline reads the same in each (the status is written beside it, as
//! `Status::number`, where each shape has always put it).

use domain::operation::Decline;
use domain::{format_minor, Amount, Currency, Direction};
use serde::Serialize;

/// Which way a movement's money goes for the merchant: a deposit is credited its amount
/// less the fee (`creditedAmount`); a withdrawal or a refund is debited its amount plus the
/// fee (`debitedAmount`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Credited,
    Debited,
}

impl Side {
    /// A deposit's side, or a withdrawal's.
    pub fn of(direction: Direction) -> Self {
        match direction {
            Direction::Deposit => Side::Credited,
            Direction::Withdrawal => Side::Debited,
        }
    }
}

/// `amount`, `creditedAmount` or `debitedAmount`, `currency`, for a declined movement
/// `errorCode` and `errorMessage` (left out otherwise, never `null`), and `fee`, in that
/// order: flattened into an operation's answers and into the callbacks, whose keys it keeps
/// in alphabetical order.
#[derive(Debug, Serialize)]
pub struct Movement<'a> {
    #[serde(flatten)]
    pub money: Money<'a>,
    #[serde(flatten)]
    pub decline: DeclineFields<'a>,
    /// The fee fixed at creation (`"0.00"` without a tariff, never left out).
    pub fee: String,
}

/// `amount`, what the merchant is credited or debited, and `currency`: a refund's answer
/// writes its status between them and the decline.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Money<'a> {
    amount: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    credited_amount: Option<String>,
    currency: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    debited_amount: Option<String>,
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
    /// A movement of `amount` in `currency` paying `fee` (minor units) on `side`, `decline`
    /// saying why when it was declined.
    pub fn new(
        amount: Amount,
        currency: &'a Currency,
        fee: i64,
        side: Side,
        decline: Option<&'a Decline>,
    ) -> Self {
        let money = |units: i64| format_minor(units, *currency);
        let (credited, debited) = match side {
            Side::Credited => (Some(money(amount.minor() - fee)), None),
            Side::Debited => (None, Some(money(amount.minor().saturating_add(fee)))),
        };
        Self {
            money: Money {
                amount: amount.format(*currency),
                credited_amount: credited,
                currency: currency.as_str(),
                debited_amount: debited,
            },
            decline: DeclineFields {
                error_code: decline.map(|d| d.code.as_str()),
                error_message: decline.map(|d| d.message.as_str()),
            },
            fee: money(fee),
        }
    }
}
