//! Upgrades: a first-version database is upgraded in place; a first-version process stops at
//! start against the upgraded schema; a database upgraded by a newer gateway is refused.

use adapters_db::Database;
use diesel::backend::Backend;
use diesel::migration::{Migration, MigrationSource};
use diesel::prelude::*;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use domain::ports::OperationStore;
use domain::OperationId;

use crate::helpers::{
    each_backend, each_empty_backend, funded_merchant, insert_plain, now, operation,
    queue_callbacks, TestDb, FIRST_VERSION_SHOP, PROCESS_P,
};

const SQLITE: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
const POSTGRES: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// The newest migration the first version of the gateway embeds.
const FIRST_VERSION_NEWEST: &str = "20260101000000";

/// The migration that adds providers.
pub const PROVIDERS: &str = "20261123000000";

/// The migration that adds process reports.
pub const PROCESSES: &str = "20261124000000";

/// The migration that adds refunds.
pub const REFUNDS: &str = "20261125000000";

/// The migration that versions and encrypts secrets.
pub const SECRETS: &str = "20261126000000";

/// The migration that adds the operator console's tables.
pub const CONSOLE: &str = "20261127000000";

/// The migration that leaves the callback leases unindexed.
pub const OUTBOX_LEASES: &str = "20261128000000";

/// The migration that leaves room for claims in the outbox's pages and drops its
/// `operation_id` index.
pub const OUTBOX_WRITES: &str = "20261129000000";

/// The migration that gives PostgreSQL's counters a slot per connection.
pub const COUNTER_SLOTS: &str = "20261130000000";

/// The migration that gives PostgreSQL's hot tables domains and drops their foreign keys to
/// rows never deleted.
pub const HOT_PATH: &str = "20261201000000";

/// The migration that adds `merchants.require_signature_v2`.
pub const SIGNATURE_V2: &str = "20261202000000";

/// The migration that records the card scrub of stored operations as a data step.
pub const CARD_SCRUB: &str = "20261203000000";

/// The migration that adds the payment pages' read claims.
pub const PAGE_READS: &str = "20261204000000";

/// The migration that lets the outbox hold callbacks of disabled merchants.
pub const HELD_CALLBACKS: &str = "20261205000000";

/// The migration that makes discrepancies resolvable.
pub const DISCREPANCY_RESOLUTION: &str = "20261206000000";

/// The migration that lets a provider name any protocol (its `kind`), not only `acquirer`.
pub const PROVIDER_PROTOCOLS: &str = "20261207000000";

/// The migration that adds fees: the merchants' tariffs, the fee of operations and refunds,
/// and the ledger's fee entries.
pub const FEES: &str = "20261208000000";

/// The migration that records with each merchant entry of the ledger the balance it left,
/// and dates a balance's entries in the order they were applied.
pub const BALANCE_TRANSACTIONS: &str = "20261209000000";

/// The migration that adds disputes: their table and files, their ledger entries and their
/// callbacks (one per change).
pub const DISPUTES: &str = "20261210000000";

/// Numbered callbacks (`callback_outbox.sequence`, `operations.callback_sequence`) and the
/// merchant's index of its callbacks.
pub const CALLBACK_SEQUENCE: &str = "20261211000000";

/// The migrations a first-version gateway embeds.
struct FirstVersion(EmbeddedMigrations);

impl<DB: Backend> MigrationSource<DB> for FirstVersion
where
    EmbeddedMigrations: MigrationSource<DB>,
{
    fn migrations(&self) -> diesel::migration::Result<Vec<Box<dyn Migration<DB>>>> {
        let all = MigrationSource::<DB>::migrations(&self.0)?;
        Ok(all
            .into_iter()
            .filter(|m| m.name().version().to_string().as_str() <= FIRST_VERSION_NEWEST)
            .collect())
    }
}

/// What a first-version gateway does with the database at start (`Database::migrate` of
/// that version): diesel's `run_pending_migrations` with the migrations it embeds. The
/// versions applied, or diesel's error.
fn first_version_start(url: &str) -> Result<Vec<String>, String> {
    let versions = |done: Vec<diesel::migration::MigrationVersion<'_>>| {
        done.iter().map(ToString::to_string).collect::<Vec<_>>()
    };
    match url.strip_prefix("sqlite://") {
        Some(path) => {
            let mut conn = SqliteConnection::establish(path).map_err(|e| e.to_string())?;
            conn.run_pending_migrations(FirstVersion(SQLITE))
                .map(versions)
                .map_err(|e| e.to_string())
        }
        None => {
            let mut conn = PgConnection::establish(url).map_err(|e| e.to_string())?;
            conn.run_pending_migrations(FirstVersion(POSTGRES))
                .map(versions)
                .map_err(|e| e.to_string())
        }
    }
}

/// Reverts the newest migration the database records, as `diesel migration revert` would.
pub fn revert_newest(url: &str) -> Result<String, String> {
    match url.strip_prefix("sqlite://") {
        Some(path) => {
            let mut conn = SqliteConnection::establish(path).map_err(|e| e.to_string())?;
            conn.revert_last_migration(SQLITE)
                .map(|v| v.to_string())
                .map_err(|e| e.to_string())
        }
        None => {
            let mut conn = PgConnection::establish(url).map_err(|e| e.to_string())?;
            conn.revert_last_migration(POSTGRES)
                .map(|v| v.to_string())
                .map_err(|e| e.to_string())
        }
    }
}

/// Every migration this gateway embeds after the first version's, oldest first (the same
/// versions on both backends; a test below checks it).
pub fn later_versions() -> Vec<String> {
    let mut versions: Vec<String> = MigrationSource::<diesel::sqlite::Sqlite>::migrations(&SQLITE)
        .expect("the embedded migrations")
        .iter()
        .map(|m| m.name().version().to_string())
        .filter(|v| v.as_str() > FIRST_VERSION_NEWEST)
        .collect();
    versions.sort();
    versions
}

/// The versions that reverting `version` and every later migration takes back, newest
/// first, as `revert_newest` answers them.
pub fn reverts_through(version: &str) -> Vec<Result<String, String>> {
    let mut later: Vec<Result<String, String>> = later_versions()
        .into_iter()
        .filter(|v| v.as_str() >= version)
        .map(Ok)
        .collect();
    assert!(!later.is_empty(), "{version} is not embedded");
    later.reverse();
    later
}

/// Reverts `version` and every later migration, newest first, stopping at the first
/// failure: what each revert answered.
pub fn revert_through(url: &str, version: &str) -> Vec<Result<String, String>> {
    let mut answers = Vec::new();
    for _ in reverts_through(version) {
        let answer = revert_newest(url);
        let failed = answer.is_err();
        answers.push(answer);
        if failed {
            break;
        }
    }
    answers
}

/// [`revert_through`] off the async runtime.
pub async fn revert_through_async(url: &str, version: &str) -> Vec<Result<String, String>> {
    let (url, version) = (url.to_string(), version.to_string());
    tokio::task::spawn_blocking(move || revert_through(&url, &version))
        .await
        .expect("revert")
}

/// [`revert_newest`] on a blocking thread.
pub async fn revert_newest_async(url: &str) -> Result<String, String> {
    let url = url.to_string();
    tokio::task::spawn_blocking(move || revert_newest(&url))
        .await
        .expect("revert")
}

/// Migrating `t` again applies every migration there is.
pub fn assert_migrates_again(t: &TestDb) {
    t.db.migrate().expect("upgrade again");
    assert_eq!(recorded_in(t), Recorded::all());
}

/// Reverting the newest migration, `version`, is refused: the message names the `check` that
/// refuses it or says `message` (the backends word it differently), and nothing changes.
pub async fn assert_revert_refused(t: &TestDb, version: &str, check: &str, message: &str) {
    let refused = revert_newest_async(&t.url).await.expect_err(message);
    assert!(
        refused.contains(check) || refused.contains(message),
        "{refused}"
    );
    assert_eq!(
        recorded_in(t),
        Recorded::through(version),
        "nothing changed"
    );
}

/// Reverts `version` and every later migration of the database at `url`, and checks that
/// each one reverted, newest first.
pub async fn assert_reverts_through(url: &str, version: &str) {
    assert_eq!(
        revert_through_async(url, version).await,
        reverts_through(version),
        "reverting through {version}"
    );
}

/// What diesel's table records: how many versions in all, whether the first version's
/// newest one is recorded, and for each of [`later_versions`] whether it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub total: i64,
    pub first_version: i64,
    pub later: Vec<i64>,
}

impl Recorded {
    /// A database migrated up to `version` (one of [`later_versions`]) and no further.
    pub fn through(version: &str) -> Recorded {
        let later: Vec<i64> = later_versions()
            .iter()
            .map(|v| i64::from(v.as_str() <= version))
            .collect();
        Recorded {
            total: later.iter().sum(),
            first_version: 0,
            later,
        }
    }

    /// A database migrated up to the migration before `version`.
    pub fn before(version: &str) -> Recorded {
        let earlier = later_versions()
            .into_iter()
            .rfind(|v| v.as_str() < version)
            .expect("a migration before it");
        Self::through(&earlier)
    }

    /// A database with every migration.
    pub fn all() -> Recorded {
        let newest = later_versions()
            .pop()
            .expect("a migration after the first version");
        Self::through(&newest)
    }

    /// A database as the first version left it.
    pub fn first_version() -> Recorded {
        Recorded {
            total: 1,
            first_version: 1,
            later: vec![0; later_versions().len()],
        }
    }

    /// Whether `version` is recorded.
    pub fn has(&self, version: &str) -> bool {
        later_versions()
            .iter()
            .zip(&self.later)
            .any(|(v, n)| v == version && *n == 1)
    }
}

fn recorded(t: &impl Fn(&str) -> i64) -> Recorded {
    let count = |condition: &str| {
        t(&format!(
            "SELECT COUNT(*) AS n FROM __diesel_schema_migrations WHERE {condition}"
        ))
    };
    Recorded {
        total: count("1 = 1"),
        first_version: count(&format!("version = '{FIRST_VERSION_NEWEST}'")),
        later: later_versions()
            .iter()
            .map(|v| count(&format!("version = '{v}'")))
            .collect(),
    }
}

pub fn recorded_in(t: &TestDb) -> Recorded {
    recorded(&|sql: &str| t.count(sql))
}

#[test]
fn both_backends_embed_the_same_migrations() {
    let mut postgres: Vec<String> = MigrationSource::<diesel::pg::Pg>::migrations(&POSTGRES)
        .expect("the embedded migrations")
        .iter()
        .map(|m| m.name().version().to_string())
        .filter(|v| v.as_str() > FIRST_VERSION_NEWEST)
        .collect();
    postgres.sort();
    assert_eq!(postgres, later_versions());
    for version in [
        PROVIDERS,
        PROCESSES,
        REFUNDS,
        SECRETS,
        CONSOLE,
        OUTBOX_LEASES,
    ] {
        assert!(later_versions().iter().any(|v| v == version), "{version}");
    }
    for version in [
        OUTBOX_WRITES,
        COUNTER_SLOTS,
        HOT_PATH,
        SIGNATURE_V2,
        CARD_SCRUB,
    ] {
        assert!(later_versions().iter().any(|v| v == version), "{version}");
    }
    for version in [
        PAGE_READS,
        HELD_CALLBACKS,
        DISCREPANCY_RESOLUTION,
        FEES,
        BALANCE_TRANSACTIONS,
    ] {
        assert!(later_versions().iter().any(|v| v == version), "{version}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_first_version_process_stops_at_start_against_the_new_schema() {
    each_backend(|t| async move {
        // The database records the providers, process-report, refunds, secrets and console
        // migrations only.
        assert_eq!(recorded_in(&t), Recorded::all());
        let url = t.url.clone();
        let refused = tokio::task::spawn_blocking(move || first_version_start(&url))
            .await
            .expect("first-version start")
            .expect_err("a first-version process must not start");
        assert!(refused.contains("already exists"), "{refused}");
        // Its failed attempt changed nothing.
        assert_eq!(recorded_in(&t), Recorded::all());
        assert_eq!(t.rows("routes"), 8);
        t.db.migrate().expect("this version still starts");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_first_version_database_is_upgraded_in_place() {
    each_empty_backend(|fresh| async move {
        let url = fresh.url.clone();
        let applied = tokio::task::spawn_blocking(move || first_version_start(&url))
            .await
            .expect("first-version start")
            .expect("a first-version process migrates an empty database");
        assert_eq!(applied, vec![FIRST_VERSION_NEWEST.to_string()]);
        // A waiting deposit the first version stored, with no provider of its own.
        let id = OperationId::from_uuid(uuid::Uuid::new_v4());
        fresh.exec(&format!(
            "{FIRST_VERSION_SHOP}; \
             INSERT INTO operations (id, merchant_id, direction, method, status, amount, \
             currency, user_id, route_id, expires_at, created_at, updated_at) VALUES \
             ('{id}', 'shop', 'deposit', 'card', 3, 100, 'RUB', 'user-1', 1, 1000, 0, 0)"
        ));

        let url = fresh.url.clone();
        let db = tokio::task::spawn_blocking(move || {
            let db = Database::connect(&url).expect("connect");
            db.migrate().expect("upgrade");
            db
        })
        .await
        .expect("upgrade");
        let kept = db.get(id).await.expect("read").expect("kept");
        assert_eq!(kept.provider(), "sandbox");
        assert_eq!(
            db.expired_deposits(now(), 10).await.expect("sweep"),
            vec![id]
        );
        assert_eq!(recorded(&|sql: &str| fresh.count(sql)), Recorded::all());

        let url = fresh.url.clone();
        let refused = tokio::task::spawn_blocking(move || first_version_start(&url))
            .await
            .expect("first-version start");
        assert!(refused.is_err(), "{refused:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_upgraded_by_a_newer_gateway_is_refused() {
    each_backend(|t| async move {
        t.exec("INSERT INTO __diesel_schema_migrations (version) VALUES ('20991231000000')");
        for _ in 0..2 {
            let refused = t.db.migrate().expect_err("an unknown migration is refused");
            let message = format!("{refused:#}");
            assert!(
                message.contains("20991231000000") && message.contains("newer gateway"),
                "{message}"
            );
        }
        assert_eq!(
            recorded_in(&t),
            Recorded {
                total: Recorded::all().total + 1,
                ..Recorded::all()
            }
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_process_reports_migration_reverts_to_the_providers_version() {
    each_backend(|t| async move {
        t.exec(&format!(
            "{PROCESS_P}; \
             INSERT INTO process_circuits (process_id, provider, state, failures) \
             VALUES ('p', 'bank', 'closed', 0)"
        ));
        let url = t.url.clone();
        let reverted = revert_through_async(&url, PROCESSES).await;
        assert_eq!(reverted, reverts_through(PROCESSES));
        assert_eq!(recorded_in(&t), Recorded::through(PROVIDERS));
        assert!(t.try_exec("SELECT id FROM gateway_processes").is_err());
        assert!(t.try_exec("SELECT state FROM process_circuits").is_err());
        assert_eq!(t.rows("providers"), 0);

        assert_migrates_again(&t);
        assert_eq!(t.rows("gateway_processes"), 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_providers_migration_reverts_to_the_first_version() {
    each_backend(|t| async move {
        let url = t.url.clone();
        let (reverted, first) = tokio::task::spawn_blocking(move || {
            let reverted = revert_through(&url, PROVIDERS);
            (reverted, first_version_start(&url))
        })
        .await
        .expect("revert");
        assert_eq!(reverted, reverts_through(PROVIDERS));
        // A first-version process starts again: nothing is pending for it.
        assert_eq!(first, Ok(vec![]));
        assert_eq!(recorded_in(&t), Recorded::first_version());
        assert!(t.try_exec("SELECT provider FROM operations").is_err());
        assert!(t.try_exec("SELECT name FROM providers").is_err());

        assert_migrates_again(&t);
        assert_eq!(t.rows("providers"), 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_outbox_writes_migration_drops_the_operation_index_and_reverts() {
    each_backend(|t| async move {
        let postgres = !t.url.starts_with("sqlite://");
        let operation_index = || {
            t.count(if postgres {
                "SELECT COUNT(*) AS n FROM pg_indexes WHERE indexname = 'callback_outbox_operation'"
            } else {
                "SELECT COUNT(*) AS n FROM sqlite_master \
                 WHERE type = 'index' AND name = 'callback_outbox_operation'"
            })
        };
        let filled_to = |percent: u32| {
            t.count(&format!(
                "SELECT COUNT(*) AS n FROM pg_class WHERE relname = 'callback_outbox' \
                 AND 'fillfactor={percent}' = ANY(reloptions)"
            ))
        };
        assert_eq!(operation_index(), 0);
        if postgres {
            assert_eq!(filled_to(45), 1, "room for a claim's new versions");
        }

        let url = t.url.clone();
        let reverted = revert_through_async(&url, OUTBOX_WRITES).await;
        assert_eq!(reverted, reverts_through(OUTBOX_WRITES));
        assert_eq!(operation_index(), 1);
        if postgres {
            assert_eq!(filled_to(70), 1, "the outbox leases migration's filling");
        }
        assert_eq!(recorded_in(&t), Recorded::through(OUTBOX_LEASES));

        t.db.migrate().expect("upgrade again");
        assert_eq!(operation_index(), 0);
        assert_eq!(recorded_in(&t), Recorded::all());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_counter_slots_migration_widens_postgres_slots_and_folds_them_back_on_revert() {
    each_backend(|t| async move {
        let postgres = !t.url.starts_with("sqlite://");
        let add = |slot: i64, count: i64, amount: i64| {
            t.try_exec(&format!(
                "INSERT INTO operation_counts \
                 (minute, direction, method, status, currency, slot, count, amount) \
                 VALUES (100, 'deposit', 'card', 1, 'RUB', {slot}, {count}, {amount})"
            ))
        };
        let sums = || {
            (
                t.count(
                    "SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) AS n FROM operation_counts",
                ),
                t.count(
                    "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) AS n FROM operation_counts",
                ),
            )
        };
        add(1, 2, 200).expect("slot 1");
        if postgres {
            // 64 slots on PostgreSQL, one per connection.
            add(9, 3, 300).expect("slot 9");
            add(63, 4, 400).expect("slot 63");
            assert!(add(64, 1, 1).is_err(), "slot 64 is out of range");
        } else {
            // SQLite keeps its eight: one writer at a time, no counter to wait on.
            assert!(add(9, 3, 300).is_err(), "slot 9 is out of range on SQLite");
        }
        let before = sums();

        let url = t.url.clone();
        let reverted = revert_through_async(&url, COUNTER_SLOTS).await;
        assert_eq!(reverted, reverts_through(COUNTER_SLOTS));
        assert_eq!(recorded_in(&t), Recorded::through(OUTBOX_WRITES));
        // Every sum the overview reads is kept, in slots 0 to 7.
        assert_eq!(sums(), before);
        assert_eq!(t.rows_where("operation_counts", "slot >= 8"), 0);
        if postgres {
            // 9 % 8 = 1: added to the row already in slot 1; 63 % 8 = 7.
            assert_eq!(
                t.count("SELECT count AS n FROM operation_counts WHERE slot = 1"),
                5
            );
            assert_eq!(
                t.count("SELECT count AS n FROM operation_counts WHERE slot = 7"),
                4
            );
        }
        assert!(add(9, 1, 1).is_err(), "eight slots again");

        assert_migrates_again(&t);
        assert_eq!(add(40, 1, 1).is_ok(), postgres);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_hot_path_migration_keeps_every_rule_and_reverts_to_table_constraints() {
    each_backend(|t| async move {
        let postgres = !t.url.starts_with("sqlite://");
        let shop = funded_merchant(&t.db, 10_00).await;
        let op = operation(&shop, domain::Direction::Deposit, 1_00);
        insert_plain(&t.db, &op).await;
        let [declined] = queue_callbacks(&t.db, &shop, 1, now()).await[..] else {
            panic!("one callback queued");
        };
        let (id, declined) = (op.id(), declined);
        // With the balance it left where the schema records it, so that only the rule under
        // test refuses the entry.
        let ledger_entry = |kind: &str, refund: &str| {
            let (columns, values) = match recorded_in(&t).has(BALANCE_TRANSACTIONS) {
                true => (", available_after, held_after", ", 1, 0"),
                false => ("", ""),
            };
            format!(
                "INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, \
                 refund_id, created_at{columns}) VALUES ('{}', 'RUB', '{kind}', 1, 0, {refund}, \
                 0{values})",
                shop.id
            )
        };
        // Every rule of the hot tables, whichever form it takes.
        let rules_hold = || {
            let refused = [
                format!("UPDATE operations SET direction = 'sideways' WHERE id = '{id}'"),
                format!("UPDATE operations SET method = 'cash' WHERE id = '{id}'"),
                format!("UPDATE operations SET status = 4 WHERE id = '{id}'"),
                format!(
                    "INSERT INTO provider_attempts (operation_id, number, route_id, provider, \
                     state, created_at, updated_at) VALUES ('{id}', 1, 1, 'bank', 'lost', 0, 0)"
                ),
                ledger_entry("gift", "NULL"),
                ledger_entry("refund_hold", "NULL"),
                ledger_entry("manual_credit", "'not-a-refund'"),
                format!("UPDATE callback_outbox SET state = 'lost' WHERE id = '{declined}'"),
                format!("UPDATE callback_outbox SET direction = 'up' WHERE id = '{declined}'"),
                "UPDATE operation_counts SET status = 0".to_string(),
            ];
            for sql in refused {
                assert!(t.try_exec(&sql).is_err(), "refused: {sql}");
            }
            assert_eq!(
                t.rows_where("operations", "status = 3"),
                1,
                "nothing changed"
            );
            assert_eq!(t.rows("ledger"), 1);
            assert_eq!(t.rows_where("callback_outbox", "state = 'pending'"), 1);
        };
        // The domains each column now takes (PostgreSQL); SQLite keeps its table constraints.
        let domains = || {
            t.count(
                "SELECT COUNT(*) AS n FROM information_schema.columns \
                 WHERE table_schema = 'public' AND domain_name IS NOT NULL",
            )
        };

        rules_hold();
        if postgres {
            assert_eq!(domains(), 9);
            for parent in ["merchants", "routes", "operations"] {
                let error = t
                    .try_exec(&format!("DELETE FROM {parent}"))
                    .expect_err(parent);
                assert!(error.contains("never deleted"), "{parent}: {error}");
            }
            assert!(t.try_exec("UPDATE routes SET id = id + 100").is_err());
            assert!(t.try_exec("TRUNCATE operations CASCADE").is_err());
        }
        assert_eq!(t.rows("operations"), 2);
        let allowed = format!("UPDATE operations SET status = 3 WHERE id = '{id}'");
        assert_eq!(
            t.try_exec(&allowed),
            Ok(()),
            "a value in the list is accepted"
        );

        let url = t.url.clone();
        let reverted = revert_through_async(&url, HOT_PATH).await;
        assert_eq!(reverted, reverts_through(HOT_PATH));
        assert_eq!(recorded_in(&t), Recorded::through(COUNTER_SLOTS));
        rules_hold();
        if postgres {
            assert_eq!(domains(), 0);
            // The foreign keys are back.
            assert!(t
                .try_exec(&format!("DELETE FROM operations WHERE id = '{declined}'"))
                .is_err());
        }

        assert_migrates_again(&t);
        rules_hold();
        if postgres {
            assert_eq!(domains(), 9);
        }
    })
    .await;
}
