//! What one call shows about a tool: the hosts and path roots its arguments
//! name ([`ArgFacts`], known before the call is forwarded) and what its
//! result carries ([`ResultFacts`], known after).
//!
//! Extraction is lexical and cheap (it runs on every call): a URL is any
//! whitespace-separated token with a `scheme://` in it, parsed by the `url`
//! crate (a token it refuses is no URL); an absolute path is a string value
//! that is one (starts with `/`, no white space), or a `file://` URL. A path
//! is reduced to its root — its first two components after lexical
//! normalization (`/srv/data/../../etc/passwd` → `/etc/passwd`,
//! `/home/alice/notes/a.md` → `/home/alice`) — so a tool that reads many files
//! under one directory has one root, and one outside it is new.

use std::collections::{BTreeMap, BTreeSet};

use interlock_canon::Value;
use interlock_inspect::{DataClass, Finding};

/// The JSON type of a `structuredContent` member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JsonType {
    Null,
    Boolean,
    Number,
    String,
    Array,
    Object,
}

impl JsonType {
    pub const ALL: [JsonType; 6] = [
        JsonType::Null,
        JsonType::Boolean,
        JsonType::Number,
        JsonType::String,
        JsonType::Array,
        JsonType::Object,
    ];

    pub fn of(v: &serde_json::Value) -> JsonType {
        match v {
            serde_json::Value::Null => JsonType::Null,
            serde_json::Value::Bool(_) => JsonType::Boolean,
            serde_json::Value::Number(_) => JsonType::Number,
            serde_json::Value::String(_) => JsonType::String,
            serde_json::Value::Array(_) => JsonType::Array,
            serde_json::Value::Object(_) => JsonType::Object,
        }
    }

    /// The JSON Schema name of the type.
    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "boolean",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Array => "array",
            JsonType::Object => "object",
        }
    }

    pub fn parse(s: &str) -> Option<JsonType> {
        JsonType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// What a call's arguments reach: checked before the call is forwarded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArgFacts {
    pub hosts: BTreeSet<String>,
    pub roots: BTreeSet<String>,
}

impl ArgFacts {
    /// The hosts and path roots named anywhere in `args` (every string,
    /// however deep).
    pub fn of(args: &Value) -> ArgFacts {
        let mut out = ArgFacts::default();
        let mut reach = Reach {
            hosts: &mut out.hosts,
            roots: &mut out.roots,
            seen: Vec::new(),
        };
        let mut stack = vec![args];
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) => reach.string(s),
                Value::Array(items) => stack.extend(items.iter()),
                Value::Object(map) => stack.extend(map.values()),
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
        out
    }
}

/// What a result carries: checked after the upstream answered, before the
/// agent sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResultFacts {
    /// The result says `isError: true` (or the upstream answered a JSON-RPC error).
    pub is_error: bool,
    /// The result's size in bytes, as the upstream sent it.
    pub bytes: u64,
    pub hosts: BTreeSet<String>,
    pub roots: BTreeSet<String>,
    /// The PII and secret kinds the response scan found in it.
    pub classes: BTreeSet<DataClass>,
    /// `structuredContent`'s top-level members and their types; `None` when
    /// the result has none (or it is not an object).
    pub structured: Option<BTreeMap<String, JsonType>>,
}

impl ResultFacts {
    /// From a tool result (`{content, structuredContent, isError}`), its size
    /// and the response scan's findings. Base64 payloads (`data`, `blob`) and
    /// `_meta` are not read for hosts and paths.
    pub fn of(result: &serde_json::Value, bytes: usize, findings: &[Finding]) -> ResultFacts {
        let mut out = ResultFacts {
            is_error: result.get("isError").and_then(serde_json::Value::as_bool) == Some(true),
            bytes: bytes as u64,
            classes: findings.iter().filter_map(Finding::data_class).collect(),
            structured: result
                .get("structuredContent")
                .and_then(serde_json::Value::as_object)
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| (k.clone(), JsonType::of(v)))
                        .collect()
                }),
            ..ResultFacts::default()
        };
        let mut reach = Reach {
            hosts: &mut out.hosts,
            roots: &mut out.roots,
            seen: Vec::new(),
        };
        let mut stack = vec![result];
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::String(s) => reach.string(s),
                serde_json::Value::Array(items) => stack.extend(items.iter()),
                serde_json::Value::Object(map) => stack.extend(
                    map.iter()
                        .filter(|(k, _)| !matches!(k.as_str(), "data" | "blob" | "_meta"))
                        .map(|(_, v)| v),
                ),
                _ => {}
            }
        }
        out
    }

    /// A JSON-RPC error answer: an error, of `bytes` bytes, with the scan's
    /// findings (an error's text is scanned like a result).
    pub fn of_error(bytes: usize, findings: &[Finding]) -> ResultFacts {
        ResultFacts {
            is_error: true,
            bytes: bytes as u64,
            classes: findings.iter().filter_map(Finding::data_class).collect(),
            ..ResultFacts::default()
        }
    }
}

/// Collects the hosts and roots of one call's strings. Cheap on purpose (it
/// runs on every call): each distinct authority is parsed once per call, and
/// a root already collected is not allocated again.
struct Reach<'s, 'a> {
    hosts: &'s mut BTreeSet<String>,
    roots: &'s mut BTreeSet<String>,
    /// Authorities (`user@host:port`) already parsed in this call.
    seen: Vec<&'a str>,
}

impl<'a> Reach<'_, 'a> {
    /// The hosts and path roots one string names.
    fn string(&mut self, s: &'a str) {
        if s.contains("://") {
            // Only the tokens around each `://`, found by substring search:
            // most of a long text is never split into words.
            let mut done = 0;
            for (at, _) in s.match_indices("://") {
                if at < done {
                    continue;
                }
                let start = s[..at]
                    .rfind(char::is_whitespace)
                    .map_or(0, |i| i + s[i..].chars().next().map_or(1, char::len_utf8));
                let end = s[at..]
                    .find(char::is_whitespace)
                    .map_or(s.len(), |i| at + i);
                self.url(&s[start..end]);
                done = end;
            }
            return;
        }
        let t = s.trim();
        if t.starts_with('/') && !t.starts_with("//") && !t.contains(char::is_whitespace) {
            self.root(t);
        }
    }

    fn url(&mut self, token: &'a str) {
        let Some((start, at)) = scheme_at(token) else {
            return;
        };
        let scheme = &token[start..at];
        let rest = &token[at + 3..];
        if scheme.eq_ignore_ascii_case("file") {
            if let Some(url) = url_in(&token[start..]) {
                self.root(url.path());
            }
            return;
        }
        // The authority ends where the path, query or fragment starts; the
        // same authority has the same host, so it is parsed once.
        let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
        if self.seen.contains(&authority) {
            return;
        }
        self.seen.push(authority);
        let candidate = format!("{scheme}://{authority}/");
        if let Some(url) = url_in(&candidate)
            && let Some(host) = url.host_str()
            && !self.hosts.contains(host)
        {
            self.hosts.insert(host.to_ascii_lowercase());
        }
    }

    fn root(&mut self, path: &str) {
        match simple_root(path) {
            Some(r) if self.roots.contains(r) => {}
            Some(r) => {
                self.roots.insert(r.to_owned());
            }
            None => {
                self.roots.insert(root_of(path));
            }
        }
    }
}

/// Where a token's URL starts and where its `://` is: the scheme is the
/// letters, digits, `+`, `.` and `-` right before it.
fn scheme_at(token: &str) -> Option<(usize, usize)> {
    let at = token.find("://")?;
    let start = token[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
        .last()
        .map(|(i, _)| i)?;
    Some((start, at))
}

/// The URL a token holds: from its scheme to the end, without the
/// punctuation prose puts around a link. Parsing is the `url` crate's.
fn url_in(token: &str) -> Option<url::Url> {
    let (start, _) = scheme_at(token)?;
    let candidate = token[start..]
        .trim_end_matches(['.', ',', ';', ':', ')', ']', '}', '>', '"', '\'', '!', '?']);
    url::Url::parse(candidate).ok()
}

/// A path's root as a prefix of it, when normalization would change nothing
/// (no `.`, `..` or empty segment among what counts): the common case,
/// without an allocation.
fn simple_root(path: &str) -> Option<&str> {
    let body = path.strip_prefix('/')?;
    if body.split('/').any(|seg| seg == "." || seg == "..") {
        return None;
    }
    let mut segs = body.split('/');
    let first = segs.next().filter(|f| !f.is_empty())?;
    let end = 1 + first.len();
    match segs.next() {
        None => Some(&path[..end]),
        Some("") => segs.next().is_none().then(|| &path[..end]),
        Some(second) => Some(&path[..end + 1 + second.len()]),
    }
}

/// A path's root: its first two components after lexical normalization
/// (`.` dropped, `..` pops, never above `/`).
pub fn root_of(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.truncate(2);
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(json: &str) -> ArgFacts {
        ArgFacts::of(&interlock_canon::parse_json(json.as_bytes()).unwrap())
    }

    #[test]
    fn urls_become_hosts_and_paths_become_roots() {
        let f = args(
            r#"{"url": "https://API.Example.com:8443/v1?q=1", "note": "see (http://docs.example.org/x).",
                "path": "/srv/data/reports/q3.csv", "deep": [{"file": "file:///home/alice/a.md"}],
                "prose": "and/or /not a path", "rel": "notes/a.md"}"#,
        );
        assert_eq!(
            f.hosts,
            ["api.example.com", "docs.example.org"]
                .map(String::from)
                .into()
        );
        assert_eq!(
            f.roots,
            ["/home/alice", "/srv/data"].map(String::from).into()
        );
    }

    #[test]
    fn traversal_is_normalized_before_the_root_is_taken() {
        assert_eq!(root_of("/srv/data/../../etc/passwd"), "/etc/passwd");
        assert_eq!(root_of("/../../"), "/");
        assert_eq!(root_of("/tmp"), "/tmp");
        assert_eq!(
            args(r#"{"p": "/srv/data/../../etc/shadow"}"#).roots.len(),
            1
        );
    }

    proptest::proptest! {
        #[test]
        fn the_fast_root_is_the_normalized_root(p in "(/(|[a-z]{1,3}|\\.|\\.\\.)){1,5}") {
            if let Some(r) = simple_root(&p) {
                proptest::prop_assert_eq!(r, root_of(&p));
            }
        }
    }

    #[test]
    fn a_token_the_url_parser_refuses_is_no_host() {
        assert!(args(r#"{"x": "weird://[not-a-host/"}"#).hosts.is_empty());
        assert!(args(r#"{"x": "://nothing"}"#).hosts.is_empty());
    }

    #[test]
    fn result_facts_read_error_flag_structured_keys_and_skip_payloads() {
        let r: serde_json::Value = serde_json::from_str(
            r#"{"content":[{"type":"text","text":"fetched https://a.example/x"},
                {"type":"image","data":"aHR0cHM6Ly9iLmV4YW1wbGU=","mimeType":"image/png"}],
                "structuredContent":{"n":1,"where":"/var/lib/x/y","tags":[]},"isError":false}"#,
        )
        .unwrap();
        let f = ResultFacts::of(&r, 10, &[]);
        assert!(!f.is_error);
        assert_eq!(f.hosts, ["a.example".to_owned()].into());
        assert_eq!(f.roots, ["/var/lib".to_owned()].into());
        let s = f.structured.unwrap();
        assert_eq!(s["n"], JsonType::Number);
        assert_eq!(s["tags"], JsonType::Array);
    }

    #[test]
    fn every_response_rule_of_the_scanner_has_a_data_class() {
        let text = "mail bob@corp.example, card 4111 1111 1111 1111, ssn 123-45-6789, \
                    call +1 415 555 0100, key AKIAIOSFODNN7EXAMPLE, password=hunter2x9, \
                    -----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----";
        let scan = interlock_inspect::scan_response(text, &Default::default());
        let classes: BTreeSet<DataClass> = scan
            .findings
            .iter()
            .filter_map(Finding::data_class)
            .collect();
        for c in [
            DataClass::Email,
            DataClass::PaymentCard,
            DataClass::UsSsn,
            DataClass::Phone,
            DataClass::SecretPattern,
            DataClass::SecretAssignment,
            DataClass::PrivateKey,
        ] {
            assert!(
                classes.contains(&c),
                "{c:?} not found in {:?}",
                scan.findings
            );
        }
        for f in &scan.findings {
            assert!(f.data_class().is_some(), "unclassified rule {}", f.rule);
        }
    }
}
