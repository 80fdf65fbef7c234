//! The `operations` row. Its columns are listed once, in [`operation_columns!`], and every
//! shape that needs them (the row written, the row read, the column arrays of a batch, the
//! column list of hand-written statements) is generated from that list.

use std::collections::BTreeMap;

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::AstPass;
use diesel::sql_types::{Array, BigInt, Integer, Nullable, SmallInt, Text};
use domain::operation::{
    DepositPart, Opening, Operation, OperationUrls, Part, PayoutPart, ProviderState,
};
use domain::signature::Fingerprint;
use domain::{
    Amount, Direction, HttpUrl, KeptObject, MerchantOperationId, Timestamp, UserData, UserId,
};

use super::action::ActionColumn;
use super::{bad, parse};
use crate::binds::Binds;
use crate::journal;
use crate::schema::operations;

/// Calls `$then!` with every column of `operations`, in table order: its name, its SQL type,
/// its type in the row written (which may borrow from the operation) and in the row read.
macro_rules! operation_columns {
    ($then:ident) => {
        $then! {
            id: Text = String, String;
            merchant_id: Text = &'a str, String;
            direction: Text = &'static str, String;
            method: Text = &'static str, String;
            status: SmallInt = i16, i16;
            amount: BigInt = i64, i64;
            currency: Text = &'a str, String;
            user_id: Text = &'a str, String;
            merchant_operation_id: Nullable<Text> = Option<&'a str>, Option<String>;
            callback_url: Nullable<Text> = Option<&'a str>, Option<String>;
            success_url: Nullable<Text> = Option<&'a str>, Option<String>;
            fail_url: Nullable<Text> = Option<&'a str>, Option<String>;
            processing_url: Nullable<Text> = Option<&'a str>, Option<String>;
            requisites: Nullable<Text> = Option<String>, Option<String>;
            user_data: Nullable<Text> = Option<String>, Option<String>;
            action: Nullable<Text> = Option<String>, Option<String>;
            error_code: Nullable<Text> = Option<&'static str>, Option<String>;
            error_message: Nullable<Text> = Option<&'a str>, Option<String>;
            route_id: BigInt = i64, i64;
            expires_at: Nullable<BigInt> = Option<i64>, Option<i64>;
            provider_state: Nullable<Text> = Option<&'a str>, Option<String>;
            due_at: Nullable<BigInt> = Option<i64>, Option<i64>;
            created_at: BigInt = i64, i64;
            updated_at: BigInt = i64, i64;
            fingerprint: Nullable<Text> = Option<&'a str>, Option<String>;
            provider: Text = &'a str, String;
            fingerprint_key: Nullable<Integer> = Option<i32>, Option<i32>;
            fee: BigInt = i64, i64;
            fee_terms: Nullable<Text> = Option<String>, Option<String>;
        }
    };
}

macro_rules! operation_rows {
    (
        $first:ident: $first_sql:ty = $first_write:ty, $first_read:ty;
        $($column:ident: $sql:ty = $write:ty, $read:ty;)*
    ) => {
        /// An operation as written; `None` is written as NULL (one statement shape, cached once).
        #[derive(Insertable)]
        #[diesel(table_name = operations, treat_none_as_default_value = false)]
        pub(crate) struct NewOperationRow<'a> {
            $first: $first_write,
            $($column: $write,)*
        }

        /// An operation as read.
        #[derive(Queryable, Selectable)]
        #[diesel(table_name = operations)]
        pub(crate) struct OperationRow {
            $first: $first_read,
            $($column: $read,)*
        }

        /// Many new operations as one PostgreSQL statement: one array parameter per column,
        /// unnested into rows. The text never changes with the number of rows, so it is
        /// prepared once per connection. Rows whose id or merchantOperationId is taken are
        /// skipped (`ON CONFLICT DO NOTHING`); the rows inserted get their `created` events
        /// and counters in the same statement (see `crate::journal`). The statement returns
        /// the ids it inserted.
        pub(crate) struct InsertMany<'a> {
            $first: Vec<&'a $first_write>,
            $($column: Vec<&'a $write>,)*
            /// Each row's minute of creation, for its counter.
            minute: Vec<i64>,
            /// Each row's `created` event detail.
            detail: Vec<String>,
        }

        impl<'a> NewOperationRow<'a> {
            /// The columns [`NewOperationRow::push_values`] writes, in its order.
            pub(crate) const COLUMNS: &'static str =
                concat!(stringify!($first), $(", ", stringify!($column),)*);

            /// [`NewOperationRow::COLUMNS`] of a row named `r`.
            pub(crate) const REQ_COLUMNS: &'static str =
                concat!("r.", stringify!($first), $(", r.", stringify!($column),)*);

            /// The row's values as bind parameters, comma-separated, in
            /// [`NewOperationRow::COLUMNS`] order (for hand-written PostgreSQL statements).
            pub(crate) fn push_values<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
                let mut binds = Binds::new(&mut out);
                binds.bind::<$first_sql, _>(&self.$first)?;
                $(binds.bind::<$sql, _>(&self.$column)?;)*
                Ok(())
            }
        }

        impl<'a> InsertMany<'a> {
            pub(crate) fn new(rows: &'a [NewOperationRow<'a>]) -> anyhow::Result<Self> {
                Ok(Self {
                    $first: rows.iter().map(|r| &r.$first).collect(),
                    $($column: rows.iter().map(|r| &r.$column).collect(),)*
                    minute: rows.iter().map(|r| journal::minute_of(r.created_at)).collect(),
                    detail: rows
                        .iter()
                        .map(|r| journal::created_text(r.status))
                        .collect::<anyhow::Result<_>>()?,
                })
            }

            /// The column arrays as bind parameters, comma-separated, in
            /// [`NewOperationRow::COLUMNS`] order.
            fn push_arrays<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
                let mut binds = Binds::new(&mut out);
                binds.bind::<Array<$first_sql>, _>(&self.$first)?;
                $(binds.bind::<Array<$sql>, _>(&self.$column)?;)*
                Ok(())
            }

            /// The arrays of each row's minute and event detail, each after a comma.
            fn push_journal<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
                Binds::after(&mut out)
                    .bind::<Array<BigInt>, _>(&self.minute)?
                    .bind::<Array<Text>, _>(&self.detail)?;
                Ok(())
            }
        }
    };
}

operation_columns!(operation_rows);

fn json(value: &impl serde::Serialize) -> anyhow::Result<String> {
    Ok(serde_json::to_string(value)?)
}

/// The JSON text an action is stored as (also what `replace_action` compares).
pub(crate) fn action_json(action: &domain::operation::Action) -> anyhow::Result<String> {
    json(&ActionColumn::from(action))
}

impl<'a> NewOperationRow<'a> {
    pub(crate) fn new(
        op: &'a Operation,
        fingerprint: Option<&'a Fingerprint>,
    ) -> anyhow::Result<Self> {
        let entries = op.user_data().entries();
        let urls = op.urls();
        Ok(Self {
            id: op.id().to_string(),
            merchant_id: op.merchant_id().as_str(),
            direction: op.direction().as_str(),
            method: op.method().as_str(),
            status: super::status_code(op.status()),
            amount: op.amount().minor(),
            currency: op.opening().currency.as_str(),
            user_id: op.user_id().as_str(),
            merchant_operation_id: op.merchant_operation_id().map(|m| m.as_str()),
            callback_url: urls.callback.as_ref().map(HttpUrl::as_str),
            success_url: urls.success.as_ref().map(HttpUrl::as_str),
            fail_url: urls.fail.as_ref().map(HttpUrl::as_str),
            processing_url: urls.processing.as_ref().map(HttpUrl::as_str),
            requisites: op.requisites().map(json).transpose()?,
            user_data: (!entries.is_empty()).then(|| json(&entries)).transpose()?,
            action: op.action().map(action_json).transpose()?,
            error_code: op.decline().map(|d| d.code.as_str()),
            error_message: op.decline().map(|d| d.message.as_str()),
            route_id: op.route_id(),
            expires_at: op.expires_at().map(Timestamp::millis),
            provider_state: op.provider_state().map(ProviderState::as_str),
            due_at: op.due_at().map(Timestamp::millis),
            created_at: op.created_at().millis(),
            updated_at: op.updated_at().millis(),
            fingerprint: fingerprint.map(Fingerprint::as_str),
            provider: op.provider(),
            fingerprint_key: fingerprint.map(Fingerprint::key_version),
            fee: op.fee().amount,
            fee_terms: op.fee().terms.as_ref().map(super::fee_terms_text),
        })
    }
}

/// The statement's text is the same for any number of rows.
pub(crate) struct InsertManyId;

impl diesel::query_builder::QueryId for InsertMany<'_> {
    type QueryId = InsertManyId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl diesel::query_builder::QueryFragment<Pg> for InsertMany<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH req AS (SELECT * FROM unnest(");
        self.push_arrays(out.reborrow())?;
        self.push_journal(out.reborrow())?;
        out.push_sql(") AS r (");
        out.push_sql(NewOperationRow::COLUMNS);
        out.push_sql(", minute, detail)), op AS (INSERT INTO operations (");
        out.push_sql(NewOperationRow::COLUMNS);
        out.push_sql(") SELECT ");
        out.push_sql(NewOperationRow::REQ_COLUMNS);
        out.push_sql(" FROM req r ON CONFLICT DO NOTHING RETURNING id)");
        journal::push_created(&mut out);
        out.push_sql(" SELECT id FROM op");
        Ok(())
    }
}

/// Many payouts with their holds as one PostgreSQL statement: for each merchant and currency
/// the batch's holds are summed and taken with one conditional update (the balance rows are
/// locked in key order first); the operations, their `created` events and counters (see
/// `crate::journal`) and ledger entries of the merchants whose update found the money are
/// inserted. Returns the ids written; a merchant that was short
/// for the whole batch writes nothing, and its rows are retried one by one. A taken
/// merchantOperationId fails the whole statement (no `ON CONFLICT` here: a hold must not be
/// taken for a row that is not written).
///
/// Each move must belong to its row's operation, merchant and currency.
pub(crate) struct HoldMany<'a> {
    ops: InsertMany<'a>,
    kind: Vec<&'static str>,
    available: Vec<i64>,
    held: Vec<i64>,
    at: Vec<i64>,
}

impl<'a> HoldMany<'a> {
    pub(crate) fn new(
        rows: &'a [NewOperationRow<'a>],
        moves: &[&domain::ledger::BalanceMove],
    ) -> anyhow::Result<Self> {
        Ok(Self {
            ops: InsertMany::new(rows)?,
            kind: moves.iter().map(|m| m.kind.as_str()).collect(),
            available: moves.iter().map(|m| m.available).collect(),
            held: moves.iter().map(|m| m.held).collect(),
            at: moves.iter().map(|m| m.at.millis()).collect(),
        })
    }
}

/// The statement's text is the same for any number of rows.
pub(crate) struct HoldManyId;

impl diesel::query_builder::QueryId for HoldMany<'_> {
    type QueryId = HoldManyId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl diesel::query_builder::QueryFragment<Pg> for HoldMany<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH req AS (SELECT * FROM unnest(");
        self.ops.push_arrays(out.reborrow())?;
        Binds::after(&mut out)
            .bind::<Array<Text>, _>(&self.kind)?
            .bind::<Array<BigInt>, _>(&self.available)?
            .bind::<Array<BigInt>, _>(&self.held)?
            .bind::<Array<BigInt>, _>(&self.at)?;
        self.ops.push_journal(out.reborrow())?;
        out.push_sql(") WITH ORDINALITY AS r (");
        out.push_sql(NewOperationRow::COLUMNS);
        out.push_sql(concat!(
            ", kind, da, dh, at, minute, detail, ord)), \
             need AS (SELECT merchant_id, currency, CAST(sum(da) AS BIGINT) AS da, \
                 CAST(sum(dh) AS BIGINT) AS dh, max(at) AS at \
                 FROM req GROUP BY merchant_id, currency), \
             locked AS (SELECT b.merchant_id FROM balances b JOIN need n \
                 ON b.merchant_id = n.merchant_id AND b.currency = n.currency \
                 ORDER BY b.merchant_id, b.currency FOR UPDATE OF b), \
             hold AS (UPDATE balances b SET available = b.available + n.da, \
                 held = b.held + n.dh, entry_at = GREATEST(b.entry_at, LEAST(n.at, ",
            crate::conn::pg_latest_entry_at!(),
            ")) FROM need n \
                 WHERE b.merchant_id = n.merchant_id AND b.currency = n.currency \
                 AND b.available + n.da >= 0 AND b.held + n.dh >= 0 \
                 AND (SELECT count(*) FROM locked) >= 0 \
                 RETURNING b.merchant_id, b.currency, b.available, b.held, b.entry_at), \
             op AS (INSERT INTO operations (",
        ));
        out.push_sql(NewOperationRow::COLUMNS);
        out.push_sql(") SELECT ");
        out.push_sql(NewOperationRow::REQ_COLUMNS);
        out.push_sql(
            " FROM req r JOIN hold h ON h.merchant_id = r.merchant_id AND h.currency = r.currency \
             RETURNING id)",
        );
        journal::push_created(&mut out);
        // Each entry records the balance it left: what the merchant's one update left, less
        // the holds queued after it; all of a batch are dated at its latest time, never
        // before the balance's previous entry (see `store::money`), and numbered in queue
        // order.
        out.push_sql(
            " INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, \
                 operation_id, created_at, available_after, held_after) \
             SELECT r.merchant_id, r.currency, r.kind, r.da, r.dh, r.id, h.entry_at, \
                 h.available - COALESCE(sum(r.da) OVER later, 0), \
                 h.held - COALESCE(sum(r.dh) OVER later, 0) \
             FROM req r JOIN op ON op.id = r.id \
             JOIN hold h ON h.merchant_id = r.merchant_id AND h.currency = r.currency \
             WINDOW later AS (PARTITION BY r.merchant_id, r.currency ORDER BY r.ord DESC \
                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) \
             ORDER BY r.ord RETURNING operation_id",
        );
        Ok(())
    }
}

impl diesel::query_builder::Query for HoldMany<'_> {
    type SqlType = Nullable<Text>;
}

impl RunQueryDsl<diesel::pg::PgConnection> for HoldMany<'_> {}

impl diesel::query_builder::Query for InsertMany<'_> {
    type SqlType = Text;
}

impl RunQueryDsl<diesel::pg::PgConnection> for InsertMany<'_> {}

/// A stored URL, as it was accepted (the rules of the day apply to requests, not to rows).
pub(super) fn url(text: Option<String>) -> Option<HttpUrl> {
    text.map(HttpUrl::from_stored)
}

fn from_json<T: serde::de::DeserializeOwned>(
    column: &str,
    text: Option<String>,
) -> anyhow::Result<Option<T>> {
    text.map(|t| serde_json::from_str(&t).map_err(|e| bad(column, e)))
        .transpose()
}

/// The domain operation and its stored fingerprint.
pub(crate) fn operation_from_row(
    row: OperationRow,
) -> anyhow::Result<(Operation, Option<Fingerprint>)> {
    let direction = super::direction("operations.direction", &row.direction)?;
    let entries: BTreeMap<String, String> =
        from_json("operations.user_data", row.user_data)?.unwrap_or_default();
    let user_data = UserData::from_stored(&entries)
        .map_err(|e| bad("operations.user_data", format!("{:?}", e.0)))?;
    let opening = Opening {
        id: super::operation_id("operations.id", &row.id)?,
        merchant_id: super::merchant_id("operations.merchant_id", &row.merchant_id)?,
        method: super::method("operations.method", direction, &row.method)?,
        amount: Amount::from_minor(row.amount)
            .map_err(|e| bad("operations.amount", format!("{}: {e}", row.amount)))?,
        currency: super::currency("operations.currency", &row.currency)?,
        user_id: UserId::from_stored(row.user_id),
        merchant_operation_id: row
            .merchant_operation_id
            .map(|m| {
                parse(
                    "operations.merchant_operation_id",
                    &m,
                    MerchantOperationId::parse,
                )
            })
            .transpose()?,
        urls: OperationUrls {
            callback: url(row.callback_url),
            success: url(row.success_url),
            fail: url(row.fail_url),
            processing: url(row.processing_url),
        },
        user_data,
        route_id: row.route_id,
        provider: row.provider,
        created_at: Timestamp::from_millis(row.created_at),
        fee: super::fee("operations", row.fee, row.fee_terms.as_deref())?,
    };
    let requisites: Option<KeptObject> = from_json("operations.requisites", row.requisites)?;
    let part = match direction {
        Direction::Deposit => Part::Deposit(DepositPart {
            requisites,
            action: from_json::<ActionColumn>("operations.action", row.action)?.map(Into::into),
            expires_at: row.expires_at.map(Timestamp::from_millis),
        }),
        Direction::Withdrawal => Part::Payout(PayoutPart {
            requisites,
            provider_state: row.provider_state.map(ProviderState::new),
            due_at: row.due_at.map(Timestamp::from_millis),
        }),
    };
    let state = super::state("operations", row.status, row.error_code, row.error_message)?;
    let operation =
        Operation::restore(opening, part, state, Timestamp::from_millis(row.updated_at))
            .map_err(|e| bad("operations.method", e))?;
    let fingerprint = super::fingerprint("operations", row.fingerprint, row.fingerprint_key)?;
    Ok((operation, fingerprint))
}
