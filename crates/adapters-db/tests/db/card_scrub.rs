//! The card scrub migration: operations stored before it, with card numbers inside their user
//! data and deposit requisites and card security codes beside them, come out of `migrate`
//! masked and without the codes, on both backends; the step is done once, goes on from where
//! it stopped, and its revert drops only the schema.

use diesel::prelude::*;
use diesel::sql_types::{Nullable, Text};
use domain::ports::OperationStore;
use domain::OperationId;

use crate::helpers::{each_backend, merchant, TestDb};
use crate::migrations::{recorded_in, revert_through_async, reverts_through, CARD_SCRUB};

/// Rows changed per batch of the step is 500: enough rows for three batches.
const MANY: usize = 1_100;

/// Every written form of a card number or a card security code the dirty rows hold; none may
/// be left anywhere. (The codes are not bare digits: three or four digits occur by chance in
/// ids and hashes, and the rule drops the key whatever its value.)
const SECRETS: [&str; 14] = [
    "4242.4242.4242.4242",
    "4242424242424242",
    "4000 0000 0000 0002",
    "4000000000000002",
    "5555-5555-5555-4444",
    "5555555555554444",
    "4111/1111/1111/1111",
    "4111111111111111",
    "6011 1111 1111 1117",
    "6011111111111117",
    "code-737-a",
    "code-7319-b",
    "code-5821-c",
    "code-1100-d",
];

/// A deposit's user data and requisites as the version before stored them.
const DIRTY_USER_DATA: &str = r#"{"CVV2":"code-737-a","cvc":"code-7319-b","email":"a@shop.example","note":"pay 4242.4242.4242.4242 now"}"#;
const DIRTY_REQUISITES: &str = r#"{"card":{"Cid":"code-5821-c","list":["5555-5555-5555-4444",{"cvc2":"code-1100-d","kept":true}],"number":"4000 0000 0000 0002"},"n":4242424242424242}"#;

/// The same, as the step leaves them.
const CLEAN_USER_DATA: &str = r#"{"email":"a@shop.example","note":"pay 424242******4242 now"}"#;
const CLEAN_REQUISITES: &str = r#"{"card":{"list":["555555******4444",{"kept":true}],"number":"400000******0002"},"n":"424242******4242"}"#;

/// A payout's requisites: structured; only its names are scanned (this phone passes the Luhn
/// check, and is kept).
const PAYOUT_REQUISITES: &str =
    r#"{"accountName":"Ivan 5555 5555 5555 4444","bankName":"Bank A","phone":"+7900123456786"}"#;
const CLEAN_PAYOUT_REQUISITES: &str =
    r#"{"accountName":"Ivan 555555******4444","bankName":"Bank A","phone":"+7900123456786"}"#;

/// Data with no card data in it: left byte for byte as it is.
const PLAIN_USER_DATA: &str = r#"{"country":"RU","order":"12345, 2026-12-03"}"#;

fn sql_text(text: Option<&str>) -> String {
    text.map_or("NULL".to_string(), |t| format!("'{t}'"))
}

/// The INSERT of one operation of merchant `shop`, as any version since the first wrote it.
fn insert(
    id: &str,
    shop: &str,
    direction: &str,
    user_data: Option<&str>,
    requisites: Option<&str>,
) -> String {
    format!(
        "INSERT INTO operations (id, merchant_id, direction, method, status, amount, currency, \
         user_id, requisites, user_data, route_id, created_at, updated_at) VALUES ('{id}', \
         '{shop}', '{direction}', 'sbp', 3, 100, 'RUB', 'user-1', {}, {}, 1, 0, 0);",
        sql_text(requisites),
        sql_text(user_data)
    )
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// One stored operation's free-form columns.
#[derive(QueryableByName, Debug, Clone, PartialEq, Eq)]
struct Stored {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Nullable<Text>)]
    user_data: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    requisites: Option<String>,
}

fn stored(t: &TestDb) -> Vec<Stored> {
    let query = diesel::sql_query("SELECT id, user_data, requisites FROM operations ORDER BY id");
    match t.url.strip_prefix("sqlite://") {
        Some(path) => query.load(&mut SqliteConnection::establish(path).expect("SQLite")),
        None => query.load(&mut PgConnection::establish(&t.url).expect("PostgreSQL")),
    }
    .expect("the stored operations")
}

fn stored_one(t: &TestDb, id: &str) -> Stored {
    stored(t)
        .into_iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("operation {id} is stored"))
}

/// The step's row: (rows changed, done).
fn step(t: &TestDb) -> (i64, i64) {
    (
        t.count("SELECT rows_changed AS n FROM data_steps WHERE name = 'card_scrub'"),
        t.count("SELECT COUNT(*) AS n FROM data_steps WHERE done_at IS NOT NULL"),
    )
}

/// Reverts the card scrub migration (and every later one).
async fn revert(t: &TestDb) {
    let reverted = revert_through_async(&t.url, CARD_SCRUB).await;
    assert_eq!(reverted, reverts_through(CARD_SCRUB));
    assert!(t.try_exec("SELECT name FROM data_steps").is_err());
}

/// The ids of: a dirty deposit, a payout with a card number in its user data, a deposit
/// with plain data, a deposit without any, then `MANY` dirty deposits.
struct Staged {
    deposit: String,
    payout: String,
    plain: String,
    bare: String,
}

/// Stores, behind the code's back, the rows the version before the scrub could have stored.
async fn stage_dirty_rows(t: &TestDb) -> Staged {
    let shop = merchant(&t.db).await;
    let shop = shop.id.as_str();
    let staged = Staged {
        deposit: new_id(),
        payout: new_id(),
        plain: new_id(),
        bare: new_id(),
    };
    let payout_user_data = r#"{"note":"to 4111/1111/1111/1111"}"#;
    let mut sql = insert(
        &staged.deposit,
        shop,
        "deposit",
        Some(DIRTY_USER_DATA),
        Some(DIRTY_REQUISITES),
    );
    sql += &insert(
        &staged.payout,
        shop,
        "withdrawal",
        Some(payout_user_data),
        Some(PAYOUT_REQUISITES),
    );
    sql += &insert(
        &staged.plain,
        shop,
        "deposit",
        Some(PLAIN_USER_DATA),
        Some("{}"),
    );
    sql += &insert(&staged.bare, shop, "deposit", None, None);
    t.exec(&sql);
    let many_user_data = r#"{"CID":"code-737-a","note":"card 6011 1111 1111 1117 exp 12/28"}"#;
    for chunk in (0..MANY).collect::<Vec<_>>().chunks(100) {
        let sql: String = chunk
            .iter()
            .map(|_| insert(&new_id(), shop, "deposit", Some(many_user_data), None))
            .collect();
        t.exec(&sql);
    }
    staged
}

/// No written form of the staged card numbers and codes is left in any stored operation.
fn assert_no_card_data_stored(t: &TestDb) {
    for row in stored(t) {
        for column in [&row.user_data, &row.requisites].into_iter().flatten() {
            for secret in SECRETS {
                assert!(!column.contains(secret), "{secret} in {}: {column}", row.id);
            }
        }
    }
}

/// SQLite: no written form is left in the database files either (free pages, WAL).
fn assert_no_card_data_in_files(t: &TestDb) {
    let Some(path) = t.url.strip_prefix("sqlite://") else {
        return;
    };
    for file in [path.to_string(), format!("{path}-wal")] {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        for secret in SECRETS {
            let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
            assert!(!found, "{secret} is still in {file}");
        }
    }
}

async fn migrate(t: &TestDb) {
    let db = t.db.clone();
    tokio::task::spawn_blocking(move || db.migrate())
        .await
        .expect("migrate")
        .expect("the migration and its data step");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stored_card_data_is_masked_and_codes_dropped_by_the_migration() {
    each_backend(|t| async move {
        assert_eq!(step(&t), (0, 1), "a new database has nothing to clean");
        revert(&t).await;
        let staged = stage_dirty_rows(&t).await;
        let payout_before = stored_one(&t, &staged.payout);

        migrate(&t).await;

        assert!(recorded_in(&t).has(CARD_SCRUB));
        assert_eq!(step(&t), (2 + MANY as i64, 1));
        assert_no_card_data_stored(&t);
        assert_no_card_data_in_files(&t);
        let deposit = stored_one(&t, &staged.deposit);
        assert_eq!(deposit.user_data.as_deref(), Some(CLEAN_USER_DATA));
        assert_eq!(deposit.requisites.as_deref(), Some(CLEAN_REQUISITES));
        let payout = stored_one(&t, &staged.payout);
        assert_eq!(
            payout.user_data.as_deref(),
            Some(r#"{"note":"to 411111******1111"}"#)
        );
        assert_eq!(
            payout.requisites.as_deref(),
            Some(CLEAN_PAYOUT_REQUISITES),
            "the name masked, the phone kept"
        );
        assert_ne!(payout.requisites, payout_before.requisites);
        let plain = stored_one(&t, &staged.plain);
        assert_eq!(plain.user_data.as_deref(), Some(PLAIN_USER_DATA));
        assert_eq!(plain.requisites.as_deref(), Some("{}"));
        let bare = stored_one(&t, &staged.bare);
        assert_eq!((bare.user_data, bare.requisites), (None, None));

        // The operation reads back as stored.
        let id = OperationId::parse(&staged.deposit).expect("an id");
        let read = t.db.get(id).await.expect("read").expect("stored");
        let entries = read.user_data().entries();
        assert_eq!(entries["note"], "pay 424242******4242 now");
        assert_eq!(entries.len(), 2, "{entries:?}");

        // Done once: migrating again reads nothing and changes nothing.
        let before = stored(&t);
        migrate(&t).await;
        assert_eq!(stored(&t), before);
        assert_eq!(step(&t), (2 + MANY as i64, 1));

        // The revert drops the schema only: what was masked stays masked. Migrating again
        // goes through every row again and finds nothing to change.
        revert(&t).await;
        assert_eq!(stored(&t), before);
        migrate(&t).await;
        assert_eq!(stored(&t), before);
        assert_eq!(step(&t), (0, 1));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_scrub_cut_short_goes_on_from_where_it_stopped() {
    each_backend(|t| async move {
        revert(&t).await;
        let shop = merchant(&t.db).await;
        let dirty = r#"{"note":"4242.4242.4242.4242"}"#;
        let id = |n: u32| format!("00000000-0000-4000-8000-{n:012}");
        let ids: Vec<String> = [10, 20, 30, 40].map(id).to_vec();
        let sql: String = ids
            .iter()
            .map(|id| insert(id, shop.id.as_str(), "deposit", Some(dirty), None))
            .collect();
        t.exec(&sql);
        // The migration recorded the step, and a batch finished the first two rows before
        // the process stopped: their data is clean and the step's progress names the second.
        let url = t.url.clone();
        tokio::task::spawn_blocking(move || apply_migrations_only(&url))
            .await
            .expect("apply");
        assert_eq!(step(&t), (0, 0), "pending");
        let clean = r#"{"note":"424242******4242"}"#;
        for id in &ids[..2] {
            t.exec(&format!(
                "UPDATE operations SET user_data = '{clean}' WHERE id = '{id}'"
            ));
        }
        t.exec(&format!(
            "UPDATE data_steps SET progress = '{}', rows_changed = 2",
            ids[1]
        ));
        // A row before the progress that the step would change: it is not read again.
        let behind = id(15);
        t.exec(&insert(
            &behind,
            shop.id.as_str(),
            "deposit",
            Some(dirty),
            None,
        ));

        migrate(&t).await;

        assert_eq!(step(&t), (4, 1), "two more rows changed");
        for id in &ids {
            assert_eq!(stored_one(&t, id).user_data.as_deref(), Some(clean), "{id}");
        }
        let behind = stored_one(&t, &behind).user_data;
        assert_eq!(behind.as_deref(), Some(dirty), "not read again");
    })
    .await;
}

/// Applies the card scrub migration alone, as diesel does, without its data step: what a
/// process that stopped right after the migration's commit left.
fn apply_migrations_only(url: &str) {
    use diesel::migration::{Migration, MigrationSource};
    use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
    const SQLITE: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
    const POSTGRES: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");
    fn apply<DB: diesel::backend::Backend>(
        conn: &mut impl MigrationHarness<DB>,
        source: EmbeddedMigrations,
    ) where
        EmbeddedMigrations: MigrationSource<DB>,
    {
        let all = MigrationSource::<DB>::migrations(&source).expect("embedded migrations");
        let scrub = all
            .iter()
            .find(|m| m.name().version().to_string() == CARD_SCRUB)
            .expect("the card scrub migration");
        conn.run_migration(scrub.as_ref() as &dyn Migration<DB>)
            .expect("the card scrub migration applies");
    }
    match url.strip_prefix("sqlite://") {
        Some(path) => apply(
            &mut SqliteConnection::establish(path).expect("SQLite"),
            SQLITE,
        ),
        None => apply(
            &mut PgConnection::establish(url).expect("PostgreSQL"),
            POSTGRES,
        ),
    }
}

/// Several gateways starting at once on one PostgreSQL: one does the step, the others wait
/// for the migration lock and find it done.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gateways_starting_at_once_scrub_postgres_once() {
    each_backend(|t| async move {
        if t.backend() != adapters_db::Backend::Postgres {
            return;
        }
        revert(&t).await;
        stage_dirty_rows(&t).await;
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let db = t.second_process();
                tokio::task::spawn_blocking(move || db.migrate())
            })
            .collect();
        for handle in handles {
            handle.await.expect("migrate").expect("each process starts");
        }
        assert_eq!(step(&t), (2 + MANY as i64, 1));
        assert_no_card_data_stored(&t);
    })
    .await;
}
