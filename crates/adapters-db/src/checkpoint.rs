//! SQLite: WAL checkpoints on a thread of their own, so no write waits for one.
//!
//! By default SQLite checkpoints inside the commit that takes the WAL past 1,000 pages: that
//! commit copies the pages into the database file and syncs it before it returns, and every
//! write queued behind it waits (the writer's tail). Here every connection leaves that to a
//! background thread, which runs a `PASSIVE` checkpoint every [`INTERVAL`] on a pooled
//! connection: it never takes the write lock, so the writer goes on meanwhile. A commit
//! still checkpoints by itself past [`BACKSTOP_PAGES`], should this thread fall behind.

use std::sync::{Arc, Weak};
use std::time::Duration;

use diesel::connection::SimpleConnection;

use crate::database::Inner;

/// How often the WAL is copied back into the database file.
const INTERVAL: Duration = Duration::from_millis(250);

/// The WAL size (pages) past which a commit checkpoints by itself: the thread's backstop.
pub(crate) const BACKSTOP_PAGES: u32 = 10_000;

/// Starts the checkpoint thread of `inner`'s database; it stops once the database is dropped.
pub(crate) fn start(inner: &Arc<Inner>) {
    let weak: Weak<Inner> = Arc::downgrade(inner);
    let started = std::thread::Builder::new()
        .name("sqlite-checkpoint".into())
        .spawn(move || run(&weak));
    if let Err(error) = started {
        tracing::warn!(%error, "no checkpoint thread: commits checkpoint the WAL themselves");
    }
}

fn run(weak: &Weak<Inner>) {
    loop {
        std::thread::sleep(INTERVAL);
        let Some(inner) = weak.upgrade() else {
            return;
        };
        let checkpointed = inner
            .pool
            .get_timeout(INTERVAL)
            .map_err(|e| e.to_string())
            .and_then(|mut conn| {
                conn.batch_execute("PRAGMA wal_checkpoint(PASSIVE)")
                    .map_err(|e| e.to_string())
            });
        if let Err(error) = checkpointed {
            tracing::debug!(%error, "WAL checkpoint skipped");
        }
    }
}
