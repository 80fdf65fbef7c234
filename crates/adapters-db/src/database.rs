//! The [`Database`] handle: the pool, the backend, the caches.

use std::fmt;
use std::sync::{Arc, MutexGuard};
use std::time::Duration;

use anyhow::Context;
use diesel::r2d2::Pool;
use domain::fee::Tariff;
use domain::merchant::Merchant;
use domain::provider::AcquirerProvider;
use domain::route::Route;
use domain::MerchantId;
use tokio::sync::oneshot;

use crate::cache::TtlMap;
use crate::checkpoint::{CatchUp, CheckpointSource};
use crate::conn::DbConn;
use crate::conn::Manager;
use crate::crypto::{MasterKey, Vault};
use crate::group::Group;
use crate::jobs::{AttemptSave, KeyJob, RecordJob};
use crate::queue::InsertQueue;
use crate::rows::MerchantProfile;
use crate::sqlite_units::WriteGroups;
use crate::target::Target;
use crate::work::{
    blocking, lost_is_unsent, statement_tx, write_tx, Connections, TxError, Unavailable,
};
use domain::ports::StoreError;

/// Which database engine a [`Database`] runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        })
    }
}

/// Knobs of [`Database::connect_with`]; `DbOptions::default()` is what [`Database::connect`] uses.
#[derive(Debug, Clone)]
pub struct DbOptions {
    /// Pooled connections; `None` means 8 for SQLite (readers; writers queue for one lock)
    /// and 16 for PostgreSQL.
    pub max_connections: Option<u32>,
    /// How long a unit of work waits for a pooled connection before failing as unavailable;
    /// also how long `connect` waits for the first connection.
    pub connection_timeout: Duration,
    /// How long routes, merchants and providers are served from memory. At most 2 s by
    /// default, so a running gateway sees route, merchant and provider changes well within 5 s.
    /// Merchant secrets are served from memory for the shorter of this and [`SECRETS_TTL`],
    /// and a rotation returns only once that has run out everywhere (see `rotate_key`).
    pub cache_ttl: Duration,
    /// `GATEWAY_MASTER_KEY`: with it, merchant secrets and provider credentials are written
    /// encrypted and encrypted ones are read; without it, they are written as given and an
    /// encrypted one cannot be read (see [`Database::check_secrets`]).
    pub master_key: Option<MasterKey>,
    /// `GATEWAY_DATABASE_READ_URL`: a PostgreSQL replica for the reads that may lag
    /// ([`Database::read_replica`]); `None`: they read the primary.
    pub read_url: Option<String>,
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            max_connections: None,
            connection_timeout: Duration::from_secs(5),
            cache_ttl: Duration::from_secs(2),
            master_key: None,
            read_url: None,
        }
    }
}

/// Most merchants kept in the merchant cache.
const MERCHANT_CACHE_CAPACITY: usize = 10_000;

/// The longest any process serves a merchant's secrets from memory, counted from the start
/// of the read that found them. A rotation waits this long (plus a margin) after its commit
/// before it returns, so every lookup that starts after it returns, in any process, uses
/// secrets read after the rotation: a rotation applies from the next request.
pub const SECRETS_TTL: Duration = Duration::from_secs(1);

/// The gateway's storage: a connection pool on SQLite or PostgreSQL. Cheap to clone.
///
/// Implements the domain's storage ports; see the crate docs.
#[derive(Clone)]
pub struct Database {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) conns: Connections,
    /// The replica's connections, when `GATEWAY_DATABASE_READ_URL` names one.
    pub(crate) replica: Option<Connections>,
    pub(crate) backend: Backend,
    pub(crate) routes: TtlMap<(), Arc<Vec<Route>>>,
    /// Merchants without their secrets (unknown ids as `None`).
    pub(crate) merchants: TtlMap<MerchantId, Option<MerchantProfile>>,
    /// Known merchants with their secrets, each for at most [`SECRETS_TTL`] (their rows may
    /// have come from `merchants`, so those are at most both TTLs old).
    pub(crate) signing: TtlMap<MerchantId, Merchant>,
    pub(crate) providers: TtlMap<(), Arc<Vec<AcquirerProvider>>>,
    /// Each merchant's tariffs (see `crate::tariffs`).
    pub(crate) tariffs: TtlMap<MerchantId, Arc<Vec<Tariff>>>,
    /// PostgreSQL: plain new operations waiting to be written together.
    pub(crate) inserts: InsertQueue,
    /// SQLite: units of work waiting to be written together (see `crate::sqlite_group`).
    pub(crate) groups: WriteGroups,
    /// SQLite: set when the writer should checkpoint between groups (see `crate::checkpoint`).
    pub(crate) catch_up: CatchUp,
    /// PostgreSQL: callback attempt records waiting to be written together.
    pub(crate) records: Group<RecordJob>,
    /// Requests' reads of merchant secrets waiting to be read together
    /// (see `crate::directory`).
    pub(crate) key_reads: Group<KeyJob>,
    /// Attempt saves, awaited or not, written together (see `store::attempts`).
    pub(crate) attempt_saves: Group<AttemptSave>,
    /// Seals and opens merchant secrets and provider credentials.
    pub(crate) vault: Arc<Vault>,
}

impl CheckpointSource for Inner {
    fn pool(&self) -> &Pool<Manager> {
        &self.conns.pool
    }

    fn catch_up(&self) -> &CatchUp {
        &self.catch_up
    }
}

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the URL: it may carry a password.
        f.debug_struct("Database")
            .field("backend", &self.inner.backend)
            .finish_non_exhaustive()
    }
}

/// A replica's lag in milliseconds: the age of the last transaction it replayed while it has
/// not replayed all it received; 0 once it has (an idle primary sends nothing to replay), or
/// on a server that is not in recovery.
const LAG_MS: &str = "CASE WHEN NOT pg_is_in_recovery() \
     OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN CAST(0 AS BIGINT) \
     ELSE CAST(COALESCE(EXTRACT(EPOCH FROM (now() - pg_last_xact_replay_timestamp())) * 1000, 0) \
     AS BIGINT) END";

/// The replica's pool: PostgreSQL only, a quarter of the primary's connections (at least 2).
fn replica_pool(url: &str, options: &DbOptions) -> anyhow::Result<Connections> {
    let target = Target::parse(url)?;
    if !matches!(target, Target::Postgres(_)) {
        anyhow::bail!("GATEWAY_DATABASE_READ_URL must name a PostgreSQL server");
    }
    let pool = Pool::builder()
        .max_size((options.max_connections.unwrap_or(16) / 4).max(2))
        .min_idle(Some(1))
        .test_on_check_out(false)
        .connection_timeout(options.connection_timeout)
        .build(Manager::new(target))
        .context("cannot open the replica named by GATEWAY_DATABASE_READ_URL")?;
    Ok(Connections::new(pool, false))
}

impl Database {
    /// Connects with default options. Accepts `sqlite://PATH` (relative, e.g.
    /// `sqlite://gateway.db`), `sqlite:///ABSOLUTE/PATH`, `sqlite:PATH`, `postgres://...` and
    /// `postgresql://...`; anything else is an error naming these forms. The SQLite file is
    /// created if missing. Blocks until one connection is open (at most the connection timeout).
    pub fn connect(url: &str) -> anyhow::Result<Database> {
        Self::connect_with(url, DbOptions::default())
    }

    /// As [`Database::connect`], with explicit pool, cache and master key options.
    pub fn connect_with(url: &str, options: DbOptions) -> anyhow::Result<Database> {
        let target = Target::parse(url)?;
        if crate::target::several_hosts_without_target(url) {
            tracing::warn!(
                "GATEWAY_DATABASE_URL names several hosts without target_session_attrs: \
                 add target_session_attrs=read-write, or writes may go to a standby"
            );
        }
        let backend = match target {
            Target::Sqlite(_) => Backend::Sqlite,
            Target::Postgres(_) => Backend::Postgres,
        };
        let max = options.max_connections.unwrap_or(match backend {
            Backend::Sqlite => 8,
            Backend::Postgres => 16,
        });
        let pool = Pool::builder()
            .max_size(max.max(1))
            .min_idle(Some(1))
            // A check-out costs no round trip; broken connections are dropped after use.
            .test_on_check_out(false)
            .connection_timeout(options.connection_timeout)
            .build(Manager::new(target))
            .with_context(|| format!("cannot open the {backend} database"))?;
        let replica = match &options.read_url {
            Some(read_url) => Some(replica_pool(read_url, &options)?),
            None => None,
        };
        let database = Database {
            inner: Arc::new(Inner {
                conns: Connections::new(pool, backend == Backend::Sqlite),
                replica,
                backend,
                routes: TtlMap::new(options.cache_ttl, 1),
                merchants: TtlMap::new(options.cache_ttl, MERCHANT_CACHE_CAPACITY),
                signing: TtlMap::new(options.cache_ttl.min(SECRETS_TTL), MERCHANT_CACHE_CAPACITY),
                providers: TtlMap::new(options.cache_ttl, 1),
                tariffs: TtlMap::new(options.cache_ttl, MERCHANT_CACHE_CAPACITY),
                inserts: InsertQueue::default(),
                groups: WriteGroups::default(),
                catch_up: CatchUp::default(),
                records: Group::default(),
                key_reads: Group::default(),
                attempt_saves: Group::default(),
                vault: Arc::new(Vault::new(options.master_key)),
            }),
        };
        if backend == Backend::Sqlite {
            crate::checkpoint::start(&database.inner);
        }
        Ok(database)
    }

    /// The backend this database runs on.
    pub fn backend(&self) -> Backend {
        self.inner.backend
    }

    /// Whether the database answers within about two seconds and takes writes (for
    /// `/readyz`): on PostgreSQL the server must be a primary (`pg_is_in_recovery()` false)
    /// and the session writable (`transaction_read_only` off),
    /// so a gateway whose primary is gone is not ready until a new one answers. A connection
    /// that finds a standby, or finds its server gone, is dropped.
    pub async fn ping(&self) -> bool {
        let db = self.clone();
        let answered = blocking(move || {
            let conns = &db.inner.conns;
            let mut conn = conns
                .pool
                .get_timeout(Duration::from_secs(2))
                .map_err(|e| domain::ports::StoreError::from(Unavailable::NoConnection(e)))?;
            // The check a suspect write connection gets: a standby's or a read-only session
            // fails it as lost, and is dropped.
            crate::work::usable(&mut conn, true).map_err(|error| {
                if crate::work::is_connection_lost(&error) {
                    conns.lost(&mut conn);
                }
                domain::ports::StoreError::from(Unavailable::ConnectionLost(error))
            })
        })
        .await;
        answered.is_ok()
    }

    /// SQLite: the in-process writer lock (held for one write transaction).
    pub(crate) fn sqlite_writer(&self) -> Option<MutexGuard<'_, ()>> {
        self.inner.conns.writer()
    }

    /// Forgets cached routes, merchants, providers and tariffs (after an admin change or a
    /// migration).
    pub(crate) fn forget_cached(&self) {
        self.inner.routes.clear();
        self.forget_merchants();
        self.inner.providers.clear();
        self.inner.tariffs.clear();
    }

    /// Forgets cached merchants and their secrets (after a change to one in this process).
    pub(crate) fn forget_merchants(&self) {
        self.inner.merchants.clear();
        self.inner.signing.clear();
    }
}

/// Units of work on the pool (see `crate::work`).
impl Database {
    /// Runs `work` as one write transaction on a blocking thread, retrying transient conflicts.
    /// `work` may run more than once, each time in a fresh transaction. On SQLite the
    /// transaction is shared with the other writes queued at the time, each in a savepoint of
    /// its own (see `crate::group`): `work` sees the writes committed before it, and its
    /// result is returned after its writes are committed.
    pub(crate) async fn write<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&mut DbConn) -> Result<T, TxError<E>> + Send + 'static,
    {
        self.write_as(false, work).await
    }

    /// Runs `work`, one PostgreSQL statement atomic by itself, on a blocking thread: without
    /// BEGIN and COMMIT around it (one round trip). On SQLite it is a write transaction like
    /// [`Database::write`], grouped as there. Transient conflicts are retried as there.
    pub(crate) async fn write_one<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&mut DbConn) -> Result<T, TxError<E>> + Send + 'static,
    {
        self.write_as(true, work).await
    }

    /// [`Database::write`], or with `one_statement` [`Database::write_one`].
    async fn write_as<T, E, F>(&self, one_statement: bool, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&mut DbConn) -> Result<T, TxError<E>> + Send + 'static,
    {
        if self.backend() == Backend::Sqlite {
            return self.write_grouped(work).await;
        }
        let db = self.clone();
        blocking(move || {
            db.retrying(true, |conn| match one_statement {
                true => statement_tx(conn, &work),
                false => write_tx(conn, &work),
            })
        })
        .await
    }

    /// Runs `work` (reads: single statements, or its own read transaction) on a blocking thread.
    pub(crate) async fn read<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&mut DbConn) -> Result<T, TxError<E>> + Send + 'static,
    {
        let db = self.clone();
        // Reads only: one that lost its connection is read again on a fresh one.
        blocking(move || db.retrying(false, |conn| work(conn).map_err(lost_is_unsent))).await
    }

    /// As [`Database::read`], on the replica when there is one (its reads may lag the
    /// primary by [`Database::read_lag`]).
    pub(crate) async fn read_replica<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&mut DbConn) -> Result<T, TxError<E>> + Send + 'static,
    {
        if self.inner.replica.is_none() {
            return self.read(work).await;
        }
        let db = self.clone();
        blocking(move || {
            let work = |conn: &mut DbConn| work(conn).map_err(lost_is_unsent);
            match &db.inner.replica {
                Some(replica) => replica.retrying(false, work),
                None => db.retrying(false, work),
            }
        })
        .await
    }

    /// How far behind the primary the replica is, in milliseconds (0 while it has replayed
    /// all it received, or when the read URL names a primary); `None` without a replica.
    pub async fn read_lag(&self) -> Result<Option<i64>, StoreError> {
        if self.inner.replica.is_none() {
            return Ok(None);
        }
        let db = self.clone();
        blocking(move || {
            let Some(replica) = &db.inner.replica else {
                return Ok(None);
            };
            replica.retrying(false, |conn| {
                let lag: i64 = diesel::RunQueryDsl::get_result(
                    diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(LAG_MS)),
                    conn,
                )?;
                Ok(Some(lag))
            })
        })
        .await
    }

    /// Checks out a connection and runs `once`, again after a short pause on transient errors.
    pub(crate) fn retrying<T, E: From<StoreError>>(
        &self,
        write: bool,
        once: impl FnMut(&mut DbConn) -> Result<T, TxError<E>>,
    ) -> Result<T, E> {
        self.inner.conns.retrying(write, once)
    }
}

/// Group commit (see `crate::group`).
impl Database {
    /// Queues `job` in the group `group` finds on a database handle; when fewer than `writers`
    /// of that group's writers run, starts one on the blocking pool, which hands `write` up to
    /// `max` queued jobs at a time until the group is empty ([`Group::drain`]).
    pub(crate) fn enqueue<J, G, W>(&self, group: G, job: J, writers: usize, max: usize, write: W)
    where
        J: Send + 'static,
        G: Fn(&Database) -> &Group<J> + Send + 'static,
        W: Fn(&Database, Vec<J>) + Send + 'static,
    {
        if group(self).push(job, writers) {
            let db = self.clone();
            tokio::task::spawn_blocking(move || loop {
                let drained = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    group(&db).drain(max, |jobs| write(&db, jobs))
                }));
                // A write that panicked dropped its batch: each of those callers gets an
                // error. The jobs queued behind it are drained now by a writer counted
                // afresh, rather than waiting for the next push.
                if drained.is_ok() || !group(&db).resume(writers) {
                    break;
                }
                tracing::error!(
                    "a group writer panicked; its batch was dropped, the rest is written"
                );
            });
        }
    }

    /// [`Database::enqueue`] for a job that carries where its answer goes (made by `job`
    /// from that sender), then waits for the answer. A job dropped unanswered (its writer
    /// panicked) is an error saying `what` was dropped.
    pub(crate) async fn enqueue_and_wait<J, T, E, G, W>(
        &self,
        group: G,
        job: impl FnOnce(oneshot::Sender<Result<T, E>>) -> J,
        writers: usize,
        max: usize,
        write: W,
        what: &str,
    ) -> Result<T, E>
    where
        J: Send + 'static,
        E: From<StoreError>,
        G: Fn(&Database) -> &Group<J> + Send + 'static,
        W: Fn(&Database, Vec<J>) + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        self.enqueue(group, job(reply), writers, max, write);
        answer.await.unwrap_or_else(|_| {
            Err(StoreError::Other(anyhow::anyhow!("{what} was dropped")).into())
        })
    }
}
