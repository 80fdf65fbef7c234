//! What the operator's fee accounts earned: the sums of the ledger's `fee_income` entries.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use domain::ports::StoreError;
use domain::{Currency, Timestamp};

use crate::conn::DbConn;
use crate::rows;
use crate::work::{decode_all, TxError};

use super::overview::dialect;

/// Per currency, the fee income entries created at or after `{p}1`. The literal
/// `kind = 'fee_income'` lets the planner use the partial index `ledger_fee_income
/// (currency, created_at)`.
const FEE_INCOME: &str = "\
SELECT currency, CAST(SUM(available_delta) AS BIGINT) AS earned
FROM ledger
WHERE kind = 'fee_income' AND created_at >= {p}1
GROUP BY currency
ORDER BY currency";

#[derive(QueryableByName)]
struct EarnedRow {
    #[diesel(sql_type = Text)]
    currency: String,
    #[diesel(sql_type = BigInt)]
    earned: i64,
}

/// What each currency's fee account earned at or after `since`, by currency code; a currency
/// that earned nothing then is left out.
pub(super) fn fee_income(
    conn: &mut DbConn,
    since: Timestamp,
) -> Result<Vec<(Currency, i64)>, TxError<StoreError>> {
    let found: Vec<EarnedRow> = diesel::sql_query(dialect(conn, FEE_INCOME))
        .bind::<BigInt, _>(since.millis())
        .load(conn)?;
    decode_all(found, |row| {
        Ok((
            rows::currency("ledger.currency", &row.currency)?,
            row.earned,
        ))
    })
}
