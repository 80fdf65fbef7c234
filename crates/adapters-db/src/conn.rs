//! The connection type over both backends and the pool's connection manager.

use std::sync::atomic::{AtomicU32, Ordering};

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::r2d2::{Error as PoolError, R2D2Connection};
use diesel::sql_types::BigInt;
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, QueryResult, RunQueryDsl};

use crate::target::Target;

/// A connection to either backend: queries written once with diesel's DSL run on both, and a
/// `match` reaches the inner connection for what differs.
#[derive(diesel::MultiConnection)]
pub(crate) enum DbConn {
    Pg(PgConnection),
    Sqlite(SqliteConnection),
}

/// A connection as the pool keeps it, with whether it was found lost (see
/// `crate::work::is_connection_lost`): the pool drops a lost one when it comes back instead of
/// handing it out again (diesel alone sees only a broken transaction manager, not a closed
/// PostgreSQL connection).
pub(crate) struct Pooled {
    conn: DbConn,
    lost: bool,
}

impl Pooled {
    /// The pool drops it when it comes back.
    pub(crate) fn mark_lost(&mut self) {
        self.lost = true;
    }

    pub(crate) fn is_lost(&self) -> bool {
        self.lost
    }
}

impl std::ops::Deref for Pooled {
    type Target = DbConn;

    fn deref(&self) -> &DbConn {
        &self.conn
    }
}

impl std::ops::DerefMut for Pooled {
    fn deref_mut(&mut self) -> &mut DbConn {
        &mut self.conn
    }
}

/// The rowid of the row `lite` inserted last: the id of a table whose `id` is its rowid
/// (`INTEGER PRIMARY KEY`).
pub(crate) fn last_insert_rowid(lite: &mut SqliteConnection) -> QueryResult<i64> {
    diesel::select(diesel::dsl::sql::<BigInt>("last_insert_rowid()")).get_result(lite)
}

/// How long an SQLite connection waits for another writer (another process) before `BUSY`.
pub(crate) const SQLITE_BUSY_TIMEOUT_MS: u32 = 5_000;

/// Set on every SQLite connection: WAL so readers never block the writer, a busy timeout,
/// foreign keys, `synchronous = NORMAL` (durable across process crashes in WAL mode), the
/// savepoints' sub-journals in memory (each grouped write runs in a savepoint, see
/// `crate::group`; on disk they were a write per page touched), and checkpoints left to the
/// checkpoint thread up to a backstop (see `crate::checkpoint`).
fn sqlite_pragmas() -> String {
    format!(
        "PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}; PRAGMA journal_mode = WAL; \
         PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY; \
         PRAGMA wal_autocheckpoint = {BACKSTOP_PAGES};"
    )
}

/// How many counter slots PostgreSQL's `operation_counts` has (`slot` 0 to 63, migration
/// `counter_slots`): the pool numbers its connections modulo this ([`Manager`]), and
/// [`PG_SLOT`]'s fallback takes the process id modulo the same.
pub(crate) const PG_COUNTER_SLOTS: u32 = 64;

/// PostgreSQL: the counter slot of a statement's unit of work, its connection's own, which
/// the pool sets on each connection it opens (`gateway.counter_slot`, one after another
/// from a random start: [`Manager`]; `operation_counts.slot` is 0 to 63 there,
/// migration `counter_slots`). Two transactions wait on one counter row only if they add to
/// the same slot, and a connection runs one transaction at a time: two connections of one
/// pool share a slot only if it opened 64 between them, so its transactions do not wait on
/// each other's counters. Drawn at random from eight, any two concurrent ones shared a slot
/// with a chance of one in eight, and the second waited for the first's commit. A
/// connection without the setting (say, behind a pooler that hands out server connections
/// per transaction) adds to the slot of its server process's id modulo 64 instead of
/// failing. The rows a minute's counters take grow with the slots written, not with time.
pub(crate) const PG_SLOT: &str = "CAST(COALESCE(current_setting('gateway.counter_slot', true), \
     CAST(pg_backend_pid() % 64 AS TEXT)) AS SMALLINT)";

/// PostgreSQL: the latest time a ledger entry may be dated, in milliseconds, as SQL text:
/// the database's clock now plus a second. A gateway process whose clock runs ahead dates
/// its entries no later than this, so it cannot push a balance's later entries into the
/// future (a balance's entries are never dated before the one before them, see
/// `store::money`). A macro, so that statements written as constants can `concat!` it.
macro_rules! pg_latest_entry_at {
    () => {
        "(CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) + 1000)"
    };
}
pub(crate) use pg_latest_entry_at;

/// The WAL size (pages) past which an SQLite commit checkpoints by itself: the backstop
/// behind the checkpoint thread and the writer's catch-up (see `crate::checkpoint`).
pub(crate) const BACKSTOP_PAGES: u32 = 20_000;

/// Set on every PostgreSQL connection: the isolation the conditional updates are written for,
/// whatever the server's default; and an end to a transaction left idle by a frozen process
/// (stopped, paused, swapped out), whose row locks (a balance's, say) would otherwise stop
/// every other process: after 60 s the server ends that session (rolling the transaction
/// back), and the process, once it runs again, finds its connection lost: at a statement
/// before its COMMIT it runs the unit again, at the COMMIT itself it answers 503 (an unknown
/// outcome, resolved by the merchant's retry). No gateway transaction waits for anything but
/// the database, so none is idle that long.
const PG_SESSION: &str =
    "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED; \
     SET idle_in_transaction_session_timeout = '60s'";

/// The counter slot of the next connection: one after the previous one's, so two connections
/// of one pool share a slot only if it opened 64 between them. See [`PG_SLOT`].
fn next_counter_slot(next: &AtomicU32) -> u32 {
    next.fetch_add(1, Ordering::Relaxed) % PG_COUNTER_SLOTS
}

/// Opens connections for the pool, to exactly the backend the URL named (diesel's derived
/// `establish` would try each backend in turn, and SQLite accepts any string as a file name).
/// Each PostgreSQL connection gets its own counter slot (`gateway.counter_slot`).
#[derive(Debug)]
pub(crate) struct Manager {
    target: Target,
    /// The next connection's counter slot. It starts at a random one, so that the pools of
    /// several gateways on one database do not all start at slot 0.
    counter_slots: AtomicU32,
}

impl Manager {
    pub(crate) fn new(target: Target) -> Self {
        if matches!(target, Target::Postgres(_)) {
            // OpenSSL set up before libpq first uses it, without its clean-up at exit: that
            // clean-up frees what a pool thread may still use while the process exits (a
            // short CLI command whose pool is still opening its idle connection crashed so).
            openssl_sys::init();
        }
        let start = u32::from(uuid::Uuid::new_v4().as_bytes()[0]);
        Self {
            target,
            counter_slots: AtomicU32::new(start),
        }
    }
}

impl Manager {
    fn open(&self) -> Result<DbConn, PoolError> {
        match &self.target {
            Target::Sqlite(path) => {
                let mut conn =
                    SqliteConnection::establish(path).map_err(PoolError::ConnectionError)?;
                conn.batch_execute(&sqlite_pragmas())
                    .map_err(PoolError::QueryError)?;
                Ok(DbConn::Sqlite(conn))
            }
            Target::Postgres(url) => {
                let mut conn = PgConnection::establish(url).map_err(PoolError::ConnectionError)?;
                let slot = next_counter_slot(&self.counter_slots);
                conn.batch_execute(&format!("{PG_SESSION}; SET gateway.counter_slot = {slot}"))
                    .map_err(PoolError::QueryError)?;
                Ok(DbConn::Pg(conn))
            }
        }
    }
}

impl diesel::r2d2::ManageConnection for Manager {
    type Connection = Pooled;
    type Error = PoolError;

    fn connect(&self) -> Result<Pooled, PoolError> {
        Ok(Pooled {
            conn: self.open()?,
            lost: false,
        })
    }

    fn is_valid(&self, conn: &mut Pooled) -> Result<(), PoolError> {
        conn.conn.ping().map_err(PoolError::QueryError)
    }

    fn has_broken(&self, conn: &mut Pooled) -> bool {
        conn.lost || conn.conn.is_broken()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fallback_slot_is_taken_modulo_the_slots_there_are() {
        assert!(PG_SLOT.contains(&format!("pg_backend_pid() % {PG_COUNTER_SLOTS} ")));
    }

    #[test]
    fn sixty_four_connections_in_a_row_get_sixty_four_counter_slots() {
        // From any start, wrapping past u32::MAX included: 64 connections, 64 slots.
        for start in [0, 7, 63, 200, u32::MAX - 10] {
            let next = AtomicU32::new(start);
            let slots: std::collections::HashSet<u32> =
                (0..64).map(|_| next_counter_slot(&next)).collect();
            assert_eq!(slots.len(), 64, "from {start}");
            assert!(slots.iter().all(|slot| *slot < PG_COUNTER_SLOTS));
        }
    }

    /// The slot a statement of `conn` adds its counters to ([`PG_SLOT`], as written),
    /// and the connection's own setting, if any (without it, `PG_SLOT` falls back to the
    /// server process's id).
    fn counter_slot_of(conn: &mut DbConn) -> (i16, Option<String>) {
        use diesel::dsl::sql;
        use diesel::sql_types::{Nullable, SmallInt, Text};
        use diesel::RunQueryDsl;
        let DbConn::Pg(pg) = conn else {
            panic!("a PostgreSQL connection")
        };
        diesel::select((
            sql::<SmallInt>(PG_SLOT),
            sql::<Nullable<Text>>("current_setting('gateway.counter_slot', true)"),
        ))
        .get_result(pg)
        .expect("the counter slot")
    }

    #[test]
    fn a_live_postgres_session_ends_a_transaction_idle_for_a_minute() {
        use diesel::dsl::sql;
        use diesel::sql_types::Text;
        use diesel::RunQueryDsl;
        let Some(db) = testkit::FreshDatabase::postgres() else {
            return;
        };
        let manager = Manager::new(Target::parse(&db.url).expect("a PostgreSQL URL"));
        let mut conn = diesel::r2d2::ManageConnection::connect(&manager).expect("a connection");
        let DbConn::Pg(pg) = &mut conn.conn else {
            panic!("a PostgreSQL connection")
        };
        let (idle, isolation): (String, String) = diesel::select((
            sql::<Text>("current_setting('idle_in_transaction_session_timeout')"),
            sql::<Text>("current_setting('default_transaction_isolation')"),
        ))
        .get_result(pg)
        .expect("the session's settings");
        assert_eq!(
            (idle.as_str(), isolation.as_str()),
            ("1min", "read committed")
        );
    }

    #[test]
    fn live_postgres_connections_of_one_pool_have_counter_slots_of_their_own() {
        let Some(db) = testkit::FreshDatabase::postgres() else {
            return;
        };
        let manager = Manager::new(Target::parse(&db.url).expect("a PostgreSQL URL"));
        // Opened one after another and all kept open, as a pool's are: each one's slot, read
        // back from the server through the expression the counters' writes use.
        let mut connections: Vec<Pooled> = (0..3)
            .map(|_| diesel::r2d2::ManageConnection::connect(&manager).expect("a connection"))
            .collect();
        let read: Vec<(i16, Option<String>)> =
            connections.iter_mut().map(|c| counter_slot_of(c)).collect();
        for (slot, setting) in &read {
            assert_eq!(
                setting.as_deref(),
                Some(slot.to_string().as_str()),
                "the slot is the connection's own setting, not the process id's fallback"
            );
        }
        let first = i64::from(read[0].0);
        let expected: Vec<i16> = (0..3)
            .map(|i| i16::try_from((first + i) % i64::from(PG_COUNTER_SLOTS)).expect("a slot"))
            .collect();
        let slots: Vec<i16> = read.iter().map(|(slot, _)| *slot).collect();
        assert_eq!(
            slots, expected,
            "one after another, modulo {PG_COUNTER_SLOTS}"
        );
    }
}
