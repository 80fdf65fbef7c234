//! Rows <-> domain values. Unknown or invalid stored values are an error, never a default.

mod action;
mod attempt;
mod catalog;
mod dispute;
mod operation;
mod process;
mod provider;
mod refund;
mod tariff;

pub(crate) use action::action_kind;
pub(crate) use attempt::{AttemptChanges, AttemptRow, NewAttemptRow};
pub(crate) use catalog::{
    profile_from_rows, route_from_row, KeyRow, KeyRows, MerchantProfile, MerchantRow, NewKeyRow,
    NewMerchantRow, NewRouteRow, RouteRow,
};
pub(crate) use dispute::{DisputeFileRow, DisputeRow};
pub(crate) use operation::{
    action_json, operation_from_row, HoldMany, InsertMany, NewOperationRow, OperationRow,
};
pub(crate) use process::{CircuitRow, ProcessRow};
pub(crate) use provider::{NewProviderRow, ProviderChanges, ProviderRow, API_KEY, WEBHOOK_SECRET};
pub(crate) use refund::{refund_from_row, NewRefundRow, RefundRow, REFUND_COLUMNS};
pub(crate) use tariff::TariffRow;

use std::collections::BTreeMap;

use anyhow::anyhow;
use domain::fee::{Fee, FeeTerms, Percent};
use domain::operation::{Decline, DeclineCode, State};
use domain::signature::Fingerprint;
use domain::{
    Currency, Direction, MerchantId, OperationId, PaymentMethod, RefundId, Status, ValueError,
};

/// `rows` in lists by `key`, each list in the order its rows came.
pub(crate) fn grouped<K: Ord, R>(
    rows: impl IntoIterator<Item = R>,
    key: impl Fn(&R) -> K,
) -> BTreeMap<K, Vec<R>> {
    let mut by_key: BTreeMap<K, Vec<R>> = BTreeMap::new();
    for row in rows {
        by_key.entry(key(&row)).or_default().push(row);
    }
    by_key
}

/// A stored value that does not parse, named by its table and column.
pub(crate) fn bad(column: &str, error: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("invalid stored value in {column}: {error}")
}

/// Parses a stored value with a domain parser, naming the column on failure.
pub(crate) fn parse<T>(
    column: &str,
    text: &str,
    parser: impl FnOnce(&str) -> Result<T, ValueError>,
) -> anyhow::Result<T> {
    parser(text).map_err(|e| bad(column, format!("{text:?}: {e}")))
}

pub(crate) fn direction(column: &str, text: &str) -> anyhow::Result<Direction> {
    parse(column, text, Direction::parse)
}

/// A method stored for `direction`; one not allowed in that direction is invalid too.
pub(crate) fn method(
    column: &str,
    direction: Direction,
    text: &str,
) -> anyhow::Result<PaymentMethod> {
    parse(column, text, |t| PaymentMethod::parse_for(direction, t))
}

pub(crate) fn currency(column: &str, text: &str) -> anyhow::Result<Currency> {
    parse(column, text, Currency::parse)
}

pub(crate) fn merchant_id(column: &str, text: &str) -> anyhow::Result<MerchantId> {
    parse(column, text, MerchantId::parse)
}

pub(crate) fn operation_id(column: &str, text: &str) -> anyhow::Result<OperationId> {
    parse(column, text, OperationId::parse)
}

pub(crate) fn refund_id(column: &str, text: &str) -> anyhow::Result<RefundId> {
    parse(column, text, RefundId::parse)
}

/// A status as stored: 1 approved, 2 declined, 3 processing.
pub(crate) fn status_code(status: Status) -> i16 {
    i16::from(status.number())
}

/// The stored status for `code`; any other number is invalid, never a default.
pub(crate) fn status(column: &str, code: i16) -> anyhow::Result<Status> {
    Status::from_number(i64::from(code))
        .ok_or_else(|| bad(column, format!("{code}: must be 1, 2 or 3")))
}

/// The stored status and decline of a row of `table` (`operations` or `refunds`) as one
/// state: a decline without its status, or a declined status without its decline, is
/// corrupt. Decline codes are stored by name; one this version does not know is kept as read.
pub(crate) fn state(
    table: &str,
    row_status: i16,
    code: Option<String>,
    message: Option<String>,
) -> anyhow::Result<State> {
    let status = status(&format!("{table}.status"), row_status)?;
    let column = format!("{table}.error_code");
    let decline = match (code, message) {
        (None, None) => None,
        (Some(code), Some(message)) => Some(Decline {
            code: DeclineCode::from_stored(&code),
            message,
        }),
        _ => return Err(bad(&column, "error code and message must come together")),
    };
    match (status, decline) {
        (Status::Processing, None) => Ok(State::Processing),
        (Status::Approved, None) => Ok(State::Approved),
        (Status::Declined, Some(decline)) => Ok(State::Declined(decline)),
        (status, _) => Err(bad(
            &column,
            format!("an error code goes with Declined and only with it, not with {status:?}"),
        )),
    }
}

/// The stored fingerprint of a row of `table` (`operations` or `refunds`) with the version of
/// the secret that keyed it: one without the other is corrupt.
pub(crate) fn fingerprint(
    table: &str,
    hex: Option<String>,
    key_version: Option<i32>,
) -> anyhow::Result<Option<Fingerprint>> {
    match (hex, key_version) {
        (None, None) => Ok(None),
        (Some(hex), Some(version)) => Ok(Some(Fingerprint::from_stored(hex, version))),
        (Some(_), None) => Err(bad(
            &format!("{table}.fingerprint_key"),
            "a fingerprint without the version of its secret",
        )),
        (None, Some(version)) => Err(bad(
            &format!("{table}.fingerprint_key"),
            format!("{version} without a fingerprint"),
        )),
    }
}

/// A fee's terms as stored in `fee_terms`: `percent_hundredths;fixed;min;max`, min and max
/// empty when absent (`250;1000;1500;`).
pub(crate) fn fee_terms_text(terms: &FeeTerms) -> String {
    let bound = |b: Option<i64>| b.map(|v| v.to_string()).unwrap_or_default();
    format!(
        "{};{};{};{}",
        terms.percent.hundredths(),
        terms.fixed,
        bound(terms.min),
        bound(terms.max)
    )
}

/// The fee of a row of `table`: its amount and, if a tariff applied, the terms.
pub(crate) fn fee(table: &str, amount: i64, terms: Option<&str>) -> anyhow::Result<Fee> {
    let column = format!("{table}.fee_terms");
    let terms = terms
        .map(|text| {
            let parts: Vec<&str> = text.split(';').collect();
            let [percent, fixed, min, max] = parts[..] else {
                return Err(bad(
                    &column,
                    format!("{text:?}: must be four ';'-separated parts"),
                ));
            };
            let number = |part: &str| {
                part.parse::<i64>()
                    .map_err(|e| bad(&column, format!("{text:?}: {e}")))
            };
            let bound = |part: &str| (!part.is_empty()).then(|| number(part)).transpose();
            let percent = u32::try_from(number(percent)?)
                .ok()
                .and_then(|h| Percent::from_hundredths(h).ok())
                .ok_or_else(|| bad(&column, format!("{text:?}: the percent is out of range")))?;
            FeeTerms::new(percent, number(fixed)?, bound(min)?, bound(max)?)
                .map_err(|e| bad(&column, format!("{text:?}: {e}")))
        })
        .transpose()?;
    if amount < 0 {
        return Err(bad(
            &format!("{table}.fee"),
            format!("{amount}: must not be negative"),
        ));
    }
    Ok(Fee { amount, terms })
}

/// `enabled` flags are 0 or 1.
pub(crate) fn flag(column: &str, value: i16) -> anyhow::Result<bool> {
    match value {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(bad(column, format!("{other}: must be 0 or 1"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_statuses_round_trip_and_unknown_numbers_are_invalid() {
        for each in [Status::Approved, Status::Declined, Status::Processing] {
            assert_eq!(status("s", status_code(each)).ok(), Some(each));
        }
        for unknown in [0, 4, -1] {
            assert!(status("s", unknown).is_err(), "{unknown}");
        }
    }
}
