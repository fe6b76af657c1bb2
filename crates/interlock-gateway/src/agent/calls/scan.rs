//! After a call ran, or content was read: the upstream's answer scanned
//! text by text (PII, secrets, injection), redacted in place or withheld by
//! the response policy. Pure: no I/O.
//!
//! The scan fails closed: what it cannot parse or walk (nested deeper than
//! the JSON parser's limit, larger than the scan cap) is [`Scanned::Unscannable`],
//! and the caller withholds it with an error saying why — it is never
//! forwarded unscanned.
//!
//! Every text an upstream sends toward the agent goes through here: a tool
//! result ([`scan_result`]), a prompt or resource ([`scan_content`]), a
//! JSON-RPC error ([`scan_error`]), and a call's progress and log
//! notifications ([`scan_notification`]).

use base64::Engine as _;
use indexmap::IndexMap;
use interlock_inspect::{Finding, ResponsePolicy};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::config::GatewayConfig;

/// How deep a JSON document may nest and still be scanned: `serde_json`'s
/// recursion limit, which the scan's parse enforces.
pub const MAX_SCAN_DEPTH: usize = 128;

/// The response policy and the scan's own bound.
#[derive(Clone, Debug)]
pub struct ScanPolicy {
    pub policy: ResponsePolicy,
    /// The largest answer scanned, in bytes; a larger one is withheld.
    pub max_bytes: usize,
    /// The agent key's own response caps (issue 20): a tool result larger
    /// than `key_max_bytes`, or with an array of more than
    /// `max_array_items` items anywhere, is withheld.
    pub key_max_bytes: Option<usize>,
    pub max_array_items: Option<usize>,
}

impl ScanPolicy {
    /// This policy with an agent key's settings applied: its response
    /// policy's actions where it sets them, its caps.
    pub fn for_key(mut self, s: &interlock_store::KeySettings) -> ScanPolicy {
        if let Some(p) = s
            .response_policy
            .as_deref()
            .and_then(|p| serde_json::from_str::<serde_json::Map<String, Value>>(p).ok())
        {
            let action = |k: &str| {
                p.get(k)
                    .and_then(Value::as_str)
                    .and_then(|a| a.parse().ok())
            };
            if let Some(a) = action("pii") {
                self.policy.pii = a;
            }
            if let Some(a) = action("secrets") {
                self.policy.secrets = a;
            }
            if let Some(a) = action("injection") {
                self.policy.injection = a;
            }
        }
        let cap = |n: Option<i64>| n.and_then(|n| usize::try_from(n).ok());
        self.key_max_bytes = cap(s.max_response_bytes);
        self.max_array_items = cap(s.max_array_items);
        self
    }
}

/// The response policy from the config (checked at load).
pub fn response_policy(config: &GatewayConfig) -> ScanPolicy {
    let parse = |s: &str| s.parse().unwrap_or(interlock_inspect::Action::Redact);
    ScanPolicy {
        policy: ResponsePolicy {
            pii: parse(&config.calls.response_pii),
            secrets: parse(&config.calls.response_secrets),
            injection: parse(&config.calls.response_injection),
            scanner: None,
        },
        max_bytes: config.calls.response_max_bytes,
        key_max_bytes: None,
        max_array_items: None,
    }
}

/// Which part of an upstream's message could not be scanned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// The whole answer.
    Result,
    /// A top-level member of a result (`content`, `structuredContent`, …).
    Member(String),
    /// A JSON-RPC error object.
    Error,
    /// A notification's params.
    Notification,
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Part::Result => f.write_str("the result"),
            Part::Member(m) => f.write_str(m),
            Part::Error => f.write_str("the error"),
            Part::Notification => f.write_str("the notification"),
        }
    }
}

/// Why an answer could not be scanned (it is withheld).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unscannable {
    #[error("{part} nests deeper than {limit} levels", limit = MAX_SCAN_DEPTH)]
    TooDeep { part: Part },
    #[error("{part} is {bytes} bytes, over the scan cap of {cap} bytes")]
    TooLarge {
        part: Part,
        bytes: usize,
        cap: usize,
    },
    #[error("{part} is not a JSON object")]
    NotAnObject { part: Part },
    /// Over the agent key's `max_response_bytes` (issue 20).
    #[error("{part} is {bytes} bytes, over this key's response cap of {cap} bytes")]
    OverKeyCap {
        part: Part,
        bytes: usize,
        cap: usize,
    },
    /// An array over the agent key's `max_array_items` (issue 20).
    #[error("{path} has {items} items, over this key's cap of {cap} array items")]
    TooManyItems {
        path: String,
        items: usize,
        cap: usize,
    },
}

impl Unscannable {
    /// Whether it was withheld for a key's response cap (it could be
    /// scanned; the key may not receive it).
    pub fn is_key_cap(&self) -> bool {
        matches!(
            self,
            Unscannable::OverKeyCap { .. } | Unscannable::TooManyItems { .. }
        )
    }

    /// Why it was withheld, as the agent and the leaf read it.
    pub fn reason(&self) -> String {
        if self.is_key_cap() {
            self.to_string()
        } else {
            format!("{self}, so it could not be scanned")
        }
    }
}

/// The first array longer than `cap` in `v`, with its path and length.
fn long_array(v: &Value, path: &str, cap: usize) -> Option<(String, usize)> {
    match v {
        Value::Array(items) if items.len() > cap => Some((path.to_owned(), items.len())),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| long_array(x, &format!("{path}[{i}]"), cap)),
        Value::Object(m) => m
            .iter()
            .find_map(|(k, x)| long_array(x, &format!("{path}.{k}"), cap)),
        _ => None,
    }
}

/// What the scan makes of an answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Scanned {
    /// Nothing to change: forward the upstream's bytes.
    Unchanged,
    /// Some text was redacted: send this document instead.
    Redacted(Value),
    /// A finding's category is set to `block`: withhold it.
    Blocked,
    /// It could not be scanned: withhold it.
    Unscannable(Unscannable),
}

/// A scan's verdict and everything it found.
#[derive(Clone, Debug, PartialEq)]
pub struct Scan {
    pub scanned: Scanned,
    pub findings: Vec<Finding>,
    /// The document as parsed for the scan, when it passed unchanged (a tool
    /// result): the envelope reads its facts from it instead of parsing the
    /// same bytes again (issue 16 item 2's cost per call).
    pub document: Option<Value>,
}

impl Default for Scan {
    /// Nothing found, nothing changed.
    fn default() -> Scan {
        Scan {
            scanned: Scanned::Unchanged,
            findings: Vec::new(),
            document: None,
        }
    }
}

impl Scan {
    fn unscannable(why: Unscannable) -> Scan {
        Scan {
            scanned: Scanned::Unscannable(why),
            findings: Vec::new(),
            document: None,
        }
    }

    /// The text an agent gets in place of a withheld answer, saying why;
    /// `None` if it is not withheld. `what` names the answer ("tool result").
    pub fn withheld_message(&self, what: &str) -> Option<String> {
        match &self.scanned {
            Scanned::Blocked => Some(format!(
                "the gateway withheld this {what}: it contained {} (blocked by policy)",
                categories(&self.findings)
            )),
            Scanned::Unscannable(why) => Some(format!(
                "the gateway blocked the upstream's {what}: {}",
                why.reason()
            )),
            _ => None,
        }
    }
}

/// The response policy applied to text after text, redacting in place and
/// collecting what it found.
struct TextScan<'a> {
    policy: &'a ResponsePolicy,
    findings: Vec<Finding>,
    blocked: bool,
    changed: bool,
}

impl<'a> TextScan<'a> {
    fn new(policy: &'a ResponsePolicy) -> TextScan<'a> {
        TextScan {
            policy,
            findings: Vec::new(),
            blocked: false,
            changed: false,
        }
    }

    /// Scans one text; `path` names where it is (only computed on a finding).
    fn text(&mut self, text: &mut String, path: &dyn Fn() -> String) {
        let s = interlock_inspect::scan_response(text, self.policy);
        if s.findings.is_empty() {
            return;
        }
        self.blocked |= s.blocked;
        if s.redacted != *text {
            *text = s.redacted;
            self.changed = true;
        }
        let path = path();
        self.findings.extend(s.findings.into_iter().map(|mut f| {
            f.path.clone_from(&path);
            f
        }));
    }

    /// Scans a JSON value as its serialized text (keys and values alike),
    /// keeping it JSON if the redacted text still parses.
    fn json(&mut self, v: &mut Value, path: &dyn Fn() -> String) {
        if let Value::String(s) = v {
            return self.text(s, path);
        }
        let mut text = v.to_string();
        let changed = self.changed;
        self.changed = false;
        self.text(&mut text, path);
        if self.changed {
            *v = serde_json::from_str(&text).unwrap_or(Value::String(text));
        }
        self.changed |= changed;
    }

    /// Every string at any depth (prompts nest their text in messages, results
    /// in embedded resources; a `resource_link`'s `uri` and `name`, `_meta` and
    /// `annotations` reach the agent too), a `blob` or `data` (base64 bytes)
    /// whose bytes are text whatever its `mimeType` says, and `_meta` /
    /// `annotations` objects keys and values alike. Only `type` and
    /// `mimeType`, which name formats, are not scanned.
    fn content(&mut self, v: &mut Value, path: &str) {
        match v {
            Value::Object(m) => {
                for (k, item) in m.iter_mut() {
                    let here = || format!("{path}.{k}");
                    match item {
                        // Base64 bytes: a resource's `blob`, an image's or an
                        // audio clip's `data`. Scanned when they decode to text
                        // (issue 39 item 10: an `application/octet-stream` or
                        // `x-ndjson` blob of text passed unscanned).
                        Value::String(b) if matches!(k.as_str(), "blob" | "data") => {
                            self.blob(b, &here);
                        }
                        Value::String(_) if matches!(k.as_str(), "type" | "mimeType") => {}
                        Value::String(t) => self.text(t, &here),
                        Value::Object(_) if matches!(k.as_str(), "_meta" | "annotations") => {
                            self.json(item, &here)
                        }
                        _ => self.content(item, &here()),
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    self.content(item, &format!("{path}[{i}]"));
                }
            }
            _ => {}
        }
    }

    /// A base64 blob of text: decoded as leniently as clients decode it
    /// ([`decode_base64_leniently`]), scanned, re-encoded (padded, one line)
    /// if redacted. One whose bytes are not UTF-8 is not text and passes.
    fn blob(&mut self, blob: &mut String, path: &dyn Fn() -> String) {
        let Some(mut text) = decode_base64_leniently(blob).and_then(|b| String::from_utf8(b).ok())
        else {
            return;
        };
        let changed = self.changed;
        self.changed = false;
        self.text(&mut text, path);
        if self.changed {
            *blob = base64::engine::general_purpose::STANDARD.encode(text);
        }
        self.changed |= changed;
    }

    fn finish(self, v: impl FnOnce() -> Value) -> Scan {
        self.finish_keeping(v, false)
    }

    /// As [`TextScan::finish`]; with `keep`, an unchanged document is kept
    /// in [`Scan::document`] (it was parsed anyway).
    fn finish_keeping(self, v: impl FnOnce() -> Value, keep: bool) -> Scan {
        let (scanned, document) = if self.blocked {
            (Scanned::Blocked, None)
        } else if self.changed {
            (Scanned::Redacted(v()), None)
        } else {
            (Scanned::Unchanged, keep.then(v))
        };
        Scan {
            scanned,
            findings: self.findings,
            document,
        }
    }
}

/// Base64 as clients decode it (issue 39 item 10): line breaks and other
/// ASCII whitespace ignored, padding optional, the standard or the URL-safe
/// alphabet. A strict decoder let a wrapped or unpadded blob pass unscanned
/// although the agent's client reads it.
fn decode_base64_leniently(blob: &str) -> Option<Vec<u8>> {
    use base64::alphabet::{STANDARD, URL_SAFE};
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    let compact: Vec<u8> = blob.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let config =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    [&STANDARD, &URL_SAFE]
        .into_iter()
        .find_map(|alphabet| GeneralPurpose::new(alphabet, config).decode(&compact).ok())
}

/// Parses an upstream's JSON for scanning: a document nested past
/// [`MAX_SCAN_DEPTH`] is unscannable, not skipped.
fn parse<T: serde::de::DeserializeOwned>(text: &str, part: Part) -> Result<T, Unscannable> {
    serde_json::from_str(text).map_err(|e| {
        // The transport checked it is JSON; what remains is depth or shape.
        if e.to_string().starts_with("recursion limit exceeded") {
            Unscannable::TooDeep { part }
        } else {
            Unscannable::NotAnObject { part }
        }
    })
}

fn check_size(text: &str, rules: &ScanPolicy, part: Part) -> Result<(), Unscannable> {
    if text.len() > rules.max_bytes {
        return Err(Unscannable::TooLarge {
            part,
            bytes: text.len(),
            cap: rules.max_bytes,
        });
    }
    Ok(())
}

/// [`check_size`] for an answer, then the key's own byte cap.
fn check_sizes(result: &str, rules: &ScanPolicy) -> Result<(), Unscannable> {
    check_size(result, rules, Part::Result)?;
    match rules.key_max_bytes {
        Some(cap) if result.len() > cap => Err(Unscannable::OverKeyCap {
            part: Part::Result,
            bytes: result.len(),
            cap,
        }),
        _ => Ok(()),
    }
}

/// The findings' categories, `a, b` (for a message that says what was withheld).
pub fn categories(findings: &[Finding]) -> String {
    let cats: std::collections::BTreeSet<&str> =
        findings.iter().map(|f| f.category.as_str()).collect();
    cats.into_iter().collect::<Vec<_>>().join(", ")
}

/// Scans a tool result: the texts of `content` (and embedded resources),
/// `structuredContent` and every other member, which all reach the agent.
pub fn scan_result(result: &str, rules: &ScanPolicy) -> Scan {
    if let Err(why) = check_sizes(result, rules) {
        return Scan::unscannable(why);
    }
    let members: IndexMap<String, Box<RawValue>> = match parse(result, Part::Result) {
        Ok(m) => m,
        Err(why) => return Scan::unscannable(why),
    };
    let mut scan = TextScan::new(&rules.policy);
    let mut doc = serde_json::Map::with_capacity(members.len());
    for (k, raw) in members {
        let mut v: Value = match parse(raw.get(), Part::Member(k.clone())) {
            Ok(v) => v,
            Err(why) => return Scan::unscannable(why),
        };
        if let Some(cap) = rules.max_array_items
            && let Some((path, items)) = long_array(&v, &format!("$.{k}"), cap)
        {
            return Scan::unscannable(Unscannable::TooManyItems { path, items, cap });
        }
        // Flags and numbers carry no text.
        let texty = !matches!(v, Value::Bool(_) | Value::Number(_) | Value::Null);
        if k == "content" {
            scan.content(&mut v, "$.content");
        } else if texty {
            scan.json(&mut v, &|| format!("$.{k}"));
        }
        doc.insert(k, v);
    }
    scan.finish_keeping(|| Value::Object(doc), true)
}

/// Scans read-only content an upstream returns outside a tool call (a prompt,
/// a resource, a listed item): every `text`, `description` and `title` at any
/// depth, and blobs of text. Base64 `blob`s of other bytes are not text and pass.
///
/// The key's caps apply as to a tool result (issue 39 item 12): a prompt or
/// resource larger than its `max_response_bytes`, or with a longer array
/// than its `max_array_items`, is withheld. (A listing's items are scanned
/// under the config's policy alone: a listing is the gateway's, not one key's.)
pub fn scan_content(result: &str, rules: &ScanPolicy) -> Scan {
    if let Err(why) = check_sizes(result, rules) {
        return Scan::unscannable(why);
    }
    let mut v: Value = match parse(result, Part::Result) {
        Ok(v) => v,
        Err(why) => return Scan::unscannable(why),
    };
    if let Some(cap) = rules.max_array_items
        && let Some((path, items)) = long_array(&v, "$", cap)
    {
        return Scan::unscannable(Unscannable::TooManyItems { path, items, cap });
    }
    let mut scan = TextScan::new(&rules.policy);
    scan.content(&mut v, "$");
    scan.finish(|| v)
}

/// Scans an upstream's JSON-RPC error object: its `message` and `data`
/// reach the agent like a result does.
pub fn scan_error(error: &str, rules: &ScanPolicy) -> Scan {
    if let Err(why) = check_size(error, rules, Part::Error) {
        return Scan::unscannable(why);
    }
    let mut v: serde_json::Map<String, Value> = match parse(error, Part::Error) {
        Ok(v) => v,
        Err(why) => return Scan::unscannable(why),
    };
    let mut scan = TextScan::new(&rules.policy);
    for (k, item) in v.iter_mut() {
        if k != "code" {
            scan.json(item, &|| format!("error.{k}"));
        }
    }
    scan.finish(|| Value::Object(v))
}

/// Scans the params of a notification relayed to the agent: the members in
/// `texts` (a progress `message`, a log message's `data` and `logger`).
pub fn scan_notification(params: &str, texts: &[&str], rules: &ScanPolicy, method: &str) -> Scan {
    if let Err(why) = check_size(params, rules, Part::Notification) {
        return Scan::unscannable(why);
    }
    let mut v: serde_json::Map<String, Value> = match parse(params, Part::Notification) {
        Ok(v) => v,
        Err(why) => return Scan::unscannable(why),
    };
    let mut scan = TextScan::new(&rules.policy);
    for (k, item) in v.iter_mut() {
        if texts.contains(&k.as_str()) {
            scan.json(item, &|| format!("{method}.{k}"));
        }
    }
    scan.finish(|| Value::Object(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> ScanPolicy {
        response_policy(&GatewayConfig::default())
    }

    #[test]
    fn results_are_redacted_not_dropped() {
        let s = scan_result(
            r#"{"content":[{"type":"text","text":"contact jane.doe@example.com, order 12345"}]}"#,
            &rules(),
        );
        assert!(!s.findings.is_empty());
        let Scanned::Redacted(out) = s.scanned else {
            panic!("{s:?}")
        };
        let text = out["content"][0]["text"].as_str().unwrap().to_owned();
        assert!(
            text.contains("[REDACTED:") && text.contains("order 12345"),
            "{text}"
        );
        assert_eq!(s.findings[0].path, "$.content[0].text");
        let s = scan_result(
            r#"{"content":[{"type":"text","text":"order 12345 shipped"}]}"#,
            &rules(),
        );
        assert_eq!(
            s.scanned,
            Scanned::Unchanged,
            "benign results pass untouched"
        );
    }

    #[test]
    fn regression_scan_fails_closed_on_deep_structured_content() {
        let deep = format!(
            r#"{{"content":[],"structuredContent":{}"AKIAIOSFODNN7EXAMPLE"{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let s = scan_result(&deep, &rules());
        assert_eq!(
            s.scanned,
            Scanned::Unscannable(Unscannable::TooDeep {
                part: Part::Member("structuredContent".into())
            })
        );
        assert_eq!(
            s.withheld_message("result").unwrap(),
            "the gateway blocked the upstream's result: structuredContent nests deeper than \
             128 levels, so it could not be scanned"
        );
    }

    #[test]
    fn regression_scan_fails_closed_on_oversized_result() {
        let mut r = rules();
        r.max_bytes = 64;
        let big = format!(
            r#"{{"content":[{{"type":"text","text":"{}"}}]}}"#,
            "a".repeat(100)
        );
        assert!(matches!(
            scan_result(&big, &r).scanned,
            Scanned::Unscannable(Unscannable::TooLarge { .. })
        ));
    }

    #[test]
    fn text_blobs_and_embedded_resources_are_scanned() {
        let b64 = base64::engine::general_purpose::STANDARD;
        let blob = b64.encode("key AKIAIOSFODNN7EXAMPLE here");
        let doc = format!(
            r#"{{"content":[{{"type":"resource","resource":{{"uri":"x://a","mimeType":"text/plain","blob":"{blob}"}}}},
                {{"type":"resource","resource":{{"uri":"x://b","text":"AKIAIOSFODNN7EXAMPLE"}}}}]}}"#
        );
        let s = scan_result(&doc, &rules());
        let Scanned::Redacted(out) = s.scanned else {
            panic!("{s:?}")
        };
        let text = String::from_utf8(
            b64.decode(out["content"][0]["resource"]["blob"].as_str().unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(text, "key [REDACTED:secret] here");
        assert_eq!(out["content"][1]["resource"]["text"], "[REDACTED:secret]");
    }

    /// Issue 39 item 10: only a text MIME type's strictly padded base64 was
    /// scanned, so a secret in an `application/octet-stream` or
    /// `application/x-ndjson` blob, or in a wrapped or unpadded one, reached
    /// the agent.
    #[test]
    fn regression_issue_39_blobs_of_any_type_and_lenient_base64_are_scanned() {
        let b64 = base64::engine::general_purpose::STANDARD;
        let secret = b64.encode("{\"key\":\"AKIAIOSFODNN7EXAMPLE\"}\n");
        let unpadded = secret.trim_end_matches('=').to_owned();
        let wrapped = secret
            .as_bytes()
            .chunks(8)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect::<Vec<_>>()
            .join("\r\n");
        for (mime, blob) in [
            ("application/octet-stream", secret.clone()),
            ("application/x-ndjson", secret.clone()),
            ("text/plain", unpadded),
            ("text/plain", wrapped.replace("\r\n", "\\r\\n")),
        ] {
            let doc = format!(
                r#"{{"content":[{{"type":"resource","resource":{{"uri":"x://a","mimeType":"{mime}","blob":"{blob}"}}}}]}}"#
            );
            let s = scan_result(&doc, &rules());
            let Scanned::Redacted(out) = s.scanned else {
                panic!("{mime} {blob}: {s:?}")
            };
            let text = String::from_utf8(
                b64.decode(out["content"][0]["resource"]["blob"].as_str().unwrap())
                    .unwrap(),
            )
            .unwrap();
            assert!(!text.contains("AKIAIOSFODNN7EXAMPLE"), "{mime}: {text}");
        }
        // Bytes that are not text (a PNG's signature) pass untouched.
        let png = b64.encode([0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]);
        let doc =
            format!(r#"{{"content":[{{"type":"image","mimeType":"image/png","data":"{png}"}}]}}"#);
        assert!(matches!(
            scan_result(&doc, &rules()).scanned,
            Scanned::Unchanged
        ));
    }

    /// Issue 15, item 12 (found by the `response_scan` fuzz target's author): a
    /// `resource_link`'s `uri` and `name`, and `_meta` on a content item, reached
    /// the agent unscanned — only `text`, `description` and `title` were read.
    #[test]
    fn regression_resource_link_uri_name_and_meta_are_scanned() {
        let doc = r#"{"content":[{"type":"resource_link","uri":"https://api.example/x?k=AKIAIOSFODNN7EXAMPLE",
            "name":"AKIAIOSFODNN7EXAMPLE","_meta":{"note":"key AKIAIOSFODNN7EXAMPLE"}}]}"#;
        let s = scan_result(doc, &rules());
        let Scanned::Redacted(out) = s.scanned else {
            panic!("{s:?}")
        };
        let text = out.to_string();
        assert!(!text.contains("AKIAIOSFODNN7EXAMPLE"), "{text}");
        assert_eq!(out["content"][0]["type"], "resource_link");
        assert_eq!(s.findings.len(), 3, "{:?}", s.findings);
    }
}
