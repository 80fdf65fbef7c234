//! Rows <-> domain values. Unknown or invalid stored values are an error, never a default.

mod catalog;
mod operation;

pub(crate) use catalog::{
    merchant_from_rows, route_from_row, MerchantRow, NewMerchantRow, NewRouteRow, RouteRow,
};
pub(crate) use operation::{
    action_json, operation_from_row, HoldMany, InsertMany, NewOperationRow, OperationRow,
};

use anyhow::anyhow;
use domain::{Currency, Direction, MerchantId, OperationId, PaymentMethod, Status, ValueError};

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

pub(crate) fn status(column: &str, code: i16) -> anyhow::Result<Status> {
    Status::from_code(i64::from(code)).map_err(|e| bad(column, format!("{code}: {e}")))
}

/// `enabled` flags are 0 or 1.
pub(crate) fn flag(column: &str, value: i16) -> anyhow::Result<bool> {
    match value {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(bad(column, format!("{other}: must be 0 or 1"))),
    }
}
