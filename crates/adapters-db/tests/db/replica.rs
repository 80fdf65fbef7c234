//! `GATEWAY_DATABASE_READ_URL`: the reads that may lag (balance transactions, statements,
//! the console's lists) go to the replica's pool, which says how far behind it is; without
//! one they read the primary and there is no lag to tell.

use adapters_db::{Database, DbOptions};
use domain::ports::LedgerReader;
use domain::transactions::TransactionQuery;
use domain::Currency;

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
        .transactions(&TransactionQuery {
            merchant_id: shop.id.clone(),
            currency: Currency::RUB,
            from: None,
            to: None,
            after: None,
            limit: 10,
        })
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
