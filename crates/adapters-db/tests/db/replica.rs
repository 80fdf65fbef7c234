//! `GATEWAY_DATABASE_READ_URL`: the reads that may lag (balance transactions, statements,
//! the console's lists) go to the replica's pool, which says how far behind it is; without
//! one they read the primary and there is no lag to tell.

use std::time::{Duration, Instant};

use adapters_db::{Database, DbOptions};
use diesel::connection::SimpleConnection;
use diesel::sql_types::Bool;
use diesel::{Connection, PgConnection, RunQueryDsl};
use domain::ports::LedgerReader;

use crate::helpers::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_read_url_serves_the_lagging_reads_and_tells_its_lag() {
    let Some(t) = postgres_only().await else {
        return;
    };
    let shop = funded_merchant(&t.db, 100_00).await;
    assert_eq!(t.db.read_lag().await.expect("lag"), None, "no replica");

    // The primary named as its own "replica": not in recovery, so never behind.
    let url = t.url.clone();
    let with_replica = tokio::task::spawn_blocking(move || {
        Database::connect_with(
            &url,
            DbOptions {
                read_url: Some(url.clone()),
                ..DbOptions::default()
            },
        )
    })
    .await
    .expect("connect")
    .expect("a database with a replica");
    assert_eq!(with_replica.read_lag().await.expect("lag"), Some(0));
    let page = with_replica
        .transactions(&rub_transactions(&shop, 10))
        .await
        .expect("a page from the replica");
    assert_eq!(page.iter().map(|tx| tx.amount()).sum::<i64>(), 100_00);

    // SQLite has no replica.
    let sqlite = testkit::FreshDatabase::sqlite();
    let refused = Database::connect_with(
        &sqlite.url,
        DbOptions {
            read_url: Some(sqlite.url.clone()),
            ..DbOptions::default()
        },
    );
    assert!(refused.is_err(), "a replica must be PostgreSQL");
}

/// The failover cluster's real standby (`scripts/ha-cluster.sh`): a session there is in
/// recovery and refuses writes, and the replica's pool serves what the primary committed
/// once the standby replayed it, with a lag it can tell.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_clusters_standby_serves_the_primarys_writes_with_its_lag() {
    let Some(cluster) = testkit::ha_postgres_url() else {
        return;
    };
    let fresh = tokio::task::spawn_blocking(move || testkit::FreshDatabase::postgres_at(&cluster))
        .await
        .expect("a database on the cluster");
    let standby = fresh.url.replace(
        "target_session_attrs=read-write",
        "target_session_attrs=standby",
    );
    assert_ne!(standby, fresh.url, "the cluster's URL asks for read-write");

    // The new database reaches the standby once its CREATE DATABASE is replayed.
    let url = standby.clone();
    let (in_recovery, write) = tokio::task::spawn_blocking(move || {
        let mut conn = until(Duration::from_secs(60), || {
            PgConnection::establish(&url).ok()
        })
        .expect("the standby serves the new database within 60 s");
        let in_recovery: bool = diesel::select(diesel::dsl::sql::<Bool>("pg_is_in_recovery()"))
            .get_result(&mut conn)
            .expect("pg_is_in_recovery");
        let write = conn.batch_execute("CREATE TABLE standby_write (a INT)");
        (in_recovery, write.map_err(|e| e.to_string()))
    })
    .await
    .expect("the standby's session");
    assert!(
        in_recovery,
        "target_session_attrs=standby reached a standby"
    );
    let refused = write.expect_err("a standby refuses a write");
    assert!(refused.contains("read-only"), "{refused}");

    let (primary, read_url) = (fresh.url.clone(), standby.clone());
    let db = tokio::task::spawn_blocking(move || {
        let db = Database::connect_with(
            &primary,
            DbOptions {
                max_connections: Some(4),
                read_url: Some(read_url),
                ..DbOptions::default()
            },
        )?;
        db.migrate()?;
        anyhow::Ok(db)
    })
    .await
    .expect("connect")
    .expect("the primary, migrated, with the standby as its replica");
    let shop = funded_merchant(&db, 100_00).await;

    let query = rub_transactions(&shop, 10);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let page = db
            .transactions(&query)
            .await
            .expect("a page from the standby");
        if page.iter().map(|tx| tx.amount()).sum::<i64>() == 100_00 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the standby did not show the primary's credit within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let lag = db.read_lag().await.expect("lag").expect("a replica's lag");
    assert!((0..30_000).contains(&lag), "lag {lag} ms");
}

/// `probe` until it gives something, for at most `within`.
fn until<T>(within: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = probe() {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
