//! TLS to PostgreSQL, against a server that accepts TLS connections only
//! (`scripts/pg-tls.sh start`, whose certificate is for `localhost`): `sslmode=require`,
//! `verify-ca` and `verify-full` (with `sslrootcert`) reach it and every pooled connection is
//! encrypted; without TLS, or with `verify-full` to a name the certificate does not carry,
//! the gateway does not connect.

use adapters_db::{Database, DbOptions};
use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::Connection;

use crate::helpers::merchant;

/// `base` (the script's URL) on database `name` with `sslmode`, to `host`.
fn tls_url(base: &str, name: &str, sslmode: &str, host: &str) -> String {
    let mut url = url::Url::parse(base).expect("a URL");
    url.set_path(name);
    url.set_host(Some(host)).expect("a host");
    url.query_pairs_mut().append_pair("sslmode", sslmode);
    url.to_string()
}

/// How many sessions on database `name` are encrypted and how many are not.
fn sessions(admin: &mut PgConnection, name: &str) -> (i64, i64) {
    use diesel::sql_types::BigInt;
    #[derive(diesel::QueryableByName)]
    struct Counts {
        #[diesel(sql_type = BigInt)]
        encrypted: i64,
        #[diesel(sql_type = BigInt)]
        plain: i64,
    }
    let counts: Counts = diesel::RunQueryDsl::get_result(
        diesel::sql_query(format!(
            "SELECT COUNT(*) FILTER (WHERE s.ssl) AS encrypted, \
                    COUNT(*) FILTER (WHERE NOT s.ssl) AS plain \
             FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.datname = '{name}'"
        )),
        admin,
    )
    .expect("sessions");
    (counts.encrypted, counts.plain)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_gateway_reaches_a_tls_only_server_with_each_sslmode_and_never_without_tls() {
    let Some(base) = testkit::tls_postgres_url() else {
        return;
    };
    let name = format!("tls_{}", uuid::Uuid::new_v4().simple());
    let admin_url = tls_url(&base, "postgres", "verify-full", "localhost");
    let mut admin = PgConnection::establish(&admin_url)
        .unwrap_or_else(|e| panic!("the TLS server of {base:?} cannot be reached: {e}"));
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the database");

    for (i, sslmode) in ["require", "verify-ca", "verify-full"]
        .into_iter()
        .enumerate()
    {
        let url = tls_url(&base, &name, sslmode, "localhost");
        let db = tokio::task::spawn_blocking(move || {
            let db = Database::connect(&url).expect("connects over TLS");
            db.migrate().expect("migrates over TLS");
            db
        })
        .await
        .expect("connect");
        assert!(db.ping().await, "{sslmode}: ready");
        let shop = merchant(&db).await;
        assert!(!shop.id.as_str().is_empty());
        let (encrypted, plain) = sessions(&mut admin, &name);
        assert!(
            encrypted >= 1,
            "{sslmode}: the pool's sessions: {encrypted}"
        );
        assert_eq!(plain, 0, "{sslmode}: no session without TLS");
        drop(db);
        eprintln!("sslmode={sslmode}: connected, migrated and wrote ({i})");
    }

    // The certificate's authority checked, not its name: verify-ca reaches 127.0.0.1,
    // verify-full does not.
    let by_address = tls_url(&base, &name, "verify-ca", "127.0.0.1");
    let reached = tokio::task::spawn_blocking(move || Database::connect(&by_address).map(|_| ()))
        .await
        .expect("connect");
    assert!(reached.is_ok(), "{reached:?}");
    for (sslmode, host, why) in [
        ("verify-full", "127.0.0.1", "does not match host name"),
        ("disable", "localhost", "no encryption"),
    ] {
        let url = tls_url(&base, &name, sslmode, host);
        // A refusal is known at once: no need to wait the default five seconds for it.
        let quick = DbOptions {
            connection_timeout: std::time::Duration::from_secs(1),
            ..DbOptions::default()
        };
        let refused =
            tokio::task::spawn_blocking(move || Database::connect_with(&url, quick).map(|_| ()))
                .await
                .expect("connect");
        let error = format!("{:#}", refused.expect_err("refused"));
        assert!(error.contains(why), "sslmode={sslmode} to {host}: {error}");
    }

    admin
        .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .expect("drop the database");
}
