//! `LedgerReader`: a merchant's balance transactions and statements, from its ledger entries.
//!
//! Every merchant entry records the balance it left and a merchant's entries are dated in the
//! order they were applied (see `store::money`), so the index on (merchant, currency,
//! created_at, id) serves all of it: a page of transactions at any depth is one range of it
//! (keyset on time and id, never an offset), a balance at any instant is the entry just
//! before it, and a day's sums are the range of that day. The fee account's entries
//! (`fee_income`) are not the merchant's; the index leaves them out, and every query here
//! names the same literal condition so that it can use the index.

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Integer, Text};
use domain::ledger::EntryKind;
use domain::ports::{LedgerReader, StoreError};
use domain::statement::{Book, Day, Held, KindSum};
use domain::transactions::{BalanceTransaction, TransactionQuery};
use domain::{Currency, MerchantId, Timestamp};

use crate::conn::DbConn;
use crate::database::Database;
use crate::rows;
use crate::work::{decode_all, snapshot_tx, TxError};

/// The merchant's own entries (the partial index's condition, as a literal).
const MERCHANTS_OWN: &str = "kind <> 'fee_income'";

/// An entry as read for a page: id, kind, operation, refund, dispute, deltas, what it left,
/// time.
type EntryRow = (
    i64,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    i64,
    i64,
    Option<i64>,
    Option<i64>,
    i64,
);

fn transaction(row: EntryRow) -> anyhow::Result<BalanceTransaction> {
    let (id, kind, operation, refund, dispute, available, held, available_after, held_after, at) =
        row;
    let left = |value: Option<i64>| {
        value.ok_or_else(|| anyhow::anyhow!("ledger entry {id} does not record its balance"))
    };
    Ok(BalanceTransaction {
        id,
        kind: entry_kind(&kind)?,
        operation_id: operation
            .map(|o| rows::operation_id("ledger.operation_id", &o))
            .transpose()?,
        refund_id: refund
            .map(|r| rows::refund_id("ledger.refund_id", &r))
            .transpose()?,
        dispute_id: dispute
            .map(|d| rows::parse("ledger.dispute_id", &d, domain::DisputeId::parse))
            .transpose()?,
        available_delta: available,
        held_delta: held,
        available_after: left(available_after)?,
        held_after: left(held_after)?,
        created_at: Timestamp::from_millis(at),
    })
}

fn entry_kind(text: &str) -> anyhow::Result<EntryKind> {
    EntryKind::parse(text).ok_or_else(|| anyhow::anyhow!("ledger.kind: unknown {text:?}"))
}

/// The page `query` asks for, and one more entry.
fn page<E: From<StoreError>>(
    conn: &mut DbConn,
    query: &TransactionQuery,
) -> Result<Vec<BalanceTransaction>, TxError<E>> {
    use crate::schema::ledger::dsl::*;
    let mut select = ledger
        .filter(merchant_id.eq(query.merchant_id.as_str().to_owned()))
        .filter(currency.eq(query.currency.as_str().to_owned()))
        .filter(sql::<Bool>(MERCHANTS_OWN))
        .into_boxed();
    if let Some(from) = query.from {
        select = select.filter(created_at.ge(from.millis()));
    }
    if let Some(to) = query.to {
        select = select.filter(created_at.lt(to.millis()));
    }
    if let Some(after) = query.after {
        select = select.filter(
            sql::<Bool>("(created_at, id) < (")
                .bind::<BigInt, _>(after.created_at.millis())
                .sql(", ")
                .bind::<BigInt, _>(after.id)
                .sql(")"),
        );
    }
    let found: Vec<EntryRow> = select
        .order((created_at.desc(), id.desc()))
        .limit(i64::from(query.limit) + 1)
        .select((
            id,
            kind,
            operation_id,
            refund_id,
            dispute_id,
            available_delta,
            held_delta,
            available_after,
            held_after,
            created_at,
        ))
        .load(conn)?;
    decode_all(found, transaction)
}

/// The merchant's balance just before `at`: what its last entry before then left (zeros
/// before its first).
fn balance_before<E: From<StoreError>>(
    conn: &mut DbConn,
    merchant: &str,
    in_currency: &str,
    at: Timestamp,
) -> Result<Held, TxError<E>> {
    use crate::schema::ledger::dsl::*;
    let last: Option<(Option<i64>, Option<i64>, i64)> = ledger
        .filter(merchant_id.eq(merchant))
        .filter(currency.eq(in_currency))
        .filter(sql::<Bool>(MERCHANTS_OWN))
        .filter(created_at.lt(at.millis()))
        .order((created_at.desc(), id.desc()))
        .select((available_after, held_after, id))
        .first(conn)
        .optional()?;
    match last {
        None => Ok(Held::default()),
        Some((Some(available), Some(held), _)) => Ok(Held { available, held }),
        Some((_, _, entry)) => Err(crate::work::corrupt(anyhow::anyhow!(
            "ledger entry {entry} does not record its balance"
        ))),
    }
}

/// A group of one day's entries, as [`DAY_SUMS`] reads it.
#[derive(QueryableByName)]
struct SumRow {
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Integer)]
    refund: i32,
    #[diesel(sql_type = Integer)]
    dispute: i32,
    #[diesel(sql_type = Integer)]
    from_held: i32,
    #[diesel(sql_type = BigInt)]
    count: i64,
    #[diesel(sql_type = BigInt)]
    available: i64,
    #[diesel(sql_type = BigInt)]
    held: i64,
}

/// One day's entries of a merchant, summed by kind, by whether they name a refund or a
/// dispute and by whether they moved the held balance. `$n` parameters, each once and in order, so SQLite
/// numbers them as PostgreSQL does.
const DAY_SUMS: &str = "\
SELECT kind,
       CASE WHEN refund_id IS NULL THEN 0 ELSE 1 END AS refund,
       CASE WHEN dispute_id IS NULL THEN 0 ELSE 1 END AS dispute,
       CASE WHEN held_delta = 0 THEN 0 ELSE 1 END AS from_held,
       CAST(COUNT(*) AS BIGINT) AS count,
       CAST(SUM(available_delta) AS BIGINT) AS available,
       CAST(SUM(held_delta) AS BIGINT) AS held
FROM ledger
WHERE merchant_id = $1 AND currency = $2 AND kind <> 'fee_income'
  AND created_at >= $3 AND created_at < $4
GROUP BY 1, 2, 3, 4
ORDER BY 1, 2, 3, 4";

fn day_sums<E: From<StoreError>>(
    conn: &mut DbConn,
    merchant: &str,
    currency: &str,
    day: &Day,
) -> Result<Vec<KindSum>, TxError<E>> {
    let found: Vec<SumRow> = diesel::sql_query(DAY_SUMS)
        .bind::<Text, _>(merchant)
        .bind::<Text, _>(currency)
        .bind::<BigInt, _>(day.start.millis())
        .bind::<BigInt, _>(day.end.millis())
        .load(conn)?;
    decode_all(found, |row| {
        Ok(KindSum {
            kind: entry_kind(&row.kind)?,
            refund: row.refund != 0,
            dispute: row.dispute != 0,
            from_held: row.from_held != 0,
            count: row.count,
            available: row.available,
            held: row.held,
        })
    })
}

#[async_trait]
impl LedgerReader for Database {
    async fn transactions(
        &self,
        query: &TransactionQuery,
    ) -> Result<Vec<BalanceTransaction>, StoreError> {
        let query = query.clone();
        self.read_replica(move |conn| page(conn, &query)).await
    }

    async fn book(
        &self,
        merchant: &MerchantId,
        currency: Currency,
        days: &[Day],
    ) -> Result<Book, StoreError> {
        let merchant = merchant.as_str().to_owned();
        let days = days.to_vec();
        self.read_replica(move |conn| {
            snapshot_tx(conn, |conn| {
                let code = currency.as_str();
                let Some(first) = days.first() else {
                    return Ok(Book {
                        opening: Held::default(),
                        days: Vec::new(),
                    });
                };
                let opening = balance_before(conn, &merchant, code, first.start)?;
                let mut book = Vec::with_capacity(days.len());
                for day in &days {
                    let sums = day_sums(conn, &merchant, code, day)?;
                    book.push((sums, balance_before(conn, &merchant, code, day.end)?));
                }
                Ok(Book {
                    opening,
                    days: book,
                })
            })
        })
        .await
    }

    async fn read_lag(&self) -> Result<Option<i64>, StoreError> {
        Database::read_lag(self).await
    }
}
