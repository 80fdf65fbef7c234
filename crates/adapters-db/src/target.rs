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
    /// A libpq connection URL as given, with [`DEAD_PEER_DEFAULTS`] for what it leaves out.
    Postgres(String),
}

impl Target {
    /// Parses a database URL; anything but the accepted forms is an error naming them.
    pub(crate) fn parse(url: &str) -> anyhow::Result<Self> {
        let url = url.trim();
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Target::Postgres(with_dead_peer_defaults(url)));
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

/// libpq's parameters for a server that vanishes without closing its connections (a host
/// powered off, a network cut): TCP keepalives find an idle connection dead after 25 s,
/// `tcp_user_timeout` fails a request unanswered at the TCP level after 20 s, and
/// `connect_timeout` gives up on one host after 5 s (and tries the next). Without them a
/// connection to a lost primary waits for the kernel's retransmissions, about 15 minutes. A
/// URL that sets one keeps its own value; one naming a `service` gets none of them (the
/// service file's settings would lose to the URL's).
pub(crate) const DEAD_PEER_DEFAULTS: [(&str, &str); 5] = [
    ("keepalives_idle", "10"),
    ("keepalives_interval", "5"),
    ("keepalives_count", "3"),
    ("tcp_user_timeout", "20000"),
    ("connect_timeout", "5"),
];

/// `url` with each of [`DEAD_PEER_DEFAULTS`] it does not set.
fn with_dead_peer_defaults(url: &str) -> String {
    let (_, query) = split_query(url);
    // A service file's settings would be overridden by the URL's: add nothing to one.
    if query.is_some_and(|q| has_parameter(q, "service")) {
        return url.to_string();
    }
    let missing: Vec<String> = DEAD_PEER_DEFAULTS
        .iter()
        .filter(|(name, _)| !query.is_some_and(|q| has_parameter(q, name)))
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    if missing.is_empty() {
        return url.to_string();
    }
    let joint = match query {
        None => "?",
        Some(q) if q.is_empty() || q.ends_with('&') => "",
        Some(_) => "&",
    };
    format!("{url}{joint}{}", missing.join("&"))
}

/// A PostgreSQL URL's host list and its query string, if it has one, read as libpq reads
/// them: credentials end at an `@` met before any `/` (a password may hold `?`), the host
/// list at the first `/` or `?` after them, the query after the first `?` from there (its
/// values may hold `/`, as `sslrootcert=/etc/...` or `host=/var/run/postgresql` do).
fn split_query(url: &str) -> (&str, Option<&str>) {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let hosts = match rest.find(['@', '/']) {
        Some(at) if rest.as_bytes()[at] == b'@' => &rest[at + 1..],
        _ => rest,
    };
    let end = hosts.find(['/', '?']).unwrap_or(hosts.len());
    let query = hosts[end..].split_once('?').map(|(_, query)| query);
    (&hosts[..end], query)
}

/// Whether the query string `query` sets the parameter `name`.
fn has_parameter(query: &str, name: &str) -> bool {
    query
        .split('&')
        .any(|p| p.split_once('=').map_or(p, |(key, _)| key) == name)
}

/// Whether a PostgreSQL `url` names several hosts without `target_session_attrs`: libpq
/// then keeps the first host that answers, a standby included, and every write there fails
/// until the connection is dropped. The gateway warns at start.
pub(crate) fn several_hosts_without_target(url: &str) -> bool {
    let (authority, query) = split_query(url);
    authority.contains(',') && !query.is_some_and(|q| has_parameter(q, "target_session_attrs"))
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
        assert!(!several_hosts_without_target(
            "postgres://h1,h2?target_session_attrs=read-write&sslrootcert=/ca.pem"
        ));
        assert!(several_hosts_without_target("postgres://u:p?w@h1,h2/gw"));
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
    fn postgres_urls_keep_their_parameters_and_gain_the_dead_peer_defaults() {
        let defaults = "keepalives_idle=10&keepalives_interval=5&keepalives_count=3\
                        &tcp_user_timeout=20000&connect_timeout=5";
        let but_connect = defaults.trim_end_matches("&connect_timeout=5");
        let own = "postgres://h/db?keepalives_idle=1&keepalives_interval=1&keepalives_count=1\
                   &tcp_user_timeout=1&connect_timeout=1";
        // Each URL, and what is appended to it. Among them a `/` in the query, a `?` in the
        // password, a trailing `&`, a service file, every parameter set by the URL itself.
        for (url, appended) in [
            ("postgres://u@h:5432/db", format!("?{defaults}")),
            ("postgresql://h/db?sslmode=disable", format!("&{defaults}")),
            (
                "postgres://h1:1,h2:2?connect_timeout=2",
                format!("&{but_connect}"),
            ),
            (
                "postgres://h1,h2?target_session_attrs=read-write&sslrootcert=/ca.pem",
                format!("&{defaults}"),
            ),
            (
                "postgresql://?host=/var/run/postgresql",
                format!("&{defaults}"),
            ),
            ("postgres://u:p?w@h:5432", format!("?{defaults}")),
            ("postgres://h/db?sslmode=require&", defaults.to_string()),
            ("postgres:///?service=gw", String::new()),
            (own, String::new()),
        ] {
            assert_eq!(
                Target::parse(url).ok(),
                Some(Target::Postgres(format!("{url}{appended}"))),
                "{url}"
            );
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
