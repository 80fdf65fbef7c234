//! The stored secrets as a whole: their check at start ([`Database::check_secrets`]) and
//! their conversion to encrypted form ([`Database::encrypt_secrets`], behind
//! `gateway secrets encrypt`).
//!
//! The secrets are `merchant_keys.secret`, `providers.api_key` and `providers.webhook_secret`.
//! `gateway_settings` holds `master_key_check`, a fixed text encrypted with the master key the
//! first time the database is used with one, so a wrong key is told at start rather than at
//! the first request; and, while a conversion's clean-up of the database files is unfinished,
//! `clear_copies_pending`.

use anyhow::{anyhow, Context};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{BigInt, Integer};
use diesel::sqlite::SqliteConnection;
use domain::ports::StoreError;

use crate::conn::DbConn;
use crate::crypto::{is_sealed, MasterKey, Place, NO_KEY};
use crate::database::Database;
use crate::rows::{API_KEY, WEBHOOK_SECRET};
use crate::schema::{gateway_settings, merchant_keys, providers};
use crate::work::{retry, write_tx, TxError};

/// How many stored secret values (merchant secrets and provider credentials) are encrypted,
/// and how many are still clear text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SecretsState {
    pub encrypted: u64,
    pub clear: u64,
}

/// The `gateway_settings` row of the master key's check value.
const KEY_CHECK: &str = "master_key_check";

/// What the check value is the encryption of.
const KEY_CHECK_TEXT: &str = "gateway master key check";

/// The `gateway_settings` row that says a conversion has not yet cleaned up the files.
const CLEAR_COPIES: &str = "clear_copies_pending";

const WRONG_KEY: &str =
    "GATEWAY_MASTER_KEY does not decrypt this database's secrets (a different key?)";

const NEEDS_KEY: &str = "encrypting the secrets needs GATEWAY_MASTER_KEY (64 hexadecimal \
     characters): set it to the key the gateway will run with";

/// Where one stored secret value is.
enum Spot {
    MerchantKey {
        merchant: String,
        direction: String,
        version: i32,
    },
    Provider {
        name: String,
        column: &'static str,
    },
}

impl Spot {
    fn place(&self) -> Place<'_> {
        match self {
            Spot::MerchantKey {
                merchant,
                direction,
                version,
            } => Place::MerchantKey {
                merchant,
                direction,
                version: *version,
            },
            Spot::Provider { name, column } => Place::Provider { name, column },
        }
    }
}

/// Every stored secret value, with where it is.
fn stored_secrets(conn: &mut DbConn) -> Result<Vec<(Spot, String)>, TxError<StoreError>> {
    let keys: Vec<(String, String, i32, String)> = merchant_keys::table
        .select((
            merchant_keys::merchant_id,
            merchant_keys::direction,
            merchant_keys::version,
            merchant_keys::secret,
        ))
        .load(conn)?;
    let credentials: Vec<(String, String, String)> = providers::table
        .select((
            providers::name,
            providers::api_key,
            providers::webhook_secret,
        ))
        .load(conn)?;
    let mut all: Vec<(Spot, String)> = keys
        .into_iter()
        .map(|(merchant, direction, version, secret)| {
            let spot = Spot::MerchantKey {
                merchant,
                direction,
                version,
            };
            (spot, secret)
        })
        .collect();
    for (name, api_key, webhook_secret) in credentials {
        let spot = |column| Spot::Provider {
            name: name.clone(),
            column,
        };
        all.push((spot(API_KEY), api_key));
        all.push((spot(WEBHOOK_SECRET), webhook_secret));
    }
    Ok(all)
}

fn state_of(stored: &[(Spot, String)]) -> SecretsState {
    let encrypted = stored.iter().filter(|(_, value)| is_sealed(value)).count() as u64;
    SecretsState {
        encrypted,
        clear: stored.len() as u64 - encrypted,
    }
}

/// Replaces the clear `old` at `spot` with `sealed`; whether it was still there.
fn replace(
    conn: &mut DbConn,
    spot: &Spot,
    old: &str,
    sealed: &str,
) -> Result<bool, TxError<StoreError>> {
    let changed = match spot {
        Spot::MerchantKey {
            merchant,
            direction,
            version,
        } => diesel::update(
            merchant_keys::table
                .find((merchant.as_str(), direction.as_str(), *version))
                .filter(merchant_keys::secret.eq(old)),
        )
        .set(merchant_keys::secret.eq(sealed))
        .execute(conn)?,
        Spot::Provider { name, column } if *column == API_KEY => diesel::update(
            providers::table
                .find(name)
                .filter(providers::api_key.eq(old)),
        )
        .set(providers::api_key.eq(sealed))
        .execute(conn)?,
        Spot::Provider { name, .. } => diesel::update(
            providers::table
                .find(name)
                .filter(providers::webhook_secret.eq(old)),
        )
        .set(providers::webhook_secret.eq(sealed))
        .execute(conn)?,
    };
    Ok(changed == 1)
}

fn setting(conn: &mut DbConn, name: &str) -> Result<Option<String>, TxError<StoreError>> {
    Ok(gateway_settings::table
        .find(name)
        .select(gateway_settings::value)
        .first(conn)
        .optional()?)
}

/// Inserts a setting; one inserted meanwhile by another process makes the caller try again.
fn insert_setting(conn: &mut DbConn, name: &str, value: &str) -> Result<(), TxError<StoreError>> {
    match diesel::insert_into(gateway_settings::table)
        .values((
            gateway_settings::name.eq(name),
            gateway_settings::value.eq(value),
        ))
        .execute(conn)
    {
        Ok(_) => Ok(()),
        Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
            Err(TxError::Retry("a gateway setting was written concurrently"))
        }
        Err(error) => Err(error.into()),
    }
}

fn refuse(message: &'static str) -> TxError<StoreError> {
    TxError::Fail(StoreError::Other(anyhow!(message)))
}

/// Checks `key` against the stored check value, writing it if there is none; before it is
/// first written, every value already encrypted must open with `key`. Whether it was written.
fn check_key(
    conn: &mut DbConn,
    key: &MasterKey,
    stored: &[(Spot, String)],
) -> Result<bool, TxError<StoreError>> {
    if let Some(check) = setting(conn, KEY_CHECK)? {
        return match key.open(&Place::KeyCheck, &check) {
            Ok(text) if text == KEY_CHECK_TEXT => Ok(false),
            _ => Err(refuse(WRONG_KEY)),
        };
    }
    for (spot, value) in stored.iter().filter(|(_, value)| is_sealed(value)) {
        key.open(&spot.place(), value)
            .map_err(|_| refuse(WRONG_KEY))?;
    }
    let check = key
        .seal(&Place::KeyCheck, KEY_CHECK_TEXT)
        .map_err(|e| TxError::Fail(StoreError::Other(e)))?;
    insert_setting(conn, KEY_CHECK, &check)?;
    tracing::info!("master key check value written");
    Ok(true)
}

/// What one conversion did.
struct Conversion {
    /// Clear values encrypted.
    converted: u64,
    /// The files may still hold clear copies: this run or an earlier one changed values and
    /// has not cleaned them up.
    clean_up: bool,
}

/// Encrypts every clear secret in the caller's transaction (see [`Database::encrypt_secrets`]).
fn convert(conn: &mut DbConn, key: &MasterKey) -> Result<Conversion, TxError<StoreError>> {
    let stored = stored_secrets(conn)?;
    let wrote_check = check_key(conn, key, &stored)?;
    let mut converted = 0;
    for (spot, value) in stored.iter().filter(|(_, value)| !is_sealed(value)) {
        let sealed = key
            .seal(&spot.place(), value)
            .map_err(|e| TxError::Fail(StoreError::Other(e)))?;
        if replace(conn, spot, value, &sealed)? {
            converted += 1;
        }
    }
    let pending = setting(conn, CLEAR_COPIES)?.is_some();
    if !pending && (converted > 0 || wrote_check) {
        insert_setting(conn, CLEAR_COPIES, "1")?;
    }
    Ok(Conversion {
        converted,
        clean_up: pending || converted > 0 || wrote_check,
    })
}

/// The answer of `PRAGMA wal_checkpoint`.
#[derive(QueryableByName)]
struct Checkpoint {
    #[diesel(sql_type = Integer)]
    busy: i32,
}

/// Copies the whole WAL into the database file and empties the WAL; fails if another
/// connection keeps it from finishing for a second. (This process's own checkpoint thread,
/// `crate::checkpoint`, may be in the middle of a `PASSIVE` checkpoint, which makes this one
/// busy for a few milliseconds: that is waited out; another process's readers are not.)
pub(crate) fn checkpoint(conn: &mut SqliteConnection) -> anyhow::Result<()> {
    const TRIES: u32 = 40;
    for _ in 0..TRIES {
        let done: Checkpoint = diesel::sql_query("PRAGMA wal_checkpoint(TRUNCATE)")
            .get_result(conn)
            .context("cannot checkpoint the SQLite WAL")?;
        if done.busy == 0 {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    anyhow::bail!("another connection is using the database: stop every gateway process first")
}

#[derive(QueryableByName)]
struct SecureDelete {
    #[diesel(sql_type = BigInt)]
    secure_delete: i64,
}

/// Sets `PRAGMA secure_delete` (freed content is overwritten with zeros); the value before.
pub(crate) fn secure_delete(conn: &mut SqliteConnection, on: bool) -> anyhow::Result<i64> {
    let before: SecureDelete = diesel::sql_query("PRAGMA secure_delete")
        .get_result(conn)
        .context("cannot read PRAGMA secure_delete")?;
    conn.batch_execute(&format!("PRAGMA secure_delete = {}", i64::from(on)))
        .context("cannot set PRAGMA secure_delete")?;
    Ok(before.secure_delete)
}

/// Rewrites the database files so that no replaced value is left in them: SQLite's free
/// pages and WAL, PostgreSQL's dead row versions (and the columns the secrets migration
/// dropped from `merchants`). Outside any transaction.
fn clean_up(conn: &mut DbConn) -> anyhow::Result<()> {
    let forget = diesel::delete(gateway_settings::table.find(CLEAR_COPIES));
    match conn {
        DbConn::Sqlite(lite) => {
            checkpoint(lite)?;
            lite.batch_execute("VACUUM").context("VACUUM failed")?;
            forget.execute(lite)?;
            checkpoint(lite)
        }
        DbConn::Pg(pg) => {
            pg.batch_execute("VACUUM FULL merchant_keys, providers, merchants")
                .context("VACUUM FULL failed")?;
            forget.execute(pg)?;
            Ok(())
        }
    }
}

impl Database {
    /// Checks the stored secrets against this handle's master key, and counts them. Run it
    /// right after [`Database::migrate`], before serving: it stops a gateway that could not
    /// read them.
    ///
    /// With a key: fails if the key is not the one the database's check value was written
    /// with; writes that value the first time the database is used with a key. Without a key:
    /// fails if any secret is encrypted or the check value exists. Every refusal names
    /// `GATEWAY_MASTER_KEY`.
    ///
    /// Blocking, like [`Database::migrate`].
    #[tracing::instrument(skip(self), fields(db.backend = %self.inner.backend))]
    pub fn check_secrets(&self) -> anyhow::Result<SecretsState> {
        let vault = &self.inner.vault;
        let state = self.retrying(true, |conn| {
            write_tx(conn, |conn| {
                let stored = stored_secrets(conn)?;
                let state = state_of(&stored);
                match vault.key() {
                    Some(key) => {
                        check_key(conn, key, &stored)?;
                    }
                    None if state.encrypted > 0 || setting(conn, KEY_CHECK)?.is_some() => {
                        return Err(refuse(NO_KEY));
                    }
                    None => {}
                }
                Ok(state)
            })
        })?;
        Ok(state)
    }

    /// Encrypts, in place and in one transaction, every merchant secret and provider
    /// credential still stored in clear, and writes the key's check value if it is missing;
    /// returns how many values it encrypted. Then rewrites the database files so that they
    /// keep no clear copy: SQLite's free pages and WAL (`secure_delete`, checkpoints and
    /// `VACUUM`), PostgreSQL's old row versions (`VACUUM FULL`). Run it with the gateway
    /// stopped: on SQLite another connection in use makes it fail.
    ///
    /// Running it again encrypts nothing and rewrites nothing (unless an earlier run's clean-up
    /// failed: that is done again). Fails, changing nothing, without a master key or with a
    /// key other than the database's.
    ///
    /// Blocking, like [`Database::migrate`].
    #[tracing::instrument(skip(self), fields(db.backend = %self.inner.backend))]
    pub fn encrypt_secrets(&self) -> anyhow::Result<u64> {
        let key = self.inner.vault.key().ok_or_else(|| anyhow!(NEEDS_KEY))?;
        // SQLite: this process's other writers wait until the files are clean.
        let _writer = self.sqlite_writer();
        let mut pooled = self
            .inner
            .conns
            .pool
            .get()
            .context("no database connection to encrypt the secrets")?;
        let conn: &mut DbConn = &mut pooled;
        let restore = match conn {
            DbConn::Sqlite(lite) => Some(secure_delete(lite, true)?),
            DbConn::Pg(_) => None,
        };
        let result = encrypt_on(conn, key);
        if let (DbConn::Sqlite(lite), Some(before)) = (conn, restore) {
            if let Err(error) = lite.batch_execute(&format!("PRAGMA secure_delete = {before}")) {
                tracing::warn!(%error, "cannot restore PRAGMA secure_delete");
            }
        }
        result
    }
}

/// [`Database::encrypt_secrets`] on one connection.
fn encrypt_on(conn: &mut DbConn, key: &MasterKey) -> anyhow::Result<u64> {
    let done = retry(|| write_tx(&mut *conn, |conn| convert(conn, key)))?;
    if done.converted > 0 {
        tracing::info!(converted = done.converted, "secrets encrypted");
    }
    if done.clean_up {
        clean_up(conn).context(
            "the secrets are encrypted, but the database's files may still hold clear copies: \
             stop every gateway process and run the encryption again",
        )?;
    }
    Ok(done.converted)
}
