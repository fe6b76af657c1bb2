//! Where a store lives: a SQLite file (the embedded default) or a Postgres
//! database (teams, issue 20), and how it is named in messages without its
//! password.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::StoreError;

/// The database a store is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file, embedded in the process.
    Sqlite,
    /// A Postgres server, which several gateways may share.
    Postgres,
}

/// Where a store lives.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A SQLite file (created if missing).
    File(PathBuf),
    /// A Postgres connection URL (`postgres://user:password@host/db`, or
    /// with `?host=/run/postgresql` for a Unix socket). The database must
    /// exist. Its query keeps libpq's TLS parameters, which the driver
    /// honours: `sslmode=verify-full&sslrootcert=/path/ca.pem` for a server
    /// on another host (issue 39 item 13; see [`StoreLocation::parse`]).
    Postgres(String),
}

impl StoreLocation {
    /// Reads a `--database` / `[store] url` value: `postgres://…` or
    /// `postgresql://…` for Postgres, `sqlite://PATH` or `sqlite:PATH` for a
    /// SQLite file. Anything else is refused with the accepted forms, rather
    /// than taken as a file name (a mistyped URL must not become a new,
    /// empty database).
    ///
    /// A Postgres URL's TLS parameters are checked here, before any
    /// connection, because a mistake in them would otherwise weaken the
    /// connection silently rather than fail it: `sslmode` must be one of
    /// libpq's six values, and `sslrootcert` needs `sslmode=verify-ca` or
    /// `verify-full` beside it (libpq verifies against a present root
    /// certificate even under `require`; the driver does not, so
    /// `require&sslrootcert=…` would look verified and not be).
    pub fn parse(value: &str) -> Result<StoreLocation, StoreError> {
        let value = value.trim();
        if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            let url = url::Url::parse(value).map_err(|e| {
                StoreError::InvalidInput(format!("the Postgres URL does not parse: {e}"))
            })?;
            if url.path().trim_start_matches('/').is_empty() {
                return Err(StoreError::InvalidInput(
                    "the Postgres URL names no database (postgres://HOST/DATABASE)".to_owned(),
                ));
            }
            check_tls_parameters(&url)?;
            return Ok(StoreLocation::Postgres(value.to_owned()));
        }
        if let Some(path) = value
            .strip_prefix("sqlite://")
            .or_else(|| value.strip_prefix("sqlite:"))
        {
            if path.is_empty() {
                return Err(StoreError::InvalidInput(
                    "the SQLite URL names no file (sqlite:///path/to/interlock.sqlite)".to_owned(),
                ));
            }
            return Ok(StoreLocation::File(PathBuf::from(path)));
        }
        Err(StoreError::InvalidInput(format!(
            "{:?} is not a database URL: use postgres://HOST/DATABASE or sqlite:///PATH",
            redact(value)
        )))
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        match self {
            StoreLocation::File(_) => Backend::Sqlite,
            StoreLocation::Postgres(_) => Backend::Postgres,
        }
    }

    /// The SQLite file, if this is one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            StoreLocation::File(p) => Some(p),
            StoreLocation::Postgres(_) => None,
        }
    }
}

/// Shown with the password replaced, so a location can go into logs, errors
/// and status pages.
impl fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreLocation::File(p) => write!(f, "{}", p.display()),
            StoreLocation::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

impl fmt::Debug for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreLocation::File(p) => f.debug_tuple("File").field(p).finish(),
            StoreLocation::Postgres(_) => {
                f.debug_tuple("Postgres").field(&self.to_string()).finish()
            }
        }
    }
}

/// The `sslmode` values libpq (and the driver) accept, weakest first.
const SSL_MODES: [&str; 6] = [
    "disable",
    "allow",
    "prefer",
    "require",
    "verify-ca",
    "verify-full",
];

/// Refuses a Postgres URL whose TLS parameters the driver would not apply
/// as written (see [`StoreLocation::parse`]). The driver's spellings of the
/// same keys (`ssl-mode`, `ssl-root-cert`, `ssl-ca`) are checked alike.
fn check_tls_parameters(url: &url::Url) -> Result<(), StoreError> {
    let mut mode = None;
    let mut root_cert = false;
    for (key, value) in url.query_pairs() {
        match &*key {
            "sslmode" | "ssl-mode" => {
                let lower = value.to_ascii_lowercase();
                if !SSL_MODES.contains(&lower.as_str()) {
                    return Err(StoreError::InvalidInput(format!(
                        "the Postgres URL's sslmode {value:?} is not one of {}",
                        SSL_MODES.join(", ")
                    )));
                }
                mode = Some(lower);
            }
            "sslrootcert" | "ssl-root-cert" | "ssl-ca" => root_cert = true,
            _ => {}
        }
    }
    let verifies = matches!(mode.as_deref(), Some("verify-ca" | "verify-full"));
    if root_cert && !verifies {
        return Err(StoreError::InvalidInput(format!(
            "the Postgres URL gives sslrootcert but sslmode={}: the server would not be \
             verified against it; use sslmode=verify-full (or verify-ca)",
            mode.as_deref().unwrap_or("prefer (the default)")
        )));
    }
    Ok(())
}

/// `url` with its password (and a `password=` query parameter) replaced by
/// `***`; text that is not a URL is returned as it is.
fn redact(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return url.to_owned();
    };
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some("***"));
    }
    if parsed.query_pairs().any(|(k, _)| k == "password") {
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(k, v)| {
                let v = if k == "password" { "***".into() } else { v };
                (k.into_owned(), v.into_owned())
            })
            .collect();
        parsed.query_pairs_mut().clear().extend_pairs(pairs);
    }
    parsed.into()
}

/// The sqlx URL of a SQLite file: `sqlite://` and the path, percent-encoded
/// byte by byte outside the unreserved characters and `/` (so `?`, `#` and
/// `%` in a file name stay part of it), opened read-write, created if
/// missing.
pub(crate) fn sqlite_url(path: &Path) -> Result<String, String> {
    if path.as_os_str().is_empty() {
        return Err("empty path".to_owned());
    }
    let Some(text) = path.to_str() else {
        return Err(format!("{} is not valid UTF-8", path.display()));
    };
    let mut url = String::from("sqlite://");
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            url.push(char::from(b));
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url.push_str("?mode=rwc");
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_and_sqlite_urls_are_told_apart() {
        assert_eq!(
            StoreLocation::parse("postgres://u:p@db:5432/interlock")
                .unwrap()
                .backend(),
            Backend::Postgres
        );
        assert_eq!(
            StoreLocation::parse("postgresql:///interlock?host=/run/postgresql")
                .unwrap()
                .backend(),
            Backend::Postgres
        );
        assert_eq!(
            StoreLocation::parse("sqlite:///var/lib/interlock/db.sqlite").unwrap(),
            StoreLocation::File("/var/lib/interlock/db.sqlite".into())
        );
    }

    #[test]
    fn regression_a_mistyped_url_is_not_taken_for_a_new_file() {
        for bad in [
            "postgress://db/x",
            "mysql://db/x",
            "interlock.sqlite",
            "sqlite:",
            "postgres://db",
        ] {
            assert!(
                matches!(StoreLocation::parse(bad), Err(StoreError::InvalidInput(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn regression_a_database_password_never_reaches_messages() {
        let l = StoreLocation::parse("postgres://gw:s3cret@db/interlock?password=also").unwrap();
        for shown in [l.to_string(), format!("{l:?}")] {
            assert!(
                !shown.contains("s3cret") && !shown.contains("also"),
                "{shown}"
            );
            assert!(shown.contains("***"), "{shown}");
        }
        let err = StoreLocation::parse("mysql://gw:s3cret@db/x")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("s3cret"), "{err}");
    }

    #[test]
    fn regression_issue_39_postgres_tls_parameters_are_kept_or_refused_clearly() {
        // Kept as written: the driver reads them from the URL.
        let url = "postgres://gw@db.example:5432/interlock?sslmode=verify-full&sslrootcert=/etc/interlock/db-ca.pem";
        assert_eq!(
            StoreLocation::parse(url).unwrap(),
            StoreLocation::Postgres(url.to_owned())
        );
        for ok in [
            "postgres://db/x?sslmode=require",
            "postgres://db/x?sslmode=VERIFY-CA&sslrootcert=ca.pem",
            "postgres://db/x?ssl-mode=disable",
        ] {
            assert!(StoreLocation::parse(ok).is_ok(), "{ok}");
        }
        for (bad, says) in [
            ("postgres://db/x?sslmode=verify_full", "is not one of"),
            ("postgres://db/x?sslmode=", "is not one of"),
            (
                "postgres://db/x?sslmode=require&sslrootcert=ca.pem",
                "sslmode=require",
            ),
            ("postgres://db/x?sslrootcert=ca.pem", "prefer (the default)"),
            (
                "postgres://db/x?ssl-ca=ca.pem&sslmode=prefer",
                "sslmode=prefer",
            ),
        ] {
            match StoreLocation::parse(bad) {
                Err(StoreError::InvalidInput(m)) => assert!(m.contains(says), "{bad}: {m}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_file_name_with_url_characters_stays_one_file_name() {
        let url = sqlite_url(Path::new("/tmp/a b/x?y#z%.sqlite")).unwrap();
        assert_eq!(url, "sqlite:///tmp/a%20b/x%3Fy%23z%25.sqlite?mode=rwc");
        assert!(sqlite_url(Path::new("")).is_err());
    }
}
