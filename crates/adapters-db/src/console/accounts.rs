//! Console accounts, their sessions and failed sign-ins: rows, so every gateway process on
//! the database shares them.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use domain::console::{ConsoleAccount, Role, Session};
use domain::ports::StoreError;
use domain::Timestamp;

use crate::conn::{last_insert_rowid, DbConn};
use crate::rows::{flag, parse};
use crate::schema::{console_accounts, console_sessions, signin_failures};
use crate::work::{corrupt, decode_all, TxError};

/// How long failed sign-ins are kept: a day.
const FAILURES_KEPT_MS: i64 = 24 * 3600 * 1000;

/// An account as stored.
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = console_accounts)]
struct AccountRow {
    name: String,
    role: String,
    password_hash: String,
    enabled: i16,
    created_at: i64,
}

impl AccountRow {
    fn new(account: &ConsoleAccount) -> AccountRow {
        AccountRow {
            name: account.name.clone(),
            role: account.role.as_str().to_string(),
            password_hash: account.password_hash.clone(),
            enabled: i16::from(account.enabled),
            created_at: account.created_at.millis(),
        }
    }

    fn into_account(self) -> anyhow::Result<ConsoleAccount> {
        Ok(ConsoleAccount {
            role: role(&self.role)?,
            enabled: flag("console_accounts.enabled", self.enabled)?,
            name: self.name,
            password_hash: self.password_hash,
            created_at: Timestamp::from_millis(self.created_at),
        })
    }
}

fn role(text: &str) -> anyhow::Result<Role> {
    parse("console_accounts.role", text, Role::parse)
}

/// A session as stored (its role is its account's).
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = console_sessions)]
struct SessionRow {
    id: String,
    operator: String,
    csrf: String,
    created_at: i64,
    last_seen_at: i64,
}

impl SessionRow {
    fn new(session: &Session) -> SessionRow {
        SessionRow {
            id: session.id.clone(),
            operator: session.operator.clone(),
            csrf: session.csrf.clone(),
            created_at: session.created_at.millis(),
            last_seen_at: session.last_seen_at.millis(),
        }
    }

    fn into_session(self, role_text: &str) -> anyhow::Result<Session> {
        Ok(Session {
            id: self.id,
            operator: self.operator,
            role: role(role_text)?,
            csrf: self.csrf,
            created_at: Timestamp::from_millis(self.created_at),
            last_seen_at: Timestamp::from_millis(self.last_seen_at),
        })
    }
}

/// Stores `account`; `false`, writing nothing, if its name is taken. One statement.
pub(super) fn insert_account(
    conn: &mut DbConn,
    account: &ConsoleAccount,
) -> Result<bool, TxError<StoreError>> {
    let inserted = diesel::insert_into(console_accounts::table)
        .values(AccountRow::new(account))
        .execute(conn);
    match inserted {
        Ok(_) => Ok(true),
        Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => Ok(false),
        Err(error) => Err(error.into()),
    }
}

/// The accounts named `name` (one or none), or every account; by name.
pub(super) fn accounts(
    conn: &mut DbConn,
    name: Option<&str>,
) -> Result<Vec<ConsoleAccount>, TxError<StoreError>> {
    let mut query = console_accounts::table.into_boxed();
    if let Some(name) = name {
        query = query.filter(console_accounts::name.eq(name.to_string()));
    }
    let rows: Vec<AccountRow> = query
        .order(console_accounts::name.asc())
        .select(AccountRow::as_select())
        .load(conn)?;
    decode_all(rows, AccountRow::into_account)
}

/// Sets the account's password hash and deletes its sessions, inside the caller's
/// transaction; whether it exists. Its `enabled` flag is left as it is.
pub(super) fn set_password(
    conn: &mut DbConn,
    name: &str,
    password_hash: &str,
) -> Result<bool, TxError<StoreError>> {
    let changed = diesel::update(console_accounts::table.find(name))
        .set(console_accounts::password_hash.eq(password_hash))
        .execute(conn)?;
    if changed == 0 {
        return Ok(false);
    }
    end_sessions(conn, name)?;
    Ok(true)
}

/// Deletes every session of the account `name`.
fn end_sessions(conn: &mut DbConn, name: &str) -> Result<(), TxError<StoreError>> {
    diesel::delete(console_sessions::table.filter(console_sessions::operator.eq(name)))
        .execute(conn)?;
    Ok(())
}

/// Disables the account and deletes its sessions, inside the caller's transaction; whether
/// it exists.
pub(super) fn disable_account(conn: &mut DbConn, name: &str) -> Result<bool, TxError<StoreError>> {
    let changed = diesel::update(console_accounts::table.find(name))
        .set(console_accounts::enabled.eq(0_i16))
        .execute(conn)?;
    if changed == 0 {
        return Ok(false);
    }
    end_sessions(conn, name)?;
    Ok(true)
}

/// Failed sign-ins of `name` at or after `since`.
pub(super) fn failed_signins(
    conn: &mut DbConn,
    name: &str,
    since: Timestamp,
) -> Result<u32, TxError<StoreError>> {
    let failures: i64 = signin_failures::table
        .filter(signin_failures::name.eq(name))
        .filter(signin_failures::at.ge(since.millis()))
        .count()
        .get_result(conn)?;
    // Only compared with a small limit: more than u32 can hold is as many as u32 can.
    Ok(u32::try_from(failures).unwrap_or(u32::MAX))
}

/// Records a failed sign-in of `name` at `at` and forgets the name's failures older than a
/// day, inside the caller's transaction.
pub(super) fn record_failed_signin(
    conn: &mut DbConn,
    name: &str,
    at: Timestamp,
) -> Result<(), TxError<StoreError>> {
    diesel::insert_into(signin_failures::table)
        .values((
            signin_failures::name.eq(name),
            signin_failures::at.eq(at.millis()),
        ))
        .execute(conn)?;
    forget_old_failures(conn, at)
}

/// Forgets every name's failures older than a day before `at` (names tried once, e.g.
/// unknown ones, would otherwise stay for ever).
fn forget_old_failures(conn: &mut DbConn, at: Timestamp) -> Result<(), TxError<StoreError>> {
    diesel::delete(
        signin_failures::table.filter(signin_failures::at.lt(at.millis() - FAILURES_KEPT_MS)),
    )
    .execute(conn)?;
    Ok(())
}

/// Records an attempt of `name` at `at` as a failure and returns its id with the failures of
/// `name` since `since`, itself included, inside the caller's transaction.
pub(super) fn reserve_signin(
    conn: &mut DbConn,
    name: &str,
    at: Timestamp,
    since: Timestamp,
) -> Result<(i64, u32), TxError<StoreError>> {
    let row = (
        signin_failures::name.eq(name),
        signin_failures::at.eq(at.millis()),
    );
    let id: i64 = match conn {
        DbConn::Pg(pg) => {
            // Attempts for one name reserve one after another (until commit), so each counts
            // every one reserved before it; SQLite's single writer does the same.
            diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext($1))")
                .bind::<diesel::sql_types::Text, _>(format!("signin:{name}"))
                .execute(pg)?;
            diesel::insert_into(signin_failures::table)
                .values(row)
                .returning(signin_failures::id)
                .get_result(pg)?
        }
        DbConn::Sqlite(lite) => {
            diesel::insert_into(signin_failures::table)
                .values(row)
                .execute(lite)?;
            last_insert_rowid(lite)?
        }
    };
    forget_old_failures(conn, at)?;
    Ok((id, failed_signins(conn, name, since)?))
}

/// Deletes the attempt `id`.
pub(super) fn forget_signin(conn: &mut DbConn, id: i64) -> Result<(), TxError<StoreError>> {
    diesel::delete(signin_failures::table.filter(signin_failures::id.eq(id))).execute(conn)?;
    Ok(())
}

/// Stores a new session (its account must exist).
pub(super) fn insert_session(
    conn: &mut DbConn,
    session: &Session,
    password_hash: &str,
) -> Result<bool, TxError<StoreError>> {
    // On PostgreSQL the account row is read `FOR SHARE`: a password change or a disable
    // (which update the row, then delete its sessions) waits for this insert to commit, or
    // this read waits for them and sees the new row. SQLite's one writer orders them too.
    let query = console_accounts::table
        .find(&session.operator)
        .select((console_accounts::password_hash, console_accounts::enabled));
    let account: Option<(String, i16)> = match conn {
        DbConn::Pg(pg) => query.for_share().first(pg).optional()?,
        DbConn::Sqlite(_) => query.first(conn).optional()?,
    };
    if account != Some((password_hash.to_string(), 1)) {
        return Ok(false);
    }
    diesel::insert_into(console_sessions::table)
        .values(SessionRow::new(session))
        .execute(conn)?;
    Ok(true)
}

/// The session `id` with its account's role, if the account is enabled.
pub(super) fn session(conn: &mut DbConn, id: &str) -> Result<Option<Session>, TxError<StoreError>> {
    let found: Option<(SessionRow, String)> = console_sessions::table
        .inner_join(console_accounts::table)
        .filter(console_sessions::id.eq(id))
        .filter(console_accounts::enabled.eq(1_i16))
        .select((SessionRow::as_select(), console_accounts::role))
        .first(conn)
        .optional()?;
    found
        .map(|(row, role_text)| row.into_session(&role_text))
        .transpose()
        .map_err(corrupt)
}

/// Sets the session's last-seen time; nothing if there is no such session.
pub(super) fn touch_session(
    conn: &mut DbConn,
    id: &str,
    at: Timestamp,
) -> Result<(), TxError<StoreError>> {
    diesel::update(console_sessions::table.find(id))
        .set(console_sessions::last_seen_at.eq(at.millis()))
        .execute(conn)?;
    Ok(())
}

/// Deletes the session; nothing if there is no such session.
pub(super) fn delete_session(conn: &mut DbConn, id: &str) -> Result<(), TxError<StoreError>> {
    diesel::delete(console_sessions::table.find(id)).execute(conn)?;
    Ok(())
}
