//! JSON-RPC 2.0 messages as the gateway handles them: the envelope parsed, the
//! payload (`params`, `result`, `error`) kept as the exact bytes received, so
//! what the gateway forwards is byte for byte what it was given.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// JSON-RPC's standard error codes, and the gateway's own (in the
/// implementation-defined range -32000..-32099).
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The upstream server is down, timed out or answered nonsense.
    pub const UPSTREAM_UNAVAILABLE: i64 = -32001;
    /// The tool is not served: unknown, pending approval, held or quarantined.
    pub const TOOL_NOT_SERVED: i64 = -32002;
    /// The agent's role does not allow this tool.
    pub const FORBIDDEN: i64 = -32003;
    /// No session, or an unknown one.
    pub const SESSION: i64 = -32004;
    /// A bound on what one agent key (or the gateway) holds at once is
    /// reached: sessions, subscriptions, held calls.
    pub const LIMIT: i64 = -32005;
    /// The key's rate limit or monthly quota refused the call (issue 20):
    /// `data.retry_after_secs` says when to try again.
    pub const RATE_LIMITED: i64 = -32006;
}

/// One incoming message, envelope parsed, payload raw.
#[derive(Debug, Deserialize)]
pub struct Incoming<'a> {
    #[serde(default)]
    pub jsonrpc: Option<&'a str>,
    /// `Some` even for an explicit `null` (which MCP forbids as an id).
    #[serde(default, borrow, deserialize_with = "present")]
    pub id: Option<&'a RawValue>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default, borrow)]
    pub params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue as Deserialize>::deserialize(d).map(Some)
}

/// The same, owning its bytes (for messages read from an upstream).
#[derive(Debug, Deserialize)]
pub struct OwnedIncoming {
    #[serde(default)]
    pub id: Option<Box<RawValue>>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub params: Option<Box<RawValue>>,
    #[serde(default)]
    pub result: Option<Box<RawValue>>,
    #[serde(default)]
    pub error: Option<Box<RawValue>>,
}

/// What kind of message an [`Incoming`] is.
pub enum Kind {
    Request,
    Notification,
    Response,
}

impl Incoming<'_> {
    /// Checks the envelope and says what the message is.
    pub fn kind(&self) -> Result<Kind, &'static str> {
        if self.jsonrpc != Some("2.0") {
            return Err("`jsonrpc` must be \"2.0\"");
        }
        match (
            &self.method,
            self.id,
            self.result.is_some() || self.error.is_some(),
        ) {
            (Some(_), Some(id), false) => {
                if id_is_valid(id) {
                    Ok(Kind::Request)
                } else {
                    Err("`id` must be a string or an integer")
                }
            }
            (Some(_), None, false) => Ok(Kind::Notification),
            (None, Some(_), true) => Ok(Kind::Response),
            _ => Err("not a request, notification or response"),
        }
    }
}

/// Ids are strings or integers (MCP forbids null ids).
fn id_is_valid(id: &RawValue) -> bool {
    let s = id.get().as_bytes();
    matches!(s.first(), Some(b'"'))
        || (!s.is_empty()
            && s.iter()
                .enumerate()
                .all(|(i, b)| b.is_ascii_digit() || (i == 0 && *b == b'-')))
}

/// The deepest nesting of arrays and objects in a JSON text, stopping early once
/// past `limit` (strings are skipped, escapes respected). Raw forwarding never
/// builds a tree, so nesting is bounded here, before anything else reads it.
pub fn nesting_exceeds(bytes: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// A response: `{"jsonrpc":"2.0","id":…,"<member>":…}` with raw parts.
fn response(id: &str, member: &str, value: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() + id.len() + 32);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b",\"");
    out.extend_from_slice(member.as_bytes());
    out.extend_from_slice(b"\":");
    out.extend_from_slice(value.as_bytes());
    out.push(b'}');
    out
}

/// A success response with a raw result.
pub fn result(id: &RawValue, result: &RawValue) -> Vec<u8> {
    response(id.get(), "result", result.get())
}

/// A success response with a result the gateway built.
pub fn result_value(id: &RawValue, result: &serde_json::Value) -> Vec<u8> {
    let raw = serde_json::value::to_raw_value(result).expect("a JSON value serializes");
    self::result(id, &raw)
}

#[derive(Serialize)]
struct ErrorObject<'a> {
    code: i64,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a serde_json::Value>,
}

/// An error response (`id` null when the request's id could not be read).
pub fn error(id: Option<&RawValue>, code: i64, message: &str) -> Vec<u8> {
    error_with_data(id, code, message, None)
}

/// An error response with `data`.
pub fn error_with_data(
    id: Option<&RawValue>,
    code: i64,
    message: &str,
    data: Option<&serde_json::Value>,
) -> Vec<u8> {
    let err = serde_json::to_string(&ErrorObject {
        code,
        message,
        data,
    })
    .expect("an error object serializes");
    response(id.map_or("null", |i| i.get()), "error", &err)
}

/// A success response as a 2026-07-28 (stateless) client requires it: the
/// result says what kind it is (`"resultType": "complete"`, beside the
/// multi round-trip's `"input_required"`), and a `cacheable` one (a listing,
/// a read, `server/discover`) carries caching directives — `ttlMs: 0` and
/// `cacheScope: "private"`: a listing is the calling agent's own (its role)
/// and pinning may change it at any moment. An upstream of an earlier era
/// writes none of these; what a result has already is kept, every error
/// response is returned unchanged, and only the result's top level is
/// re-written (its members stay byte for byte).
pub fn for_stateless(body: Vec<u8>, cacheable: bool) -> Vec<u8> {
    type Members = indexmap::IndexMap<String, Box<RawValue>>;
    let Ok(mut response) = serde_json::from_slice::<Members>(&body) else {
        return body;
    };
    let Some(result) = response.get("result") else {
        return body;
    };
    let Ok(mut members) = serde_json::from_str::<Members>(result.get()) else {
        return body;
    };
    let mut missing: Vec<(&str, &str)> = vec![("resultType", "\"complete\"")];
    if cacheable {
        missing.extend([("ttlMs", "0"), ("cacheScope", "\"private\"")]);
    }
    missing.retain(|(k, _)| !members.contains_key(*k));
    if missing.is_empty() {
        return body;
    }
    for (k, v) in missing {
        members.insert(k.into(), RawValue::from_string(v.into()).expect("JSON"));
    }
    response.insert(
        "result".into(),
        serde_json::value::to_raw_value(&members).expect("raw JSON serializes"),
    );
    serde_json::to_vec(&response).expect("raw JSON serializes")
}

/// An error response carrying an upstream's error object as it was.
pub fn error_raw(id: &RawValue, error: &RawValue) -> Vec<u8> {
    response(id.get(), "error", error.get())
}

/// The answer to a call or read that ran upstream but whose log leaf could not
/// be written: an error that says so, never an unlogged result.
pub fn unlogged(id: &RawValue, what: &str, err: &dyn std::fmt::Display) -> Vec<u8> {
    error(
        Some(id),
        code::INTERNAL_ERROR,
        &format!("the {what} ran but the log append failed: {err}"),
    )
}

/// A request to send upstream, with the gateway's own id.
pub fn request(id: u64, method: &str, params: Option<&RawValue>) -> Vec<u8> {
    let method = serde_json::to_string(method).expect("a string serializes");
    let mut out = Vec::with_capacity(64 + params.map_or(0, |p| p.get().len()));
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.to_string().as_bytes());
    out.extend_from_slice(b",\"method\":");
    out.extend_from_slice(method.as_bytes());
    if let Some(p) = params {
        out.extend_from_slice(b",\"params\":");
        out.extend_from_slice(p.get().as_bytes());
    }
    out.push(b'}');
    out
}

/// A notification to send upstream.
pub fn notification(method: &str, params: Option<&RawValue>) -> Vec<u8> {
    let method = serde_json::to_string(method).expect("a string serializes");
    let mut out = Vec::with_capacity(48 + params.map_or(0, |p| p.get().len()));
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    out.extend_from_slice(method.as_bytes());
    if let Some(p) = params {
        out.extend_from_slice(b",\"params\":");
        out.extend_from_slice(p.get().as_bytes());
    }
    out.push(b'}');
    out
}

/// A tool result the agent's model reads: text, `isError: true`, and
/// structured content saying why.
pub fn tool_error(text: &str, structured: Option<serde_json::Value>) -> serde_json::Value {
    let mut v = serde_json::json!({"content": [{"type": "text", "text": text}], "isError": true});
    if let Some(s) = structured {
        v["structuredContent"] = s;
    }
    v
}

/// A listing result `{key: [...]}` of raw JSON items, with
/// `resultType: "complete"` for stateless (2026-07-28) requests: written
/// directly, so upstream items keep their bytes.
pub fn listing<I>(id: &RawValue, key: &str, items: I, stateless: bool) -> Vec<u8>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    let mut out = Vec::with_capacity(16 * 1024);
    out.extend_from_slice(b"{\"");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":[");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item.as_ref().as_bytes());
    }
    out.extend_from_slice(b"]");
    if stateless {
        out.extend_from_slice(b",\"resultType\":\"complete\"");
    }
    out.push(b'}');
    let raw = RawValue::from_string(String::from_utf8(out).expect("utf-8")).expect("valid JSON");
    result(id, &raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_are_classified() {
        let k = |s: &str| {
            serde_json::from_str::<Incoming>(s)
                .unwrap()
                .kind()
                .map(|k| k as u8)
        };
        assert_eq!(
            k(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Ok(Kind::Request as u8)
        );
        assert_eq!(
            k(r#"{"jsonrpc":"2.0","method":"x"}"#),
            Ok(Kind::Notification as u8)
        );
        assert_eq!(
            k(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
            Ok(Kind::Response as u8)
        );
        assert!(k(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#).is_err());
        assert!(k(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).is_err());
        assert!(k(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#).is_err());
    }

    #[test]
    fn nesting_is_measured_outside_strings() {
        assert!(!nesting_exceeds(br#"{"a":[[1]]}"#, 3));
        assert!(nesting_exceeds(br#"{"a":[[[1]]]}"#, 3));
        assert!(!nesting_exceeds(br#"{"a":"[[[[[[\"[["}"#, 1));
    }

    #[test]
    fn raw_results_are_forwarded_byte_for_byte() {
        let id = RawValue::from_string("7".into()).unwrap();
        let r = RawValue::from_string(r#"{"x": 1.50, "unknown":{"kept" :true}}"#.into()).unwrap();
        assert_eq!(
            String::from_utf8(result(&id, &r)).unwrap(),
            r#"{"jsonrpc":"2.0","id":7,"result":{"x": 1.50, "unknown":{"kept" :true}}}"#
        );
    }
}

#[cfg(test)]
mod result_type_tests {
    use super::*;

    #[test]
    fn a_result_without_a_type_is_complete_and_the_rest_kept() {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}],"x-vendor":{"a":[1,2]}}}"#.to_vec();
        assert_eq!(
            String::from_utf8(for_stateless(body, false)).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}],"x-vendor":{"a":[1,2]},"resultType":"complete"}}"#
        );
        let typed = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}"#.to_vec();
        assert_eq!(for_stateless(typed.clone(), false), typed);
        let error = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}"#.to_vec();
        assert_eq!(for_stateless(error.clone(), true), error);
    }

    #[test]
    fn a_stateless_listing_carries_caching_directives() {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#.to_vec();
        assert_eq!(
            String::from_utf8(for_stateless(body, true)).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}}"#
        );
    }
}
