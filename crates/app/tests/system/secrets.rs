//! Issue 17: secret rotation, signed timestamps and secrets encrypted at rest, through the real
//! binary: the CLI rotates while a gateway serves, callbacks carry `x-signature-v2` with the
//! newest secret, and GATEWAY_MASTER_KEY guards every command.

use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::cli::{command, keys_of, rotate, run, run_bounded, Output};
use crate::helpers::{
    card_payout, deposit, gateway, on_sqlite_and_postgres, wait_until, Api, Backend,
    CallbackReceiver, GatewayProcess, Merchant, Serve, TestDb, DEADLINE,
};

const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const OTHER_KEY: &str = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

/// `gateway ARGS...` on `db` with GATEWAY_MASTER_KEY set to `key`.
fn keyed(db: &TestDb, key: &str, args: &[&str]) -> Output {
    run(command(db).env("GATEWAY_MASTER_KEY", key).args(args))
}

/// The merchant's entry in `merchant list --json`.
#[track_caller]
fn listed(db: &TestDb, id: &str) -> Value {
    let out = gateway(db, &["merchant", "list", "--json"]);
    out.expect_code(0);
    out.json()
        .as_array()
        .and_then(|all| all.iter().find(|m| m["merchantId"] == id).cloned())
        .unwrap_or_else(|| panic!("{id} not listed:\n{out}"))
}

on_sqlite_and_postgres!(
    async rotation_while_serving:
    a_rotation_by_the_cli_applies_from_the_next_request_on_sqlite,
    a_rotation_by_the_cli_applies_from_the_next_request_on_postgres
);

async fn rotation_while_serving(db: TestDb) {
    let shop = Merchant::funded(&db, "rotating-shop", "1000.00");
    let receiver = CallbackReceiver::start();
    let gw = GatewayProcess::start("a", &db, &Serve::default());
    let old = Api::new(&gw, &shop);
    assert_eq!(old.get("/api/v1/balance").await.status, 200);
    assert_eq!(
        listed(&db, &shop.id)["secrets"],
        json!({"deposit": {"live": 1}, "withdrawal": {"live": 1}})
    );

    // Refused overlaps exit 2 and change nothing; an unknown merchant is 3.
    for overlap in ["721h", "31d", "1w", "-1h", "1.5h", "24", ""] {
        let out = gateway(
            &db,
            &[
                "merchant",
                "rotate-secret",
                &shop.id,
                "--direction",
                "withdrawal",
                "--overlap",
                overlap,
            ],
        );
        out.expect_code(2);
        assert!(out.stderr.contains("--overlap"), "{out}");
    }
    gateway(
        &db,
        &["merchant", "rotate-secret", &shop.id, "--direction", "both"],
    )
    .expect_code(2);
    gateway(
        &db,
        &[
            "merchant",
            "rotate-secret",
            "no-such-shop",
            "--direction",
            "deposit",
        ],
    )
    .expect_code(3);
    assert_eq!(
        listed(&db, &shop.id)["secrets"]["withdrawal"],
        json!({"live": 1})
    );

    // A withdrawal rotation with an overlap: both secrets work, callbacks use the new one.
    let rotated = rotate(&db, &shop.id, "withdrawal", "2h");
    let keys = keys_of(&rotated);
    assert_eq!(
        keys,
        ["direction", "merchantId", "oldSecretExpiresAt", "secret"],
        "{rotated}"
    );
    assert_eq!(rotated["merchantId"], shop.id.as_str());
    assert_eq!(rotated["direction"], "withdrawal");
    let secret = rotated["secret"]
        .as_str()
        .expect("the new secret")
        .to_string();
    assert_eq!(secret.len(), 64);
    assert_ne!(secret, shop.withdrawal_secret);
    let ends = rotated["oldSecretExpiresAt"].as_str().expect("an end");
    let listing = listed(&db, &shop.id);
    assert_eq!(listing["secrets"]["withdrawal"]["live"], 2, "{listing}");
    assert_eq!(listing["secrets"]["withdrawal"]["oldSecretExpiresAt"], ends);
    assert_eq!(listing["secrets"]["deposit"], json!({"live": 1}));
    assert!(
        !listing.to_string().contains(&secret),
        "list never shows secrets"
    );

    let renewed = Merchant {
        withdrawal_secret: secret.clone(),
        ..shop.clone()
    };
    let new = Api::new(&gw, &renewed);
    assert_eq!(
        old.get("/api/v1/balance").await.status,
        200,
        "old secret in the overlap"
    );
    assert_eq!(
        new.get("/api/v1/balance").await.status,
        200,
        "new secret at once"
    );
    let cb = receiver.url("/cb");
    let payout = new
        .create_withdrawal(&card_payout(
            "10.00",
            "4111111111111111",
            "after-rotation",
            Some(&cb),
        ))
        .await;
    let payout_id = payout.operation_id();
    wait_until("the payout's callback", DEADLINE, || {
        let got = receiver.for_operation(&payout_id);
        async move { (!got.is_empty(), format!("{got:?}")) }
    })
    .await;
    let callback = &receiver.for_operation(&payout_id)[0];
    assert_eq!(
        callback.signed_with(&secret),
        Ok(()),
        "signed with the newest secret"
    );
    assert!(callback.signed_with(&shop.withdrawal_secret).is_err());
    // The Standard Webhooks header carries one signature per live secret: a merchant still
    // verifying with the old one accepts the callback during the overlap.
    assert_eq!(callback.standard_signatures().len(), 2, "{callback:?}");
    assert_eq!(
        callback.standard_signed_with(&shop.withdrawal_secret),
        Ok(()),
        "the old secret's own signature, in the overlap"
    );
    assert!(callback.standard_signed_with("not-a-secret").is_err());

    // A deposit rotation with no overlap: the old secret is refused from the next request.
    let rotated = rotate(&db, &shop.id, "deposit", "0s");
    let body = deposit("card", "10.00", "after-revoke", None);
    let refused = old.create_deposit(&body).await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    let renewed = Merchant {
        deposit_secret: rotated["secret"].as_str().expect("secret").to_string(),
        ..renewed
    };
    let accepted = Api::new(&gw, &renewed).create_deposit(&body).await;
    assert_eq!(accepted.status, 200, "{}", accepted.body);
    assert_eq!(
        listed(&db, &shop.id)["secrets"]["deposit"],
        json!({"live": 1})
    );
}

on_sqlite_and_postgres!(
    async required_timestamps:
    a_required_timestamp_is_set_and_lifted_by_the_cli_on_sqlite,
    a_required_timestamp_is_set_and_lifted_by_the_cli_on_postgres
);

async fn required_timestamps(db: TestDb) {
    let out = gateway(
        &db,
        &[
            "merchant",
            "create",
            "--name",
            "strict",
            "--require-timestamp",
            "--json",
        ],
    );
    out.expect_code(0);
    let json = out.json();
    let strict = Merchant {
        id: json["merchantId"].as_str().expect("id").into(),
        deposit_secret: json["depositSecret"].as_str().expect("secret").into(),
        withdrawal_secret: json["withdrawalSecret"].as_str().expect("secret").into(),
    };
    assert_eq!(listed(&db, &strict.id)["requireTimestamp"], true);
    let gw = GatewayProcess::start("a", &db, &Serve::default());
    let bare = Api::new(&gw, &strict);
    assert_eq!(bare.get("/api/v1/balance").await.status, 401);
    assert_eq!(bare.stamped().get("/api/v1/balance").await.status, 200);
    let body = deposit("card", "10.00", "stamped", None);
    assert_eq!(bare.stamped().create_deposit(&body).await.status, 200);

    gateway(
        &db,
        &["merchant", "update", &strict.id, "--no-require-timestamp"],
    )
    .expect_code(0);
    assert_eq!(listed(&db, &strict.id)["requireTimestamp"], false);
    // Running gateways apply it within 5 seconds.
    bare.wait_for_balance_status(
        "the timestamp no longer required",
        Duration::from_secs(10),
        200,
    )
    .await;
    gateway(&db, &["merchant", "update", &strict.id]).expect_code(2);
    gateway(
        &db,
        &["merchant", "update", "nobody", "--require-timestamp"],
    )
    .expect_code(3);
}

/// Every secret the CLI printed must be absent from the SQLite file and its WAL.
fn assert_no_clear_secret_in_files(db: &TestDb, secrets: &[String]) {
    let path = db.url.trim_start_matches("sqlite://");
    for file in [path.to_string(), format!("{path}-wal")] {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        for secret in secrets {
            assert!(
                !bytes
                    .windows(secret.len())
                    .any(|window| window == secret.as_bytes()),
                "a secret in clear in {file}"
            );
        }
    }
}

fn contains(bytes: &[u8], needle: &str) -> bool {
    bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}

on_sqlite_and_postgres!(
    guarded_by_the_master_key:
    the_master_key_guards_every_command_on_sqlite,
    the_master_key_guards_every_command_on_postgres
);

fn guarded_by_the_master_key(db: &TestDb) {
    // A malformed key stops every command and is never echoed.
    for bad in ["xyz", &KEY[..63], &format!("{KEY}0")] {
        let out = keyed(db, bad, &["migrate"]);
        assert_ne!(out.code, 0, "{out}");
        assert!(out.stderr.contains("GATEWAY_MASTER_KEY"), "{out}");
        assert!(
            bad.len() < 8 || !out.stderr.contains(bad),
            "the key is echoed:\n{out}"
        );
    }
    let out = keyed(
        db,
        KEY,
        &["merchant", "create", "--name", "sealed", "--json"],
    );
    out.expect_code(0);
    let created = out.json();
    let secrets: Vec<String> = ["depositSecret", "withdrawalSecret"]
        .iter()
        .map(|k| created[*k].as_str().expect("a secret").to_string())
        .collect();
    let id = created["merchantId"].as_str().expect("id").to_string();
    let rotated = run(command(db).env("GATEWAY_MASTER_KEY", KEY).args([
        "merchant",
        "rotate-secret",
        &id,
        "--direction",
        "deposit",
        "--json",
    ]));
    rotated.expect_code(0);
    let mut secrets = secrets;
    secrets.push(
        rotated.json()["secret"]
            .as_str()
            .expect("secret")
            .to_string(),
    );

    // No key, or another key, on an encrypted database: every command stops.
    for out in [
        gateway(db, &["merchant", "list"]),
        keyed(db, OTHER_KEY, &["merchant", "list"]),
        gateway(db, &["migrate"]),
    ] {
        assert_ne!(out.code, 0, "{out}");
        assert!(out.stderr.contains("GATEWAY_MASTER_KEY"), "{out}");
    }
    let refused = run_bounded(
        command(db)
            .env("GATEWAY_MASTER_KEY", OTHER_KEY)
            .env("GATEWAY_BIND", "127.0.0.1:0")
            .arg("serve"),
        DEADLINE,
    );
    assert_ne!(refused.code, 0, "{refused}");
    assert!(refused.stderr.contains("GATEWAY_MASTER_KEY"), "{refused}");
    let listing = keyed(db, KEY, &["merchant", "list", "--json"]);
    listing.expect_code(0);
    if db.backend == Backend::Sqlite {
        assert_no_clear_secret_in_files(db, &secrets);
    }
}

on_sqlite_and_postgres!(
    async encrypted_in_place:
    secrets_encrypt_converts_a_database_in_place_on_sqlite,
    secrets_encrypt_converts_a_database_in_place_on_postgres
);

async fn encrypted_in_place(db: TestDb) {
    let shop = Merchant::create(&db, "clear-shop");
    let rotated = rotate(&db, &shop.id, "withdrawal", "1h");
    let newest = rotated["secret"].as_str().expect("secret").to_string();
    let secrets = vec![
        shop.deposit_secret.clone(),
        shop.withdrawal_secret.clone(),
        newest.clone(),
    ];
    // Without a key nothing can be encrypted.
    let out = gateway(&db, &["secrets", "encrypt"]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("GATEWAY_MASTER_KEY"), "{out}");

    let out = keyed(&db, KEY, &["secrets", "encrypt", "--json"]);
    out.expect_code(0);
    assert_eq!(out.json(), json!({"encrypted": 3}), "{out}");
    if db.backend == Backend::Sqlite {
        assert_no_clear_secret_in_files(&db, &secrets);
    }
    let again = keyed(&db, KEY, &["secrets", "encrypt", "--json"]);
    again.expect_code(0);
    assert_eq!(again.json(), json!({"encrypted": 0}), "{again}");
    let out = gateway(&db, &["merchant", "list"]);
    assert_ne!(out.code, 0, "no key on an encrypted database:\n{out}");

    // The gateway serves with the key, every secret still working as before.
    let gw = GatewayProcess::start("a", &db, &Serve::default().with("GATEWAY_MASTER_KEY", KEY));
    let api = Api::new(
        &gw,
        &Merchant {
            withdrawal_secret: newest,
            ..shop.clone()
        },
    );
    assert_eq!(api.get("/api/v1/balance").await.status, 200);
    assert_eq!(
        Api::new(&gw, &shop).get("/api/v1/balance").await.status,
        200,
        "in the overlap"
    );
    let body = deposit("card", "10.00", "encrypted", None);
    assert_eq!(api.create_deposit(&body).await.status, 200);
    // While it serves, converting is refused.
    let busy = keyed(&db, KEY, &["secrets", "encrypt"]);
    busy.expect_code(4);
    assert!(
        !contains(gw.log_text().as_bytes(), KEY),
        "the key is logged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_without_a_master_key_warns_at_start() {
    let Some(db) = TestDb::on(Backend::Postgres) else {
        return;
    };
    let gw = GatewayProcess::start("a", &db, &Serve::default());
    gw.wait_for_log("GATEWAY_MASTER_KEY", DEADLINE);
    drop(gw);
    let sqlite = TestDb::sqlite();
    let quiet = GatewayProcess::start("b", &sqlite, &Serve::default());
    assert_eq!(
        quiet.log_lines("GATEWAY_MASTER_KEY"),
        0,
        "{}",
        quiet.log_text()
    );
}
