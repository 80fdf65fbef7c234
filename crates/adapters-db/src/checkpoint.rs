//! SQLite: WAL checkpoints kept off the writes' path.
//!
//! By default SQLite checkpoints inside the commit that takes the WAL past 1,000 pages: that
//! commit copies the pages into the database file and syncs it before it returns, and every
//! write queued behind it waits. Here the copying is done by a background thread, which runs
//! a `PASSIVE` checkpoint every [`INTERVAL`] on a pooled connection; it never takes the write
//! lock, so the writer goes on meanwhile.
//!
//! A WAL is only rewound to its start when a write begins with every frame copied back, which
//! never happens while the writer keeps adding frames during the thread's checkpoints: the
//! WAL would grow without end. So when the thread finds it past [`CATCH_UP_FRAMES`], it asks
//! the group writer (see `crate::group`) to checkpoint the few frames left between two groups,
//! after answering the first; the next write then starts the WAL over. A commit still
//! checkpoints by itself past [`BACKSTOP_PAGES`](crate::conn::BACKSTOP_PAGES), should both fall behind.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::Integer;

use diesel::r2d2::Pool;

use crate::conn::{DbConn, Manager};

/// How often the WAL is copied back into the database file.
const INTERVAL: Duration = Duration::from_millis(100);

/// The WAL size (frames, about 4 kB each) past which the writer is asked to catch up.
const CATCH_UP_FRAMES: i32 = 4_000;

/// Set by the thread, taken by the writer: see the module docs.
#[derive(Default)]
pub(crate) struct CatchUp(AtomicBool);

impl CatchUp {
    /// Whether the writer should checkpoint now; asking clears it.
    pub(crate) fn take(&self) -> bool {
        self.0.swap(false, Ordering::Relaxed)
    }
}

/// What `PRAGMA wal_checkpoint` answers.
#[derive(QueryableByName)]
struct Checkpointed {
    #[diesel(sql_type = Integer)]
    log: i32,
}

/// Runs a `PASSIVE` checkpoint on `conn`; returns the WAL's size in frames.
pub(crate) fn checkpoint(conn: &mut DbConn) -> QueryResult<i32> {
    let rows: Vec<Checkpointed> = diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)").load(conn)?;
    Ok(rows.first().map_or(0, |row| row.log))
}

/// What the checkpoint thread needs of a database: its pool, and where it asks the writer
/// to catch up.
pub(crate) trait CheckpointSource: Send + Sync + 'static {
    fn pool(&self) -> &Pool<Manager>;
    fn catch_up(&self) -> &CatchUp;
}

/// Starts the checkpoint thread of `inner`'s database; it stops once the database is dropped.
pub(crate) fn start<D: CheckpointSource>(inner: &Arc<D>) {
    let weak: Weak<D> = Arc::downgrade(inner);
    let started = std::thread::Builder::new()
        .name("sqlite-checkpoint".into())
        .spawn(move || run(&weak));
    if let Err(error) = started {
        tracing::warn!(%error, "no checkpoint thread: commits checkpoint the WAL themselves");
    }
}

fn run<D: CheckpointSource>(weak: &Weak<D>) {
    loop {
        std::thread::sleep(INTERVAL);
        let Some(inner) = weak.upgrade() else {
            return;
        };
        let frames = inner
            .pool()
            .get_timeout(INTERVAL)
            .map_err(|e| e.to_string())
            .and_then(|mut conn| checkpoint(&mut conn).map_err(|e| e.to_string()));
        match frames {
            Ok(frames) if frames >= CATCH_UP_FRAMES => {
                inner.catch_up().0.store(true, Ordering::Relaxed)
            }
            Ok(_) => {}
            Err(error) => tracing::debug!(%error, "WAL checkpoint skipped"),
        }
    }
}
