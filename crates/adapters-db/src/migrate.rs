//! Migrations, embedded in the binary from `migrations/sqlite` and `migrations/postgres`.
//!
//! They are applied in order, and a database is taken to hold every embedded migration up to
//! the newest one recorded in diesel's `__diesel_schema_migrations`. The migration that adds
//! providers removes the first version's record from that table: a first-version process
//! (which applies every embedded migration not recorded there) then tries to create the
//! initial tables again and stops at start, as the upgrade rule of contract section 10.3
//! wants. A database that records a migration this binary does not embed was upgraded by a
//! newer version, and [`Database::migrate`] refuses it the same way. After the migrations,
//! `migrate` does the data steps they recorded (see `crate::steps`).

use std::collections::BTreeSet;

use anyhow::{anyhow, bail, Context};
use diesel::backend::Backend as DieselBackend;
use diesel::connection::SimpleConnection;
use diesel::migration::{Migration, MigrationSource};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::conn::DbConn;
use crate::database::Database;

const SQLITE: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
const POSTGRES: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// Serialises concurrent `migrate` runs of several gateway processes on one PostgreSQL.
const PG_MIGRATION_LOCK: &str = "SELECT pg_advisory_lock(7335091416)";
const PG_MIGRATION_UNLOCK: &str = "SELECT pg_advisory_unlock(7335091416)";

impl Database {
    /// Applies the pending migrations of this backend, then does the data steps they
    /// recorded (see `crate::steps`); running it again does nothing.
    ///
    /// Fails, changing nothing, if the database records a migration this binary does not
    /// embed: a newer gateway upgraded it, and this one would misread it. A data step cut
    /// short goes on from where it stopped at the next run.
    ///
    /// Blocking (it runs before serving): from async code call it in `spawn_blocking`, or
    /// before the server starts.
    #[tracing::instrument(skip(self), fields(db.backend = %self.inner.backend))]
    pub fn migrate(&self) -> anyhow::Result<()> {
        let backend = self.inner.backend;
        let mut pooled = self
            .inner
            .conns
            .pool
            .get()
            .context("no database connection for migrations")?;
        let conn: &mut DbConn = &mut pooled;
        let postgres = matches!(conn, DbConn::Pg(_));
        if postgres {
            conn.batch_execute(PG_MIGRATION_LOCK)
                .context("cannot take the migration lock")?;
        }
        let result = self.migrate_on(conn);
        if postgres {
            conn.batch_execute(PG_MIGRATION_UNLOCK)
                .context("cannot release the migration lock")?;
        }
        result.with_context(|| format!("{backend} migration failed"))?;
        self.forget_cached();
        Ok(())
    }

    /// [`Database::migrate`] on one connection (holding the PostgreSQL migration lock).
    fn migrate_on(&self, conn: &mut DbConn) -> anyhow::Result<()> {
        let applied = match conn {
            DbConn::Sqlite(c) => {
                let _writer = self.sqlite_writer();
                apply_pending(c, SQLITE)
            }
            DbConn::Pg(c) => apply_pending(c, POSTGRES),
        }?;
        for version in &applied {
            tracing::info!(migration = %version, "migration applied");
        }
        crate::steps::run_pending(self, conn)
    }
}

/// Applies, in order, the migrations of `source` newer than the newest one `conn` records,
/// after checking that it records none that `source` lacks. Returns the versions applied.
fn apply_pending<DB, C>(conn: &mut C, source: EmbeddedMigrations) -> anyhow::Result<Vec<String>>
where
    DB: DieselBackend,
    C: MigrationHarness<DB>,
    EmbeddedMigrations: MigrationSource<DB>,
{
    let recorded: Vec<String> = conn
        .applied_migrations()
        .map_err(|e| anyhow!("cannot read the applied migrations: {e}"))?
        .iter()
        .map(ToString::to_string)
        .collect();
    let mut embedded = source
        .migrations()
        .map_err(|e| anyhow!("cannot read the embedded migrations: {e}"))?;
    embedded.sort_by_key(|m| m.name().version().to_string());
    let known: BTreeSet<String> = embedded
        .iter()
        .map(|m| m.name().version().to_string())
        .collect();
    let unknown: Vec<&str> = recorded
        .iter()
        .filter(|v| !known.contains(*v))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        bail!(
            "the database has migrations this gateway does not know ({}): a newer gateway \
             has upgraded it; run that version (or a later one) in every process",
            unknown.join(", ")
        );
    }
    let newest = recorded.iter().max();
    let mut applied = Vec::new();
    for migration in embedded
        .iter()
        .filter(|m| newest.is_none_or(|n| m.name().version().to_string() > *n))
    {
        let version = conn
            .run_migration(migration as &dyn Migration<DB>)
            .map_err(|e| anyhow!("migration {} failed: {e}", migration.name()))?;
        applied.push(version.to_string());
    }
    Ok(applied)
}
