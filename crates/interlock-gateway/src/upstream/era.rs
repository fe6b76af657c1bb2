//! The protocol era of an upstream connection, and the one place a request is
//! put into that era on its way out (issue 15 item 21).
//!
//! MCP has two eras that share method names but not their framing:
//!
//! - **handshake** (2025-11-25 and earlier): `initialize` fixes the version
//!   and the client's capabilities for the whole connection;
//! - **stateless** (2026-07-28): no handshake; every request carries the
//!   version, the client's capabilities and identity in
//!   `params._meta["io.modelcontextprotocol/…"]` (and, over HTTP, the
//!   `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers); a server
//!   describes itself in `server/discover`.
//!
//! Agents reach the gateway in either era, and the gateway reaches each
//! upstream in the era that upstream serves; the two are unrelated. So what an
//! agent put in its envelope describes the agent's link to the gateway, never
//! the gateway's link to the upstream: a handshake-era upstream gets it
//! stripped (an SDK that serves both eras on one connection refuses a request
//! carrying it: "this connection serves the handshake protocol era"), and a
//! stateless-era upstream gets the gateway's own envelope in its place (the
//! gateway is the client there, and it declares no capabilities: it refuses
//! sampling, elicitation and roots). Every other `_meta` member (the
//! gateway's `progressToken`, an agent's own keys) goes through untouched.

use std::borrow::Cow;

use base64::Engine as _;
use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::value::RawValue;

/// The stateless protocol version (the one the gateway also serves agents).
pub use crate::protocol::STATELESS_VERSION;

/// The protocol version the gateway asks handshake-era upstreams for.
pub const HANDSHAKE_VERSION: &str = "2025-11-25";

/// The request `_meta` keys of the 2026-07-28 envelope. The gateway owns them
/// on every upstream request: an agent's are never forwarded.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
const ENVELOPE_KEYS: [&str; 4] = [
    PROTOCOL_VERSION_KEY,
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
];
/// The result `_meta` key where a stateless-era server names itself.
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The era one upstream connection speaks, fixed when it opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// `initialize` at [`HANDSHAKE_VERSION`], then plain requests.
    Handshake,
    /// Each request carries the [`STATELESS_VERSION`] envelope.
    Stateless,
}

/// Which era the gateway opens an upstream connection in (`protocol` in a
/// server's config).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum EraChoice {
    /// Probe `server/discover`; the stateless era if the server lists
    /// 2026-07-28, else the handshake (what the official SDKs' clients do).
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// Always the handshake, even with a server that also serves 2026-07-28.
    #[serde(rename = "2025-11-25")]
    Handshake,
    /// Only the stateless era: a server that does not list 2026-07-28 in
    /// `server/discover` is not connected.
    #[serde(rename = "2026-07-28")]
    Stateless,
}

/// The gateway as an MCP client (`clientInfo`).
pub fn client_info() -> serde_json::Value {
    serde_json::json!({"name": "interlock-gateway", "version": env!("CARGO_PKG_VERSION")})
}

/// A request as its connection's era sends it.
pub struct Outgoing<'a> {
    pub params: Option<Cow<'a, RawValue>>,
    /// The HTTP headers that go with it beside the configured ones (the
    /// stateless era's routing headers; none in the handshake era). A stdio
    /// link has no headers and ignores them.
    pub http_headers: Vec<(&'static str, String)>,
}

/// `method`'s `params` as `era` expects them: the agent's envelope keys
/// stripped from `_meta`, and for [`Era::Stateless`] the gateway's envelope
/// added (which makes params of a request that had none) and the routing
/// headers named. Borrowed when nothing changes, which is every
/// handshake-era request whose text cannot spell an envelope key.
pub fn outgoing<'a>(era: Era, method: &str, params: Option<&'a RawValue>) -> Outgoing<'a> {
    match era {
        Era::Handshake => {
            let params = params.map(|p| {
                if !may_hold_envelope(p.get()) {
                    return Cow::Borrowed(p);
                }
                match parse(p) {
                    Some(mut members) => {
                        if strip(&mut members) {
                            Cow::Owned(to_raw(&members))
                        } else {
                            Cow::Borrowed(p)
                        }
                    }
                    None => Cow::Borrowed(p),
                }
            });
            Outgoing {
                params,
                http_headers: Vec::new(),
            }
        }
        Era::Stateless => {
            let empty = RawValue::from_string("{}".into()).expect("valid JSON");
            let p = params.unwrap_or(&empty);
            let Some(mut members) = parse(p) else {
                // Params that are not an object are not MCP's; the upstream says so.
                return Outgoing {
                    params: Some(Cow::Owned(p.to_owned())),
                    http_headers: http_headers(method, None),
                };
            };
            let headers = http_headers(method, Some(&members));
            strip(&mut members);
            let mut meta = members
                .get("_meta")
                .and_then(|m| serde_json::from_str::<IndexMap<String, Box<RawValue>>>(m.get()).ok())
                .unwrap_or_default();
            for (k, v) in stateless_envelope() {
                meta.insert(k.to_owned(), v);
            }
            members.insert("_meta".into(), to_raw(&meta));
            Outgoing {
                params: Some(Cow::Owned(to_raw(&members))),
                http_headers: headers,
            }
        }
    }
}

/// Whether the JSON text could spell an envelope key: it has one literally,
/// or an escape that can stand for its characters (`\/`, `\u…`; the
/// common `\n`, `\"`, `\\` cannot, since no envelope key holds them).
fn may_hold_envelope(text: &str) -> bool {
    text.contains("io.modelcontextprotocol/") || text.contains("\\/") || text.contains("\\u")
}

type Members = IndexMap<String, Box<RawValue>>;

/// The top-level members of `params`; `None` if it is not an object.
fn parse(params: &RawValue) -> Option<Members> {
    serde_json::from_str(params.get()).ok()
}

/// Removes the envelope keys from `members["_meta"]` (and `_meta` itself if
/// nothing else is left in it); whether anything was removed. A `_meta` that
/// is not an object holds no envelope.
fn strip(members: &mut Members) -> bool {
    let Some(mut meta) = members
        .get("_meta")
        .and_then(|m| serde_json::from_str::<Members>(m.get()).ok())
    else {
        return false;
    };
    let before = meta.len();
    meta.retain(|k, _| !ENVELOPE_KEYS.contains(&k.as_str()));
    if meta.len() == before {
        return false;
    }
    if meta.is_empty() {
        members.shift_remove("_meta");
    } else {
        members.insert("_meta".into(), to_raw(&meta));
    }
    true
}

/// The gateway's own envelope members, raw.
fn stateless_envelope() -> [(&'static str, Box<RawValue>); 3] {
    let raw = |v: serde_json::Value| serde_json::value::to_raw_value(&v).expect("JSON serializes");
    [
        (PROTOCOL_VERSION_KEY, raw(STATELESS_VERSION.into())),
        (CLIENT_CAPABILITIES_KEY, raw(serde_json::json!({}))),
        (CLIENT_INFO_KEY, raw(client_info())),
    ]
}

fn to_raw(map: &Members) -> Box<RawValue> {
    serde_json::value::to_raw_value(map).expect("raw JSON serializes")
}

/// The HTTP headers a stateless-era request carries beside its body: the
/// version, the method, and for `tools/call`, `prompts/get` and
/// `resources/read` the name (or URI) they address, which servers check
/// against the body.
fn http_headers(method: &str, members: Option<&Members>) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("mcp-protocol-version", STATELESS_VERSION.to_owned()),
        ("mcp-method", method.to_owned()),
    ];
    let name_key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return headers,
    };
    if let Some(name) = members
        .and_then(|m| m.get(name_key))
        .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
    {
        headers.push(("mcp-name", header_value(&name)));
    }
    headers
}

/// A header value that carries `value` exactly: visible ASCII without edge
/// whitespace as is, anything else as `=?base64?…?=` (UTF-8), the spec's
/// encoding for names that an HTTP field cannot hold.
fn header_value(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    }
}

/// What a stateless-era server says about itself in `server/discover`.
#[derive(Debug)]
pub struct Discovered {
    /// Whether it serves [`STATELESS_VERSION`].
    pub stateless: bool,
    pub server_info: Option<Box<RawValue>>,
    pub instructions: Option<String>,
    pub capabilities: Vec<String>,
}

/// Reads a `server/discover` result.
pub fn discovered(result: &RawValue) -> Result<Discovered, serde_json::Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Result {
        #[serde(default)]
        supported_versions: Vec<String>,
        #[serde(default)]
        server_info: Option<Box<RawValue>>,
        #[serde(default)]
        instructions: Option<String>,
        #[serde(default)]
        capabilities: Option<IndexMap<String, serde::de::IgnoredAny>>,
        #[serde(rename = "_meta", default)]
        meta: Option<IndexMap<String, Box<RawValue>>>,
    }
    let r: Result = serde_json::from_str(result.get())?;
    let server_info = r
        .server_info
        .or_else(|| r.meta.and_then(|mut m| m.shift_remove(SERVER_INFO_KEY)));
    Ok(Discovered {
        stateless: r.supported_versions.iter().any(|v| v == STATELESS_VERSION),
        server_info,
        instructions: r.instructions,
        capabilities: r
            .capabilities
            .map(|c| c.into_keys().collect())
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    fn out(era: Era, params: Option<&str>) -> Option<String> {
        let p = params.map(raw);
        outgoing(era, "tools/call", p.as_deref())
            .params
            .map(|c| c.get().to_owned())
    }

    fn headers(method: &str, params: Option<&str>) -> Vec<(&'static str, String)> {
        let p = params.map(raw);
        outgoing(Era::Stateless, method, p.as_deref()).http_headers
    }

    #[test]
    fn handshake_era_strips_the_agents_envelope_and_keeps_the_rest() {
        let p = r#"{"name":"t","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"agent"},"io.modelcontextprotocol/logLevel":"debug","progressToken":"interlock-7","com.example/trace":"x"}}"#;
        assert_eq!(
            out(Era::Handshake, Some(p)).unwrap(),
            r#"{"name":"t","arguments":{"a":1},"_meta":{"progressToken":"interlock-7","com.example/trace":"x"}}"#
        );
        // Only envelope keys: `_meta` goes entirely.
        let p = r#"{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#;
        assert_eq!(out(Era::Handshake, Some(p)).unwrap(), r#"{"name":"t"}"#);
        // Escapes spell the same key to every JSON reader.
        let p = r#"{"name":"t","_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}"#;
        assert_eq!(out(Era::Handshake, Some(p)).unwrap(), r#"{"name":"t"}"#);
        let p = r#"{"name":"t","_meta":{"io.modelcontextprotocol\u002fprotocolVersion":"x"}}"#;
        assert_eq!(out(Era::Handshake, Some(p)).unwrap(), r#"{"name":"t"}"#);
    }

    #[test]
    fn handshake_era_forwards_other_params_as_sent() {
        // Byte for byte, whitespace and all: nothing to strip.
        let p = r#"{ "name" : "t", "arguments": {"s": "a\nb"}, "_meta": {"progressToken": 3} }"#;
        assert_eq!(out(Era::Handshake, Some(p)).unwrap(), p);
        assert_eq!(out(Era::Handshake, None), None);
        // The envelope key as an argument value is not an envelope.
        let p = r#"{"name":"t","arguments":{"k":"io.modelcontextprotocol/protocolVersion"}}"#;
        assert_eq!(out(Era::Handshake, Some(p)).unwrap(), p);
    }

    #[test]
    fn stateless_era_puts_the_gateways_envelope_in_place_of_the_agents() {
        let p = r#"{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"progressToken":"interlock-1"}}"#;
        let v: serde_json::Value =
            serde_json::from_str(&out(Era::Stateless, Some(p)).unwrap()).unwrap();
        assert_eq!(
            v["_meta"],
            serde_json::json!({
                "progressToken": "interlock-1",
                PROTOCOL_VERSION_KEY: "2026-07-28",
                CLIENT_CAPABILITIES_KEY: {},
                CLIENT_INFO_KEY: client_info(),
            })
        );
        assert_eq!(v["name"], "t");
        // A request without params gets params holding the envelope.
        let v: serde_json::Value =
            serde_json::from_str(&out(Era::Stateless, None).unwrap()).unwrap();
        assert_eq!(v["_meta"][PROTOCOL_VERSION_KEY], "2026-07-28");
    }

    #[test]
    fn stateless_http_headers_name_the_method_and_its_target() {
        assert_eq!(
            headers("tools/call", Some(r#"{"name":"read_file","arguments":{}}"#)),
            vec![
                ("mcp-protocol-version", "2026-07-28".to_owned()),
                ("mcp-method", "tools/call".to_owned()),
                ("mcp-name", "read_file".to_owned()),
            ]
        );
        assert_eq!(
            headers("resources/read", Some(r#"{"uri":"file:///tmp/é"}"#))[2].1,
            format!(
                "=?base64?{}?=",
                base64::engine::general_purpose::STANDARD.encode("file:///tmp/é")
            )
        );
        assert_eq!(headers("tools/list", None).len(), 2);
        assert!(
            outgoing(Era::Handshake, "tools/call", None)
                .http_headers
                .is_empty()
        );
    }

    #[test]
    fn discover_results_name_the_era_and_the_server() {
        let d = discovered(&raw(
            r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"prompts":{}},"instructions":"hi","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}}}"#,
        ))
        .unwrap();
        assert!(d.stateless);
        assert_eq!(d.capabilities, ["tools", "prompts"]);
        assert_eq!(d.server_info.unwrap().get(), r#"{"name":"s"}"#);
        assert_eq!(d.instructions.as_deref(), Some("hi"));
        let d = discovered(&raw(r#"{"supportedVersions":["2025-11-25"]}"#)).unwrap();
        assert!(!d.stateless);
    }
}
