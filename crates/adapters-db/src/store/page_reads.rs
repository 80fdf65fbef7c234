//! Page reads of an acquirer's payment, claimed across processes (`page_reads`): see
//! [`OperationStore::claim_page_read`](domain::ports::OperationStore::claim_page_read).

use std::time::Duration;

use diesel::sql_types::{BigInt, Text};
use diesel::RunQueryDsl;
use domain::ports::StoreError;
use domain::{OperationId, Timestamp};

use crate::conn::DbConn;
use crate::database::Database;

/// The claim: a new row, or the existing one moved to `now` only if its last read was at or
/// before the threshold; one row changed means this claimer won. One statement, so two
/// claimers cannot both see an old read: on PostgreSQL the second waits for the first's row
/// lock and then finds the row it wrote; on SQLite writers take turns.
///
/// Binds: 1 operation id, 2 now, 3 the latest last read that lets a new one happen.
const CLAIM: &str = "\
INSERT INTO page_reads (operation_id, read_at)
VALUES ({p}1, {p}2)
ON CONFLICT (operation_id) DO UPDATE SET read_at = excluded.read_at
WHERE page_reads.read_at <= {p}3";

/// [`CLAIM`] in the dialect of `conn`'s backend.
fn claim_sql(conn: &DbConn) -> String {
    let placeholder = match conn {
        DbConn::Pg(_) => "$",
        DbConn::Sqlite(_) => "?",
    };
    CLAIM.replace("{p}", placeholder)
}

impl Database {
    /// See [`OperationStore::claim_page_read`](domain::ports::OperationStore::claim_page_read).
    pub(crate) async fn claim_read(
        &self,
        id: OperationId,
        now: Timestamp,
        gap: Duration,
    ) -> Result<bool, StoreError> {
        let gap_ms = i64::try_from(gap.as_millis()).unwrap_or(i64::MAX);
        let latest = now.millis().saturating_sub(gap_ms);
        let id = id.to_string();
        self.write_one(move |conn| {
            let changed = diesel::sql_query(claim_sql(conn))
                .bind::<Text, _>(&id)
                .bind::<BigInt, _>(now.millis())
                .bind::<BigInt, _>(latest)
                .execute(conn)?;
            Ok(changed == 1)
        })
        .await
    }
}
