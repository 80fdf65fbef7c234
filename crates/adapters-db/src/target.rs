//! Which database a `GATEWAY_DATABASE_URL` names.

use anyhow::bail;

/// The accepted URL forms, for error messages and docs.
pub(crate) const ACCEPTED_FORMS: &str = "sqlite://PATH (relative, e.g. sqlite://gateway.db), \
     sqlite:///ABSOLUTE/PATH, sqlite:PATH, postgres://... or postgresql://...";

/// A database to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// An SQLite file, created if missing.
    Sqlite(String),
    /// A libpq connection URL, passed on as given.
    Postgres(String),
}

impl Target {
    /// Parses a database URL; anything but the accepted forms is an error naming them.
    pub(crate) fn parse(url: &str) -> anyhow::Result<Self> {
        let url = url.trim();
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Target::Postgres(url.to_string()));
        }
        let Some(rest) = url.strip_prefix("sqlite:") else {
            bail!("unsupported database URL scheme; accepted forms: {ACCEPTED_FORMS}");
        };
        // `sqlite://gateway.db` is relative, `sqlite:///var/lib/gateway.db` absolute.
        let path = rest.strip_prefix("//").unwrap_or(rest);
        if path.is_empty() {
            bail!("the SQLite URL names no file; accepted forms: {ACCEPTED_FORMS}");
        }
        if path == ":memory:" || path.starts_with("file:") || path.contains('?') {
            bail!(
                "in-memory SQLite, file: URIs and query parameters are not supported \
                 (every pooled connection must open the same file); accepted forms: {ACCEPTED_FORMS}"
            );
        }
        Ok(Target::Sqlite(path.to_string()))
    }
}

/// Whether a PostgreSQL `url` names several hosts without `target_session_attrs`: libpq
/// then keeps the first host that answers, a standby included, and every write there fails
/// until the connection is dropped. The gateway warns at start.
pub(crate) fn several_hosts_without_target(url: &str) -> bool {
    let Some(rest) = url.split_once("://").map(|(_, rest)| rest) else {
        return false;
    };
    let (authority, query) = match rest.split_once('/') {
        Some((authority, tail)) => (authority, tail.split_once('?').map(|(_, q)| q)),
        None => (
            rest.split('?').next().unwrap_or(rest),
            rest.split_once('?').map(|(_, q)| q),
        ),
    };
    authority.contains(',')
        && !query.is_some_and(|q| q.split('&').any(|p| p.starts_with("target_session_attrs=")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_hosts_need_target_session_attrs() {
        assert!(several_hosts_without_target("postgres://u@h1:1,h2:2/gw"));
        assert!(several_hosts_without_target(
            "postgres://u@h1:1,h2:2/gw?sslmode=require"
        ));
        assert!(!several_hosts_without_target(
            "postgres://u@h1:1,h2:2/gw?sslmode=require&target_session_attrs=read-write"
        ));
        assert!(!several_hosts_without_target("postgres://u@h1:1/gw"));
    }

    #[test]
    fn sqlite_paths_relative_and_absolute() {
        let sqlite = |p: &str| Some(Target::Sqlite(p.to_string()));
        assert_eq!(
            Target::parse("sqlite://gateway.db").ok(),
            sqlite("gateway.db")
        );
        assert_eq!(
            Target::parse("sqlite:///var/lib/g.db").ok(),
            sqlite("/var/lib/g.db")
        );
        assert_eq!(Target::parse("sqlite:data/g.db").ok(), sqlite("data/g.db"));
    }

    #[test]
    fn postgres_urls_pass_through() {
        for url in [
            "postgres://u@h:5432/db",
            "postgresql://h/db?sslmode=disable",
        ] {
            assert_eq!(Target::parse(url).ok(), Some(Target::Postgres(url.into())));
        }
    }

    #[test]
    fn other_forms_are_refused_with_the_accepted_list() {
        for bad in [
            "mysql://x/y",
            "gateway.db",
            "sqlite://",
            "sqlite::memory:",
            "sqlite://:memory:",
            "sqlite://g.db?mode=rwc",
            "",
        ] {
            let error = Target::parse(bad).expect_err(bad).to_string();
            assert!(error.contains("sqlite://PATH"), "{bad}: {error}");
        }
    }
}
