//! Rough store throughput, for design checks (ignored by default):
//! `cargo test -p adapters-db --release --test db -- --ignored --nocapture throughput`.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Semaphore;

use crate::helpers::{deposit, each_backend, funded_merchant, gateway, withdrawal};

const REQUESTS: usize = 2_000;
const IN_FLIGHT: usize = 32;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "a measurement, not a check"]
async fn throughput_of_creations_through_the_gateway() {
    each_backend(|t| async move {
        let shop = funded_merchant(&t.db, 1_000_000_00).await;
        let gw = gateway(&t.db);
        for kind in ["deposit", "withdrawal"] {
            let gate = Arc::new(Semaphore::new(IN_FLIGHT));
            let started = Instant::now();
            let tasks: Vec<_> = (0..REQUESTS)
                .map(|i| {
                    let (gw, shop, gate) = (gw.clone(), shop.clone(), gate.clone());
                    tokio::spawn(async move {
                        let _permit = gate.acquire_owned().await.expect("semaphore");
                        let moid = format!("{kind}-{i}");
                        let result = if kind == "deposit" {
                            gw.creation()
                                .create_deposit(&shop, deposit(1_00, Some(&moid)), moid.as_bytes())
                                .await
                        } else {
                            gw.creation()
                                .create_withdrawal(
                                    &shop,
                                    withdrawal(1_00, Some(&moid)),
                                    moid.as_bytes(),
                                )
                                .await
                        };
                        result.expect("created");
                    })
                })
                .collect();
            for task in futures::future::join_all(tasks).await {
                task.expect("task");
            }
            let secs = started.elapsed().as_secs_f64();
            eprintln!(
                "{:?} {kind}: {REQUESTS} creations in {secs:.2} s = {:.0}/s",
                t.backend(),
                REQUESTS as f64 / secs
            );
        }
        t.assert_ledger_verifies().await;
    })
    .await;
}
