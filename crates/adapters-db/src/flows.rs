//! The money at the gateway's edge per currency, for `ledger verify`: the merchants' balances
//! and the fee account against what came in and went out, read from the operations, refunds
//! and disputes themselves (not from the ledger, which the other half of the check compares the
//! balances with).

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use domain::ledger::Flows;
use domain::ports::StoreError;

use crate::conn::DbConn;
use crate::rows;
use crate::work::{decode_all, TxError};

#[derive(QueryableByName)]
struct FlowRow {
    #[diesel(sql_type = Text)]
    currency: String,
    #[diesel(sql_type = BigInt)]
    merchants: i64,
    #[diesel(sql_type = BigInt)]
    fees: i64,
    #[diesel(sql_type = BigInt)]
    came_in: i64,
    #[diesel(sql_type = BigInt)]
    went_out: i64,
}

/// One statement, so one snapshot. Status 1 is approved (deposits, payouts and refunds
/// alike); manual entries are the only money the ledger alone records. An accepted appeal
/// brought in its amount (`paid_not_credited`) or the difference between its amount and the
/// deposit's (`wrong_amount`, below zero when the deposit was too much); a lost chargeback
/// sent its amount back to the payer.
const FLOWS: &str = "\
SELECT currency,
       CAST(SUM(merchants) AS BIGINT) AS merchants,
       CAST(SUM(fees) AS BIGINT) AS fees,
       CAST(SUM(came_in) AS BIGINT) AS came_in,
       CAST(SUM(went_out) AS BIGINT) AS went_out
FROM (
    SELECT currency, available + held AS merchants, CAST(0 AS BIGINT) AS fees,
           CAST(0 AS BIGINT) AS came_in, CAST(0 AS BIGINT) AS went_out
    FROM balances
    UNION ALL
    SELECT currency, 0, available_delta, 0, 0 FROM ledger WHERE kind = 'fee_income'
    UNION ALL
    SELECT currency, 0, 0, amount, 0 FROM operations WHERE direction = 'deposit' AND status = 1
    UNION ALL
    SELECT currency, 0, 0, 0, amount FROM operations WHERE direction = 'withdrawal' AND status = 1
    UNION ALL
    SELECT currency, 0, 0, 0, amount FROM refunds WHERE status = 1
    UNION ALL
    SELECT currency, 0, 0,
           CASE WHEN available_delta > 0 THEN available_delta ELSE 0 END,
           CASE WHEN available_delta < 0 THEN -available_delta ELSE 0 END
    FROM ledger WHERE kind IN ('manual_credit', 'manual_debit')
    UNION ALL
    SELECT d.currency, 0, 0,
           CASE WHEN d.reason = 'wrong_amount' THEN d.amount - o.amount ELSE d.amount END, 0
    FROM disputes d JOIN operations o ON o.id = d.operation_id
    WHERE d.kind = 'appeal' AND d.status = 'accepted'
    UNION ALL
    SELECT currency, 0, 0, 0, amount FROM disputes WHERE kind = 'chargeback' AND status = 'lost'
) AS edge
GROUP BY currency
ORDER BY currency";

/// Every currency's flows.
pub(crate) fn ledger_flows<E: From<StoreError>>(
    conn: &mut DbConn,
) -> Result<Vec<Flows>, TxError<E>> {
    let found: Vec<FlowRow> = diesel::sql_query(FLOWS).load(conn)?;
    decode_all(found, |row| {
        Ok(Flows {
            currency: rows::currency("currency", &row.currency)?,
            merchants: row.merchants,
            fees: row.fees,
            came_in: row.came_in,
            went_out: row.went_out,
        })
    })
}
