//! Process reports: each serving process's row and circuits, replaced by its next report,
//! read by how recently they were seen, and forgotten an hour after the last one.

use adapters_db::Backend;
use domain::circuit::{Circuit, CircuitState};
use domain::ports::{ProcessRegistry, ProcessReport};
use domain::Timestamp;

use crate::helpers::{all_at_once, each_backend, now, PROCESS_P};

fn circuit(provider: &str, state: CircuitState) -> Circuit {
    Circuit {
        provider: provider.into(),
        state,
    }
}

fn report(
    id: &str,
    started_at: Timestamp,
    seen_at: Timestamp,
    circuits: &[Circuit],
) -> ProcessReport {
    ProcessReport {
        id: id.into(),
        version: "0.1.0".into(),
        started_at,
        seen_at,
        circuits: circuits.to_vec(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_report_replaces_the_processes_earlier_one_with_its_circuits() {
    each_backend(|t| async move {
        let started = now();
        let open_until = started.plus_seconds(30);
        let first = report(
            "host-1-a",
            started,
            started,
            &[
                circuit("bank-b", CircuitState::Closed { failures: 2 }),
                circuit("bank-a", CircuitState::Open { until: open_until }),
                circuit("bank-c", CircuitState::HalfOpen { trial: false }),
            ],
        );
        t.db.report(&first).await.expect("first report");
        let read = t.db.processes(started).await.expect("processes");
        let mut expected = first.clone();
        expected
            .circuits
            .sort_by(|a, b| a.provider.cmp(&b.provider));
        assert_eq!(read, vec![expected]);

        // The next report: bank-a closed again, bank-c no longer there, a new version.
        let later = started.plus_seconds(5);
        let second = ProcessReport {
            version: "0.2.0".into(),
            ..report(
                "host-1-a",
                started,
                later,
                &[
                    circuit("bank-a", CircuitState::Closed { failures: 0 }),
                    circuit("bank-b", CircuitState::Closed { failures: 3 }),
                ],
            )
        };
        t.db.report(&second).await.expect("second report");
        assert_eq!(
            t.db.processes(later).await.expect("processes"),
            vec![second]
        );
        assert_eq!(t.rows("gateway_processes"), 1);
        assert_eq!(t.rows("process_circuits"), 2);

        // No circuits at all is a report too.
        let bare = report("host-1-a", started, later.plus_seconds(5), &[]);
        t.db.report(&bare).await.expect("bare report");
        assert_eq!(t.db.processes(later).await.expect("processes"), vec![bare]);
        assert_eq!(t.rows("process_circuits"), 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn processes_are_read_by_when_they_were_last_seen() {
    each_backend(|t| async move {
        let at = now();
        let closed = [circuit("bank", CircuitState::Closed { failures: 0 })];
        let recent = report("b-recent", at, at, &closed);
        let quiet = report("a-quiet", at, at.plus_seconds(-31), &closed);
        let edge = report("c-edge", at, at.plus_seconds(-30), &[]);
        for each in [&recent, &quiet, &edge] {
            t.db.report(each).await.expect("report");
        }
        let since = at.plus_seconds(-30);
        assert_eq!(
            t.db.processes(since).await.expect("processes"),
            vec![recent.clone(), edge.clone()]
        );
        assert_eq!(
            t.db.processes(at.plus_seconds(-60))
                .await
                .expect("processes"),
            vec![quiet, recent, edge]
        );
        assert!(t
            .db
            .processes(at.plus_seconds(1))
            .await
            .expect("processes")
            .is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_report_forgets_processes_silent_for_an_hour() {
    each_backend(|t| async move {
        let at = now();
        let hour = 3600;
        let closed = [circuit("bank", CircuitState::Closed { failures: 1 })];
        let gone = report("gone", at, at.plus_seconds(-hour - 1), &closed);
        let kept = report("kept", at, at.plus_seconds(-hour), &closed);
        t.db.report(&gone).await.expect("report");
        t.db.report(&kept).await.expect("report");
        // A report forgets only what is silent for an hour before it.
        assert_eq!(t.rows("gateway_processes"), 2);

        let live = report("live", at, at, &closed);
        t.db.report(&live).await.expect("report");
        let all = t.db.processes(Timestamp::from_millis(0)).await;
        assert_eq!(all.expect("processes"), vec![kept, live]);
        assert_eq!(t.rows_where("process_circuits", "process_id = 'gone'"), 0);
        assert_eq!(t.rows("process_circuits"), 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn processes_report_at_once_from_two_handles_and_a_stopped_one_is_forgotten() {
    each_backend(|t| async move {
        let handles = [t.db.clone(), t.second_process()];
        let at = now();
        let answers = all_at_once(8, |i| {
            let db = handles[i % 2].clone();
            let each = report(
                &format!("p-{i}"),
                at,
                at,
                &[
                    circuit("bank-a", CircuitState::Closed { failures: 0 }),
                    circuit(
                        "bank-b",
                        CircuitState::Open {
                            until: at.plus_seconds(30),
                        },
                    ),
                ],
            );
            async move { db.report(&each).await }
        })
        .await;
        assert!(answers.iter().all(Result::is_ok), "{answers:?}");
        assert_eq!(t.db.processes(at).await.expect("processes").len(), 8);
        assert_eq!(t.rows("process_circuits"), 16);

        assert!(t.db.forget_process("p-3").await.expect("forget"));
        assert!(!t.db.forget_process("p-3").await.expect("forget again"));
        let ids: Vec<String> =
            t.db.processes(at)
                .await
                .expect("processes")
                .into_iter()
                .map(|p| p.id)
                .collect();
        assert_eq!(ids, ["p-0", "p-1", "p-2", "p-4", "p-5", "p-6", "p-7"]);
        assert_eq!(t.rows("process_circuits"), 14);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_tables_refuse_inconsistent_circuits() {
    each_backend(|t| async move {
        t.exec(PROCESS_P);
        let insert = |state: &str, failures: i32, open_until: &str| {
            t.try_exec(&format!(
                "INSERT INTO process_circuits (process_id, provider, state, failures, \
                 open_until) VALUES ('p', 'bank', '{state}', {failures}, {open_until})"
            ))
        };
        assert!(insert("stuck", 0, "NULL").is_err());
        assert!(insert("open", 0, "NULL").is_err());
        assert!(insert("closed", 0, "1").is_err());
        assert!(insert("closed", -1, "NULL").is_err());
        // A circuit of no process (foreign keys as the gateway's SQLite connections have them).
        let fk = match t.backend() {
            Backend::Sqlite => "PRAGMA foreign_keys = ON; ",
            Backend::Postgres => "",
        };
        let orphan = format!(
            "{fk}INSERT INTO process_circuits (process_id, provider, state, failures) \
             VALUES ('nobody', 'bank', 'closed', 0)"
        );
        assert!(t.try_exec(&orphan).is_err());
        assert!(insert("open", 0, "1").is_ok());
    })
    .await;
}
