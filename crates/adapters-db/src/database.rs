//! The [`Database`] handle: the pool, the backend, the caches.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::Context;
use diesel::r2d2::{Pool, R2D2Connection};
use domain::merchant::Merchant;
use domain::provider::AcquirerProvider;
use domain::route::Route;
use domain::MerchantId;

use crate::cache::TtlMap;
use crate::checkpoint::CatchUp;
use crate::conn::DbConn;
use crate::conn::Manager;
use crate::crypto::{MasterKey, Vault};
use crate::directory::KeyJob;
use crate::group::Group;
use crate::outbox::RecordJob;
use crate::queue::InsertQueue;
use crate::rows::MerchantProfile;
use crate::sqlite_group::WriteGroups;
use crate::store::AttemptSave;
use crate::target::Target;
use crate::work::{blocking, retry, statement_tx, write_tx, TxError, Unavailable};
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
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            max_connections: None,
            connection_timeout: Duration::from_secs(5),
            cache_ttl: Duration::from_secs(2),
            master_key: None,
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
    pub(crate) pool: Pool<Manager>,
    pub(crate) backend: Backend,
    /// SQLite only: this process's writers take turns here.
    writer: Option<Mutex<()>>,
    pub(crate) routes: TtlMap<(), Arc<Vec<Route>>>,
    /// Merchants without their secrets (unknown ids as `None`).
    pub(crate) merchants: TtlMap<MerchantId, Option<MerchantProfile>>,
    /// Known merchants with their secrets, each for at most [`SECRETS_TTL`] (their rows may
    /// have come from `merchants`, so those are at most both TTLs old).
    pub(crate) signing: TtlMap<MerchantId, Merchant>,
    pub(crate) providers: TtlMap<(), Arc<Vec<AcquirerProvider>>>,
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

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the URL: it may carry a password.
        f.debug_struct("Database")
            .field("backend", &self.inner.backend)
            .finish_non_exhaustive()
    }
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
        let database = Database {
            inner: Arc::new(Inner {
                pool,
                backend,
                writer: (backend == Backend::Sqlite).then(|| Mutex::new(())),
                routes: TtlMap::new(options.cache_ttl, 1),
                merchants: TtlMap::new(options.cache_ttl, MERCHANT_CACHE_CAPACITY),
                signing: TtlMap::new(options.cache_ttl.min(SECRETS_TTL), MERCHANT_CACHE_CAPACITY),
                providers: TtlMap::new(options.cache_ttl, 1),
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

    /// Whether the database answers a trivial query within about two seconds (for `/readyz`).
    pub async fn ping(&self) -> bool {
        let pool = self.inner.pool.clone();
        let answered = blocking(move || {
            let mut conn = pool
                .get_timeout(Duration::from_secs(2))
                .map_err(|e| domain::ports::StoreError::from(Unavailable::NoConnection(e)))?;
            conn.ping()
                .map_err(|e| domain::ports::StoreError::from(Unavailable::ConnectionLost(e)))
        })
        .await;
        answered.is_ok()
    }

    /// SQLite: the in-process writer lock (held for one write transaction).
    pub(crate) fn sqlite_writer(&self) -> Option<MutexGuard<'_, ()>> {
        self.inner
            .writer
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Forgets cached routes, merchants and providers (after an admin change or a migration).
    pub(crate) fn forget_cached(&self) {
        self.inner.routes.clear();
        self.forget_merchants();
        self.inner.providers.clear();
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
        if self.backend() == Backend::Sqlite {
            return self.write_grouped(work).await;
        }
        let db = self.clone();
        blocking(move || db.retrying(true, |conn| write_tx(conn, &work))).await
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
        if self.backend() == Backend::Sqlite {
            return self.write_grouped(work).await;
        }
        let db = self.clone();
        blocking(move || db.retrying(true, |conn| statement_tx(conn, &work))).await
    }

    /// Runs `work` (reads: single statements, or its own read transaction) on a blocking thread.
    pub(crate) async fn read<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&mut DbConn) -> Result<T, TxError<E>> + Send + 'static,
    {
        let db = self.clone();
        blocking(move || db.retrying(false, work)).await
    }

    /// Checks out a connection and runs `once`, again after a short pause on transient errors.
    pub(crate) fn retrying<T, E: From<StoreError>>(
        &self,
        write: bool,
        mut once: impl FnMut(&mut DbConn) -> Result<T, TxError<E>>,
    ) -> Result<T, E> {
        retry(|| {
            // SQLite has one writer at a time: queue this process's writers here rather
            // than have them poll the file lock. Other processes still wait on busy_timeout.
            let _writer = write.then(|| self.sqlite_writer()).flatten();
            let mut conn = self
                .inner
                .pool
                .get()
                .map_err(|e| TxError::Fail(E::from(Unavailable::NoConnection(e).into())))?;
            once(&mut conn)
        })
    }
}
