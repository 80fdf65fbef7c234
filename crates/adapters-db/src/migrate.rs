//! Migrations, embedded in the binary from `migrations/sqlite` and `migrations/postgres`.

use anyhow::{anyhow, Context};
use diesel::connection::SimpleConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::conn::DbConn;
use crate::database::Database;

const SQLITE: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
const POSTGRES: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// Serialises concurrent `migrate` runs of several gateway processes on one PostgreSQL.
const PG_MIGRATION_LOCK: &str = "SELECT pg_advisory_lock(7335091416)";
const PG_MIGRATION_UNLOCK: &str = "SELECT pg_advisory_unlock(7335091416)";

impl Database {
    /// Applies the pending migrations of this backend; running it again does nothing.
    ///
    /// Blocking (it runs before serving): from async code call it in `spawn_blocking`, or
    /// before the server starts.
    #[tracing::instrument(skip(self), fields(db.backend = %self.inner.backend))]
    pub fn migrate(&self) -> anyhow::Result<()> {
        let mut conn = self
            .inner
            .pool
            .get()
            .context("no database connection for migrations")?;
        let applied = match &mut *conn {
            DbConn::Sqlite(c) => {
                let _writer = self.sqlite_writer();
                c.run_pending_migrations(SQLITE)
                    .map(|done| done.iter().map(ToString::to_string).collect::<Vec<_>>())
                    .map_err(|e| anyhow!("SQLite migration failed: {e}"))?
            }
            DbConn::Pg(c) => {
                c.batch_execute(PG_MIGRATION_LOCK)
                    .context("cannot take the migration lock")?;
                let result = c
                    .run_pending_migrations(POSTGRES)
                    .map(|done| done.iter().map(ToString::to_string).collect::<Vec<_>>())
                    .map_err(|e| anyhow!("PostgreSQL migration failed: {e}"));
                c.batch_execute(PG_MIGRATION_UNLOCK)
                    .context("cannot release the migration lock")?;
                result?
            }
        };
        for version in &applied {
            tracing::info!(migration = %version, "migration applied");
        }
        self.forget_cached();
        Ok(())
    }
}
