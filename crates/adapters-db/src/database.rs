//! The [`Database`] handle: the pool, the backend, the caches.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::Context;
use diesel::r2d2::{Pool, R2D2Connection};
use domain::merchant::Merchant;
use domain::route::Route;
use domain::MerchantId;

use crate::batch::InsertQueue;
use crate::cache::TtlMap;
use crate::conn::Manager;
use crate::target::Target;
use crate::work::{blocking, Unavailable};

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
    /// How long routes and merchants are served from memory. At most 2 s by default, so a
    /// running gateway sees route changes and merchant disables well within 5 s.
    pub cache_ttl: Duration,
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            max_connections: None,
            connection_timeout: Duration::from_secs(5),
            cache_ttl: Duration::from_secs(2),
        }
    }
}

/// Most merchants kept in the merchant cache.
const MERCHANT_CACHE_CAPACITY: usize = 10_000;

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
    pub(crate) merchants: TtlMap<MerchantId, Option<Merchant>>,
    /// PostgreSQL: plain new operations waiting to be written together.
    pub(crate) inserts: InsertQueue,
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

    /// As [`Database::connect`], with explicit pool and cache options.
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
        Ok(Database {
            inner: Arc::new(Inner {
                pool,
                backend,
                writer: (backend == Backend::Sqlite).then(|| Mutex::new(())),
                routes: TtlMap::new(options.cache_ttl, 1),
                merchants: TtlMap::new(options.cache_ttl, MERCHANT_CACHE_CAPACITY),
                inserts: InsertQueue::default(),
            }),
        })
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

    /// Forgets cached routes and merchants (after an admin change or a migration).
    pub(crate) fn forget_cached(&self) {
        self.inner.routes.clear();
        self.inner.merchants.clear();
    }
}
