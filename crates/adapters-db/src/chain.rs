//! The ledger check's chain: every merchant entry records the balance it left, which must be
//! the previous entry's (of the same balance, in date and number order) plus its own change,
//! and a balance's entries are dated in the order they are numbered.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use domain::ledger::BrokenEntry;
use domain::ports::StoreError;

use crate::conn::DbConn;
use crate::rows;
use crate::work::{decode_all, TxError};

#[derive(QueryableByName)]
struct BrokenRow {
    #[diesel(sql_type = Text)]
    merchant_id: String,
    #[diesel(sql_type = Text)]
    currency: String,
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// One statement over the whole ledger (a check, not a hot path): each entry beside the one
/// before it. Entries written before balances were recorded got theirs from the migration,
/// so they chain too.
const BROKEN: &str = "\
SELECT merchant_id, currency, id FROM (
    SELECT merchant_id, currency, id, available_delta, held_delta, available_after, held_after,
           LAG(available_after, 1, 0) OVER w AS before_available,
           LAG(held_after, 1, 0) OVER w AS before_held,
           LAG(id) OVER w AS before_id
    FROM ledger
    WHERE kind <> 'fee_income'
    WINDOW w AS (PARTITION BY merchant_id, currency ORDER BY created_at, id)
) AS chained
WHERE available_after IS NULL OR held_after IS NULL
   OR before_available IS NULL OR before_held IS NULL
   OR available_after <> before_available + available_delta
   OR held_after <> before_held + held_delta
   OR before_id > id
ORDER BY id
LIMIT $1";

/// The first `limit` broken entries.
pub(crate) fn broken_entries<E: From<StoreError>>(
    conn: &mut DbConn,
    limit: u32,
) -> Result<Vec<BrokenEntry>, TxError<E>> {
    let found: Vec<BrokenRow> = diesel::sql_query(BROKEN)
        .bind::<BigInt, _>(i64::from(limit))
        .load(conn)?;
    decode_all(found, |row| {
        Ok(BrokenEntry {
            merchant_id: rows::merchant_id("ledger.merchant_id", &row.merchant_id)?,
            currency: rows::currency("ledger.currency", &row.currency)?,
            entry_id: row.id,
        })
    })
}
