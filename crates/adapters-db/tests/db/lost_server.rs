//! PostgreSQL ending every connection of the pool (as a failover or a restart does), and a
//! database that stops taking writes (as a demoted primary does): no answer is a bug (each
//! is `Unavailable`, which the API answers 503), nothing is written twice, and the pool
//! reconnects by itself, with `/readyz`'s ping not ready while writes are refused.

use domain::ports::{InsertError, OperationStore, StoreError};
use domain::Direction;

use crate::helpers::*;

/// Ends every connection to the test database but the caller's own, as the server does to
/// its sessions when it shuts down or fails over.
fn end_every_session(t: &TestDb) {
    t.exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
}

/// Inserts `n` new deposits of `shop` one after another: how many were stored and how many
/// were `Unavailable`; any other error fails the test.
async fn insert_some(t: &TestDb, shop: &domain::merchant::Merchant, n: usize) -> (usize, usize) {
    let (mut stored, mut unavailable) = (0, 0);
    for _ in 0..n {
        let new = domain::ports::NewOperation {
            operation: operation(shop, Direction::Deposit, 10_00),
            fingerprint: None,
            moves: Vec::new(),
            callback: None,
            attempts: Vec::new(),
        };
        match t.db.insert(&new).await {
            Ok(_) => stored += 1,
            Err(InsertError::Store(StoreError::Unavailable(_))) => unavailable += 1,
            Err(other) => panic!("losing the server is never a bug: {other:?}"),
        }
    }
    (stored, unavailable)
}

/// Warms the pool: `n` reads at once, each on a connection of its own.
async fn warm(t: &TestDb, n: usize) {
    let reads = all_at_once(n, |_| {
        let db = t.db.clone();
        async move {
            db.get(domain::OperationId::from_uuid(uuid::Uuid::new_v4()))
                .await
        }
    })
    .await;
    assert!(reads.iter().all(Result::is_ok), "{reads:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn connections_the_server_ended_are_dropped_and_replaced_without_a_bug_or_a_double() {
    let Some(t) = postgres_only().await else {
        return;
    };
    let shop = merchant(&t.db).await;
    warm(&t, 8).await;
    let before = t.rows("operations");
    end_every_session(&t);

    let (stored, unavailable) = insert_some(&t, &shop, 20).await;
    // Each write found a dead connection at most once: the pool pings while it suspects
    // the rest, and a write lost before its COMMIT runs again on a fresh one.
    assert!(stored >= 19, "stored {stored}, unavailable {unavailable}");
    let after = t.rows("operations") - before;
    assert!(
        after >= stored as i64 && after <= (stored + unavailable) as i64,
        "what was acknowledged is stored, and nothing else twice: {after} rows for {stored} + {unavailable}"
    );
    // Reads and the ping go on too, on the reconnected pool.
    warm(&t, 8).await;
    assert!(t.db.ping().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_that_stopped_taking_writes_is_unavailable_and_not_ready_until_it_takes_them_again(
) {
    let Some(t) = postgres_only().await else {
        return;
    };
    let shop = merchant(&t.db).await;
    warm(&t, 4).await;
    // New sessions are read-only, as on a standby: the pool's next connections are.
    t.exec("DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_read_only = on', current_database()); END $$");
    end_every_session(&t);
    let (stored, unavailable) = insert_some(&t, &shop, 3).await;
    assert_eq!(
        (stored, unavailable),
        (0, 3),
        "a read-only session takes no write"
    );
    assert!(
        !t.db.ping().await,
        "not ready while no session takes writes"
    );

    t.exec("BEGIN READ WRITE; DO $$ BEGIN EXECUTE format('ALTER DATABASE %I RESET default_transaction_read_only', current_database()); END $$; COMMIT");
    // The read-only sessions were dropped as lost; new ones take writes.
    let (stored, _) = insert_some(&t, &shop, 5).await;
    assert!(stored >= 4, "writes resume by themselves: {stored} of 5");
    assert!(t.db.ping().await, "ready again");
}
