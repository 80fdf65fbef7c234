//! Secrets to test with: random merchant secrets and credentials, master keys, handles that
//! use them, and what the database's files and tables hold.

use std::time::Duration;

use adapters_db::{Database, DbOptions, MasterKey};
use diesel::prelude::*;
use diesel::sql_types::Text;
use domain::merchant::KeyRotation;
use domain::merchant::{full_access, Merchant, Secret};
use domain::operator::NewMerchant;
use domain::ports::OperatorStore;
use domain::{Direction, Timestamp};

use crate::doubles::operator;
use crate::helpers::TestDb;

/// A random merchant secret: 64 hex characters, like the CLI makes.
pub fn random_secret() -> Secret {
    Secret::new(format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    ))
}

/// A random master key, as 64 hex characters.
pub fn random_key_text() -> String {
    random_secret().expose().to_string()
}

/// A new enabled merchant with every method and random secrets.
pub async fn merchant_with_random_secrets(db: &Database) -> Merchant {
    operator(db)
        .create_merchant(NewMerchant {
            id: None,
            name: format!("shop-{}", uuid::Uuid::new_v4().simple()),
            access: full_access(),
            deposit_secret: random_secret(),
            withdrawal_secret: random_secret(),
            require_timestamp: false,
            require_signature_v2: false,
        })
        .await
        .expect("create merchant")
}

/// A rotation of the merchant's `direction` to `secret` at `at`, older secrets ending
/// `overlap_secs` later.
pub fn rotation(
    merchant: &Merchant,
    direction: Direction,
    secret: Secret,
    at: Timestamp,
    overlap_secs: i64,
) -> KeyRotation {
    KeyRotation {
        merchant: merchant.id.clone(),
        direction,
        secret,
        at,
        older_end: at.plus_seconds(overlap_secs),
    }
}

/// Rotates the merchant's `direction` to a random secret now, the older ones ending at once;
/// the new secret.
pub async fn rotate_now(db: &Database, merchant: &Merchant, direction: Direction) -> Secret {
    let secret = random_secret();
    let at = crate::helpers::now();
    db.rotate_key(&rotation(merchant, direction, secret.clone(), at, 0))
        .await
        .expect("rotate")
        .expect("a known merchant");
    secret
}

impl TestDb {
    /// Another handle on this database with the master key `key` (64 hex characters).
    pub fn with_key(&self, key: &str) -> Database {
        let options = DbOptions {
            max_connections: Some(8),
            master_key: Some(MasterKey::parse(key).expect("a valid master key")),
            ..DbOptions::default()
        };
        Database::connect_with(&self.url, options).expect("a keyed handle")
    }

    /// Another handle on this database whose caches keep merchants for a minute.
    pub fn long_cache(&self) -> Database {
        let options = DbOptions {
            cache_ttl: Duration::from_secs(60),
            ..DbOptions::default()
        };
        Database::connect_with(&self.url, options).expect("a handle")
    }

    /// The one text column `s` of every row `sql` returns, in order.
    pub fn texts(&self, sql: &str) -> Vec<String> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = Text)]
            s: String,
        }
        let query = diesel::sql_query(sql);
        let rows: Vec<Row> = match self.url.strip_prefix("sqlite://") {
            Some(path) => {
                let mut conn = SqliteConnection::establish(path).expect("a raw connection");
                query.load(&mut conn)
            }
            None => {
                let mut conn = PgConnection::establish(&self.url).expect("a raw connection");
                query.load(&mut conn)
            }
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
        rows.into_iter().map(|row| row.s).collect()
    }

    /// Every stored secret and what else sits beside it, one text per row: what a second run
    /// of the conversion must leave as it is.
    pub fn secret_rows(&self) -> Vec<String> {
        let mut all = self.texts(
            "SELECT merchant_id || '|' || direction || '|' || version || '|' || secret || '|' \
             || created_at || '|' || COALESCE(expires_at, -1) AS s \
             FROM merchant_keys ORDER BY merchant_id, direction, version",
        );
        all.extend(self.texts(
            "SELECT name || '|' || url || '|' || api_key || '|' || webhook_secret || '|' \
             || updated_at AS s FROM providers ORDER BY name",
        ));
        all.extend(
            self.texts("SELECT name || '|' || value AS s FROM gateway_settings ORDER BY name"),
        );
        all
    }

    /// Which of `secrets` the database still holds in clear. SQLite: the bytes of its file
    /// and of its WAL, searched for each secret's text and, for a hex secret, its bytes.
    /// PostgreSQL: every text column of the tables that hold or held secrets.
    pub fn clear_copies(&self, secrets: &[String]) -> Vec<String> {
        let haystacks: Vec<Vec<u8>> = match self.url.strip_prefix("sqlite://") {
            Some(path) => [path.to_string(), format!("{path}-wal")]
                .iter()
                .filter_map(|file| std::fs::read(file).ok())
                .collect(),
            None => [
                "SELECT CAST(t AS TEXT) AS s FROM merchant_keys t",
                "SELECT CAST(t AS TEXT) AS s FROM providers t",
                "SELECT CAST(t AS TEXT) AS s FROM merchants t",
                "SELECT CAST(t AS TEXT) AS s FROM gateway_settings t",
            ]
            .iter()
            .flat_map(|sql| self.texts(sql))
            .map(String::into_bytes)
            .collect(),
        };
        let found = |needle: &[u8]| {
            haystacks
                .iter()
                .any(|hay| hay.windows(needle.len()).any(|w| w == needle))
        };
        secrets
            .iter()
            .filter(|secret| {
                found(secret.as_bytes())
                    || hex::decode(secret.as_str()).is_ok_and(|bytes| found(&bytes))
            })
            .cloned()
            .collect()
    }
}
