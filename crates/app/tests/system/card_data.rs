//! Card data anywhere: a deposit whose `userData` and `requisites` hold card numbers inside
//! text (split by dots, slashes, spaces and dashes, at depth, as a number) and card security
//! codes under several names. No full card number and no code comes back in any answer, the
//! callback, the console's page or export, the log, or anything the database stores (every
//! column of every table; on SQLite the raw files as well). Identifiers that look like card
//! numbers are kept as sent.

use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::Text;
use serde_json::{json, Value};

use crate::helpers::console::{create_operator, Visitor};
use crate::helpers::{
    on_sqlite_and_postgres, Api, Backend, CallbackReceiver, GatewayProcess, Merchant, Sandbox,
    Serve, TestDb,
};

const DEADLINE: Duration = Duration::from_secs(60);
const PASSWORD: &str = "correct horse battery staple";

/// Identifiers that pass the Luhn check: kept as sent.
const USER_ID: &str = "4000002500003155";
const MERCHANT_OPERATION_ID: &str = "4000-0000-0000-3220";

/// Every written form of the card numbers sent inside text, and the card security codes.
/// (The codes are not bare digits, which occur by chance in ids and hashes: the rule drops
/// the key whatever its value.)
const NEVER: [&str; 22] = [
    "4000.0566.5566.5556",
    "4000056655665556",
    "5555/5555/5555/4444",
    "5555555555554444",
    "3782 822463 10005",
    "378282246310005",
    "6011-1111-1111-1117",
    "6011111111111117",
    "4111 1111 1111 1111",
    "4111111111111111",
    "5105-1051-0510-5100",
    "5105105105105100",
    "4012888888881881",
    "4242/4242/4242/4242",
    "4242424242424242",
    "c737vq",
    "v2-737x",
    "cid7319w",
    "c2-5821y",
    "cv-4412u",
    "CVV2",
    "Cvc2",
];

/// What the console shows of the notes: each card number masked where it stood.
const SHOWN: [&str; 4] = [
    "paid with 400005******5556 today",
    "card 555555******4444 exp 12/28",
    "use 378282*****0005 please",
    "pan=601111******1117;",
];

fn deposit_with_card_data(callback: &str) -> Value {
    json!({
        "amount": "100.00",
        "currency": "RUB",
        "paymentMethod": "card",
        "userId": USER_ID,
        "merchantOperationId": MERCHANT_OPERATION_ID,
        "callbackUrl": callback,
        "userData": {
            "email": "buyer@shop.example",
            "cvc": "c737vq",
            "CVV2": "v2-737x",
            "cid": "cid7319w",
            "note": "paid with 4000.0566.5566.5556 today",
            "memo": "card 5555/5555/5555/4444 exp 12/28",
            "comment": "use 3782 822463 10005 please",
            "ref": "pan=6011-1111-1111-1117;",
        },
        "requisites": {
            "card": {
                "holder": "IVAN IVANOV",
                "Cvc2": "c2-5821y",
                "history": [
                    "last: 4111 1111 1111 1111",
                    {"cVv": "cv-4412u", "text": "alt 5105-1051-0510-5100."},
                ],
            },
            "number": 4012888888881881u64,
            "slashes": "4242/4242/4242/4242",
        },
    })
}

#[track_caller]
fn assert_clean(what: &str, text: &str) {
    for never in NEVER {
        if let Some(at) = text.find(never) {
            let start = text[..at]
                .char_indices()
                .rev()
                .nth(120)
                .map_or(0, |(i, _)| i);
            let around: String = text[start..].chars().take(240 + never.len()).collect();
            panic!("{never} in {what}: ...{around}...");
        }
    }
}

#[track_caller]
fn assert_clean_bytes(what: &str, bytes: &[u8]) {
    for never in NEVER {
        let found = bytes.windows(never.len()).any(|w| w == never.as_bytes());
        assert!(!found, "{never} in {what}");
    }
}

on_sqlite_and_postgres!(async card_data_anywhere: card_data_on_sqlite, card_data_on_postgres);

async fn card_data_anywhere(db: TestDb) {
    let shop = Merchant::create(&db, "card-data-shop");
    create_operator(&db, "ada", "admin", PASSWORD);
    let receiver = CallbackReceiver::start();
    let serve = Serve::default().with("GATEWAY_ADMIN", "on").log("debug");
    let mut gw = GatewayProcess::start("a", &db, &serve);
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;
    let body = deposit_with_card_data(&receiver.url("/cb"));

    let created = api.create_deposit(&body).await;
    let id = created.operation_id();
    assert_clean("the creation answer", &created.body.to_string());
    let path = format!("/api/v1/deposits/{id}");
    let read = api.get(&path).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_clean("the read", &read.body.to_string());
    assert_eq!(read.body["data"]["userId"], USER_ID, "{}", read.body);
    assert_eq!(
        read.body["data"]["merchantOperationId"], MERCHANT_OPERATION_ID,
        "{}",
        read.body
    );
    let replay = api.create_deposit(&body).await;
    assert_eq!(replay.operation_id(), id, "a replay: {}", replay.body);
    assert_clean("the replay", &replay.body.to_string());

    sandbox.complete(&id, 1).await;
    receiver
        .wait_delivered(std::slice::from_ref(&id), DEADLINE)
        .await;
    let callbacks = receiver.for_operation(&id);
    assert!(!callbacks.is_empty());
    for callback in &callbacks {
        assert_clean_bytes("the callback body", &callback.body);
        let data = callback.json()["data"].clone();
        assert_eq!(data["userId"], USER_ID, "{data}");
        assert_eq!(data["merchantOperationId"], MERCHANT_OPERATION_ID, "{data}");
    }

    let mut ada = Visitor::new(&gw.url(""));
    assert_eq!(ada.sign_in("ada", PASSWORD).await.status, 303);
    let page = ada.get(&format!("/admin/operations/{id}")).await;
    assert_eq!(page.status, 200, "{page:?}");
    assert_clean("the console's operation page", &page.body);
    for shown in SHOWN {
        assert!(
            page.body.contains(shown),
            "{shown} not on the page:\n{}",
            page.body
        );
    }
    assert!(page.body.contains("buyer@shop.example"));
    assert!(page.body.contains(USER_ID) && page.body.contains(MERCHANT_OPERATION_ID));
    let csv = ada
        .get(&format!("/admin/operations.csv?merchant={}", shop.id))
        .await;
    assert_eq!(csv.status, 200, "{csv:?}");
    assert_clean("the console's export", &csv.body);
    assert!(csv.body.contains(USER_ID) && csv.body.contains(MERCHANT_OPERATION_ID));

    assert_database_clean(&db);
    gw.terminate();
    assert_clean("the gateway's log", &gw.log_text());
    // Stopped, SQLite's WAL is checkpointed into the file: both are checked again.
    assert_database_clean(&db);
    let stored = all_stored_text(&db);
    assert!(stored.contains(USER_ID), "identifiers are stored as sent");
    assert!(stored.contains(MERCHANT_OPERATION_ID));
    assert!(
        stored.contains("424242******4242"),
        "the masked forms are stored"
    );
}

/// Nothing the database keeps holds a full card number or a code: every column of every
/// table and, on SQLite, the database file, its WAL and its shared-memory index.
fn assert_database_clean(db: &TestDb) {
    assert_clean("the database's tables", &all_stored_text(db));
    if db.backend == Backend::Sqlite {
        let path = db.url.trim_start_matches("sqlite://");
        for file in [
            path.to_string(),
            format!("{path}-wal"),
            format!("{path}-shm"),
        ] {
            if let Ok(bytes) = std::fs::read(&file) {
                assert_clean_bytes(&file, &bytes);
            }
        }
    }
}

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    row: String,
}

/// What `sql` reads on `conn` (`what` names it if the read fails).
fn read<'q, C, T>(conn: &mut C, sql: &str, what: &str) -> Vec<T>
where
    diesel::query_builder::SqlQuery: diesel::query_dsl::LoadQuery<'q, C, T>,
{
    diesel::sql_query(sql).load(conn).expect(what)
}

/// Every row of every table, each as one text: SQLite's columns cast to text and joined,
/// PostgreSQL's row literal.
fn all_stored_text(db: &TestDb) -> String {
    let mut all = String::new();
    match db.backend {
        Backend::Sqlite => {
            let path = db.url.trim_start_matches("sqlite://");
            let mut conn = SqliteConnection::establish(path).expect("SQLite");
            let tables: Vec<Name> = read(
                &mut conn,
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
                "the tables",
            );
            for table in tables {
                let sql = format!("SELECT name FROM pragma_table_info('{}')", table.name);
                let columns: Vec<Name> = read(&mut conn, &sql, "the columns");
                let joined = columns
                    .iter()
                    .map(|c| format!("COALESCE(CAST(\"{}\" AS TEXT), '')", c.name))
                    .collect::<Vec<_>>()
                    .join(" || '|' || ");
                let sql = format!("SELECT {joined} AS row FROM \"{}\"", table.name);
                let rows: Vec<Row> = read(&mut conn, &sql, "the rows");
                all.extend(rows.into_iter().map(|r| r.row + "\n"));
            }
        }
        Backend::Postgres => {
            let mut conn = PgConnection::establish(&db.url).expect("PostgreSQL");
            let tables: Vec<Name> = read(
                &mut conn,
                "SELECT CAST(table_name AS TEXT) AS name FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' \
                 ORDER BY 1",
                "the tables",
            );
            assert!(tables.iter().any(|t| t.name == "operations"));
            for table in tables {
                let sql = format!("SELECT CAST(t AS TEXT) AS row FROM \"{}\" t", table.name);
                let rows: Vec<Row> = read(&mut conn, &sql, "the rows");
                all.extend(rows.into_iter().map(|r| r.row + "\n"));
            }
        }
    }
    all
}
