//! Resources, prompts and completions: the read-only content of approved servers.
//!
//! An agent reads these; nothing here acts. So they are served on the same terms
//! as a tool result, not as a tool:
//!
//! - only from a server whose surface a reviewer approved and that is not
//!   quarantined (a pending, rejected or quarantined server serves nothing);
//! - prompt names carry the server's tool prefix (`server__prompt`), resource
//!   URIs are the server's own, and the agent's role must allow the prompt's
//!   name or `<prefix><uri>` (the same globs as tools);
//! - every text and description is inspected like a tool result (redacted, or
//!   withheld with an error that says why, by the response policy);
//! - every `prompts/get`, `resources/read` and `completion/complete` takes
//!   the tool call's limit and inspect stages: it counts against the key's
//!   rate, quota and in-flight cap, and what its request carries (arguments,
//!   URI, a completion's argument) is inspected like a call's arguments and
//!   refused when it would stop or hold a call (issue 39 item 11); its answer
//!   is scanned under the key's own response settings (item 12);
//! - every one is a log leaf (`prompt.get`, `resource.read`,
//!   `completion.complete`), appended before the answer is handed back.
//!
//! Pinned (issue 16 item 6): a server's prompts (by default) and its resources
//! and resource templates (with `pin = [..., "resources"]`) are part of the
//! surface a reviewer approves. For a pinned kind, listings are served from
//! what the gateway observed and assessed (never a fresh listing nobody
//! assessed), less the entries whose drift is held; getting or reading a held
//! or unlisted entry is refused. An unpinned kind is listed live, and
//! inspection is what stands between its text and the agent. A read's
//! inspect-and-record step is the call path's ([`deliver_read`]).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use indexmap::IndexMap;
use interlock_canon as canon;
use interlock_store::{ApiKeyRecord, ServerStatus};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::agent::calls::leaf::{ReadKind, ReadRecord};
use crate::agent::calls::reads::{admit, deliver_read, refuse_read, upstream_failure};
use crate::agent::calls::scan::{Scanned, response_policy, scan_content};
use crate::gateway::Gateway;
use crate::jsonrpc::{self, code};
use crate::upstream::{Connection, UpstreamError};
use interlock_surface::ContentKind;
use interlock_trust::held_id::arguments_digest;
use interlock_trust::pins::ServerView;

/// An approved, connected server that offers a capability.
struct Source {
    server: String,
    prefix: String,
    conn: Arc<Connection>,
    view: Arc<ServerView>,
}

impl Source {
    /// The entries of `kind` this server may list: its pinned listing less
    /// the held entries when `kind` is pinned, else a live listing.
    async fn listing(
        &self,
        gw: &Gateway,
        kind: ContentKind,
    ) -> Result<Vec<Box<RawValue>>, UpstreamError> {
        self.pinned_or_live(gw, kind, self.view.served_content(kind))
            .await
    }

    /// The entries of `kind` this server answers for, to route a get or a
    /// read: as [`Source::listing`], held entries included (the refusal then
    /// says they are held).
    async fn known(
        &self,
        gw: &Gateway,
        kind: ContentKind,
    ) -> Result<Vec<Box<RawValue>>, UpstreamError> {
        self.pinned_or_live(gw, kind, self.view.known_content(kind))
            .await
    }

    async fn pinned_or_live(
        &self,
        gw: &Gateway,
        kind: ContentKind,
        pinned: Option<Vec<&RawValue>>,
    ) -> Result<Vec<Box<RawValue>>, UpstreamError> {
        match pinned {
            Some(pinned) => Ok(pinned.into_iter().map(ToOwned::to_owned).collect()),
            None => list_all(gw, &self.conn, kind.list_method(), kind.list_key()).await,
        }
    }
}

/// The servers that may serve `capability` (`resources`, `prompts`,
/// `completions`) now, by name.
fn sources(gw: &Gateway, capability: &str) -> Vec<Source> {
    gw.pins()
        .views()
        .into_iter()
        .filter(|v| v.record.status == ServerStatus::Trusted)
        .filter_map(|v| {
            let up = gw.upstream(&v.record.name)?;
            if !up.hello()?.offers(capability) {
                return None;
            }
            Some(Source {
                server: v.record.name.clone(),
                prefix: v.prefix.clone(),
                conn: up.connection()?,
                view: Arc::clone(&v),
            })
        })
        .collect()
}

fn timeout(gw: &Gateway) -> Duration {
    gw.config().limits.upstream_timeout()
}

/// Every item of a paginated listing (`key` of each page), following
/// `nextCursor` up to [`crate::upstream::pages::MAX_PAGES`]. A listing larger in all than one upstream
/// message may be (`limits.max_upstream_message_bytes`) is refused whole, so an
/// upstream cannot make the gateway gather an unbounded answer page by page.
pub(crate) async fn list_all(
    gw: &Gateway,
    conn: &Connection,
    method: &str,
    key: &str,
) -> Result<Vec<Box<RawValue>>, UpstreamError> {
    crate::upstream::pages::list_pages(
        conn,
        method,
        key,
        gw.config().limits.max_upstream_message_bytes,
        timeout(gw),
    )
    .await
}

/// `item`'s members, and its string member `field`.
fn field_of(item: &RawValue, field: &str) -> Option<(IndexMap<String, Box<RawValue>>, String)> {
    let members: IndexMap<String, Box<RawValue>> = serde_json::from_str(item.get()).ok()?;
    let value = serde_json::from_str::<String>(members.get(field)?.get()).ok()?;
    Some((members, value))
}

fn raw_string(s: &str) -> Box<RawValue> {
    serde_json::value::to_raw_value(s).expect("a string serializes")
}

/// A listing's descriptions, inspected; an item whose text policy blocks is
/// left out (and logged), a redacted one is served redacted.
fn inspected(gw: &Gateway, server: &str, items: Vec<Box<RawValue>>) -> Vec<Box<RawValue>> {
    let policy = response_policy(gw.config());
    items
        .into_iter()
        .filter_map(|item| {
            let scan = scan_content(item.get(), &policy);
            match scan.scanned {
                Scanned::Unchanged => Some(item),
                Scanned::Redacted(v) => Some(serde_json::value::to_raw_value(&v).expect("JSON")),
                Scanned::Blocked | Scanned::Unscannable(_) => {
                    let why = scan.withheld_message("listed item").expect("withheld");
                    tracing::warn!(
                        server,
                        findings = scan.findings.len(),
                        why = %why,
                        "withheld a listed item"
                    );
                    None
                }
            }
        })
        .collect()
}

/// `prompts/list`: the prompts of every approved server offering them, named
/// `<prefix><name>`, those the role allows.
pub(crate) async fn prompts_list(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    stateless: bool,
) -> Vec<u8> {
    let mut out = Vec::new();
    for s in sources(gw, "prompts") {
        let items = match s.listing(gw, ContentKind::Prompt).await {
            Ok(items) => items,
            Err(e) => {
                // One failing server does not hide the others' prompts.
                tracing::warn!(server = %s.server, error = %e, "prompts/list failed");
                continue;
            }
        };
        for item in inspected(gw, &s.server, items) {
            let Some((mut members, name)) = field_of(&item, "name") else {
                continue;
            };
            let exposed = format!("{}{name}", s.prefix);
            if !gw.roles().allows(&agent.role, &exposed) {
                continue;
            }
            members.insert("name".into(), raw_string(&exposed));
            out.push(serde_json::value::to_raw_value(&members).expect("JSON"));
        }
    }
    jsonrpc::listing(id, "prompts", out.iter().map(|i| i.get()), stateless)
}

/// `resources/list` or `resources/templates/list` (`key` `resources` or
/// `resourceTemplates`): every approved server's, those the role allows.
pub(crate) async fn resources_list(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    method: &str,
    key: &str,
    stateless: bool,
) -> Vec<u8> {
    let kind = if key == "resources" {
        ContentKind::Resource
    } else {
        ContentKind::ResourceTemplate
    };
    let uri_field = kind.key_field();
    let mut out = Vec::new();
    for s in sources(gw, "resources") {
        let items = match s.listing(gw, kind).await {
            Ok(items) => items,
            Err(e) => {
                tracing::warn!(server = %s.server, error = %e, "{method} failed");
                continue;
            }
        };
        for item in inspected(gw, &s.server, items) {
            let allowed = field_of(&item, uri_field).is_some_and(|(_, uri)| {
                gw.roles()
                    .allows(&agent.role, &format!("{}{uri}", s.prefix))
            });
            if allowed {
                out.push(item);
            }
        }
    }
    jsonrpc::listing(id, key, out.iter().map(|i| i.get()), stateless)
}

/// The literal text of a URI template before its first expression.
fn template_prefix(template: &str) -> &str {
    template.split('{').next().unwrap_or(template)
}

/// Why no server was picked for a resource URI.
#[derive(Debug, thiserror::Error)]
enum NoOwner {
    #[error("unknown resource `{0}` (no approved server lists it or a template for it)")]
    Unknown(String),
    #[error(
        "resource `{uri}` is claimed by servers {servers} alike; the gateway does not guess \
         which one to read"
    )]
    Ambiguous { uri: String, servers: String },
}

/// The server a resource URI belongs to: the one whose `resources/list`
/// contains it; else the one with a template whose literal prefix matches
/// it (the longest). Every approved server is asked, so a claim shared by two
/// servers is refused as ambiguous rather than given to the first, and a URI
/// no server claims is refused rather than sent to the only one.
async fn resource_owner(gw: &Gateway, uri: &str) -> Result<Source, NoOwner> {
    let mut candidates = sources(gw, "resources");
    let mut listed = Vec::new();
    let mut templated: Vec<(usize, usize)> = Vec::new(); // (template prefix length, index)
    for (i, s) in candidates.iter().enumerate() {
        if let Ok(items) = s.known(gw, ContentKind::Resource).await
            && items
                .iter()
                .any(|r| field_of(r, "uri").is_some_and(|(_, u)| u == uri))
        {
            listed.push(i);
            continue;
        }
        let templates = s
            .known(gw, ContentKind::ResourceTemplate)
            .await
            .unwrap_or_default();
        let longest = templates
            .iter()
            .filter_map(|t| field_of(t, "uriTemplate"))
            .map(|(_, template)| template_prefix(&template).to_owned())
            .filter(|p| !p.is_empty() && uri.starts_with(p.as_str()))
            .map(|p| p.len())
            .max();
        if let Some(l) = longest {
            templated.push((l, i));
        }
    }
    let chosen: Vec<usize> = if listed.is_empty() {
        let best = templated.iter().map(|(l, _)| *l).max();
        templated
            .iter()
            .filter(|(l, _)| Some(*l) == best)
            .map(|(_, i)| *i)
            .collect()
    } else {
        listed
    };
    match chosen.as_slice() {
        [] => Err(NoOwner::Unknown(uri.to_owned())),
        [one] => Ok(candidates.swap_remove(*one)),
        many => Err(NoOwner::Ambiguous {
            uri: uri.to_owned(),
            servers: many
                .iter()
                .map(|&i| format!("`{}`", candidates[i].server))
                .collect::<Vec<_>>()
                .join(" and "),
        }),
    }
}

/// The server and upstream prompt name an exposed prompt name means: the
/// longest prefix among the servers offering prompts; between servers with the
/// same prefix, the one that lists it.
async fn prompt_owner(gw: &Gateway, exposed: &str) -> Option<(Source, String)> {
    let mut matching: Vec<Source> = sources(gw, "prompts")
        .into_iter()
        .filter(|s| exposed.starts_with(s.prefix.as_str()))
        .collect();
    let longest = matching.iter().map(|s| s.prefix.len()).max()?;
    matching.retain(|s| s.prefix.len() == longest);
    let name = exposed[longest..].to_owned();
    if matching.len() == 1 {
        return matching.pop().map(|s| (s, name));
    }
    for (i, s) in matching.iter().enumerate() {
        if let Ok(listed) = s.known(gw, ContentKind::Prompt).await
            && listed
                .iter()
                .any(|p| field_of(p, "name").is_some_and(|(_, n)| n == name))
        {
            return Some((matching.swap_remove(i), name));
        }
    }
    None
}

#[derive(Deserialize)]
struct GetPrompt {
    name: String,
    #[serde(default)]
    arguments: Option<Box<RawValue>>,
}

/// `prompts/get`: the prompt from its server, its arguments inspected, its
/// text scanned, logged. `limited` is set when a key's limit refused it.
pub(crate) async fn prompts_get(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
    limited: Option<&OnceLock<u64>>,
) -> Vec<u8> {
    let Some(p) = params.and_then(|p| serde_json::from_str::<GetPrompt>(p.get()).ok()) else {
        return jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            "prompts/get needs params {name, arguments}",
        );
    };
    if !gw.roles().allows(&agent.role, &p.name) {
        return jsonrpc::error(
            Some(id),
            code::FORBIDDEN,
            &format!("role `{}` may not get prompt `{}`", agent.role, p.name),
        );
    }
    let Some((source, name)) = prompt_owner(gw, &p.name).await else {
        return jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            &format!("unknown prompt `{}` (no approved server offers it)", p.name),
        );
    };
    let arguments = match p.arguments.as_deref().map(strict).transpose() {
        Ok(a) => a,
        Err(e) => return not_acceptable(id, &e),
    };
    let arguments_hash = arguments.as_ref().map(|v| arguments_digest(v).to_string());
    let record = ReadRecord {
        kind: ReadKind::Prompt,
        agent,
        server: &source.server,
        what: &name,
        arguments_hash: arguments_hash.as_deref(),
    };
    if let Err(why) = pinned_entry(&source, ContentKind::Prompt, &name) {
        return refuse_read(gw, id, &record, why).await;
    }
    let none = canon::Value::Object(canon::Map::new());
    let admitted = match admit(
        gw,
        id,
        &record,
        arguments.as_ref().unwrap_or(&none),
        limited,
    )
    .await
    {
        Ok(a) => a,
        Err(answer) => return answer,
    };
    let mut forwarded: IndexMap<String, Box<RawValue>> = params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or_default();
    forwarded.insert("name".into(), raw_string(&name));
    let forwarded = serde_json::value::to_raw_value(&forwarded).expect("JSON");
    let outcome = source
        .conn
        .request("prompts/get", Some(&forwarded), timeout(gw))
        .await;
    deliver_read(gw, id, &record, &admitted, outcome).await
}

/// A request's JSON, read strictly (as a tool call's arguments are).
fn strict(raw: &RawValue) -> Result<canon::Value, canon::IntakeError> {
    canon::parse_json(raw.get().as_bytes())
}

fn not_acceptable(id: &RawValue, e: &dyn std::fmt::Display) -> Vec<u8> {
    jsonrpc::error(
        Some(id),
        code::INVALID_PARAMS,
        &format!("the arguments are not acceptable JSON: {e}"),
    )
}

#[derive(Deserialize)]
struct ReadResource {
    uri: String,
}

/// Whether a pinned kind's entry may be got or read: held entries are
/// refused, and so are entries the pinned listing does not hold (a prompt
/// the server answers for but never listed was never assessed).
fn pinned_entry(source: &Source, kind: ContentKind, key: &str) -> Result<(), String> {
    source.view.check_content(kind, key)?;
    let Some(served) = source.view.served_content(kind) else {
        return Ok(());
    };
    let listed = served.iter().any(|item| {
        serde_json::from_str::<IndexMap<String, Box<RawValue>>>(item.get())
            .ok()
            .and_then(|m| serde_json::from_str::<String>(m.get(kind.key_field())?.get()).ok())
            .is_some_and(|k| k == key)
    });
    if listed {
        Ok(())
    } else {
        Err(format!(
            "{kind} `{key}` is not in the listing of server `{}` a reviewer approved",
            source.server
        ))
    }
}

/// A pinned resource URI may be read when a served listed resource has it,
/// or a served template's literal prefix starts it; a held one is refused
/// with why. (Resources and their templates are pinned together.)
fn pinned_resource(source: &Source, uri: &str) -> Result<(), String> {
    let Some(templates) = source.view.served_content(ContentKind::ResourceTemplate) else {
        return Ok(());
    };
    source.view.check_content(ContentKind::Resource, uri)?;
    if pinned_entry(source, ContentKind::Resource, uri).is_ok() {
        return Ok(());
    }
    let templated = templates.iter().any(|t| {
        field_of(t, "uriTemplate").is_some_and(|(_, template)| {
            let p = template_prefix(&template);
            !p.is_empty() && uri.starts_with(p)
        })
    });
    if templated {
        Ok(())
    } else {
        Err(format!(
            "resource `{uri}` is not in the listing of server `{}` a reviewer approved",
            source.server
        ))
    }
}

/// The approved server `uri` belongs to ([`resource_owner`]), if the agent's
/// role may read it (its `tools` globs against `<prefix><uri>`); otherwise
/// the error to answer with. Reads, subscriptions and resource completions
/// all route through here.
async fn readable_resource(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    uri: &str,
) -> Result<Source, Vec<u8>> {
    let source = match resource_owner(gw, uri).await {
        Ok(s) => s,
        Err(why) => {
            return Err(jsonrpc::error(
                Some(id),
                code::INVALID_PARAMS,
                &why.to_string(),
            ));
        }
    };
    if !gw
        .roles()
        .allows(&agent.role, &format!("{}{uri}", source.prefix))
    {
        return Err(jsonrpc::error(
            Some(id),
            code::FORBIDDEN,
            &format!("role `{}` may not read `{uri}`", agent.role),
        ));
    }
    Ok(source)
}

/// `resources/read`: the resource from the server it belongs to, its URI
/// inspected, its contents scanned, logged.
pub(crate) async fn resources_read(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
    limited: Option<&OnceLock<u64>>,
) -> Vec<u8> {
    let Some(p) = params.and_then(|p| serde_json::from_str::<ReadResource>(p.get()).ok()) else {
        return jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            "resources/read needs params {uri}",
        );
    };
    let source = match readable_resource(gw, agent, id, &p.uri).await {
        Ok(s) => s,
        Err(answer) => return answer,
    };
    let record = ReadRecord {
        kind: ReadKind::Resource,
        agent,
        server: &source.server,
        what: &p.uri,
        arguments_hash: None,
    };
    if let Err(why) = pinned_resource(&source, &p.uri) {
        return refuse_read(gw, id, &record, why).await;
    }
    // The URI is what the agent chose: inspected as an argument named `uri`.
    let mut request = canon::Map::new();
    request.insert("uri".into(), p.uri.as_str().into());
    let admitted = match admit(gw, id, &record, &canon::Value::Object(request), limited).await {
        Ok(a) => a,
        Err(answer) => return answer,
    };
    let outcome = source
        .conn
        .request("resources/read", params, timeout(gw))
        .await;
    deliver_read(gw, id, &record, &admitted, outcome).await
}

/// `resources/subscribe` and `resources/unsubscribe` (`subscribe` says which)
/// for `session`: the resource is routed as [`resources_read`] routes it,
/// under the same role check. The gateway subscribes upstream for a
/// resource's first subscriber and unsubscribes after its last; updates
/// reach the session's `GET /mcp` stream (`subscriptions.rs`).
pub(crate) async fn subscription(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    session: &str,
    id: &RawValue,
    params: Option<&RawValue>,
    subscribe: bool,
) -> Vec<u8> {
    let method = if subscribe {
        "resources/subscribe"
    } else {
        "resources/unsubscribe"
    };
    let Some(p) = params.and_then(|p| serde_json::from_str::<ReadResource>(p.get()).ok()) else {
        return jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            &format!("{method} needs params {{uri}}"),
        );
    };
    let source = match readable_resource(gw, agent, id, &p.uri).await {
        Ok(s) => s,
        Err(answer) => return answer,
    };
    if let Err(why) = pinned_resource(&source, &p.uri) {
        return jsonrpc::error(Some(id), code::FORBIDDEN, &why);
    }
    let resource = (source.server.clone(), p.uri.clone());
    let subs = &gw.0.subscriptions;
    let changing = subs.changing(&source.server);
    let _changing = changing.lock().await;
    if !subscribe {
        if subs.unsubscribe(&resource, session) {
            gw.unsubscribe_upstream(&source.server, &p.uri);
        }
        return jsonrpc::result_value(id, &serde_json::json!({}));
    }
    let key_sessions = gw.sessions_of(&agent.key_hash);
    let first = match subs.subscribe(
        resource.clone(),
        session,
        &key_sessions,
        gw.config().limits.subscriptions_per_key,
    ) {
        Ok(first) => first,
        Err(cap) => return jsonrpc::error(Some(id), code::LIMIT, &cap.to_string()),
    };
    if first {
        // The first subscriber: the upstream must agree before anyone is
        // told they will get updates.
        if let Err(e) = source.conn.request(method, params, timeout(gw)).await {
            subs.unsubscribe(&resource, session);
            let rules = response_policy(gw.config());
            return upstream_failure(id, &source.server, &rules, e);
        }
    }
    jsonrpc::result_value(id, &serde_json::json!({}))
}

/// `completion/complete`: argument suggestions for a prompt or resource
/// template, from the server that owns it (prompt names are unprefixed on the
/// way up). What the agent typed reaches the server and the suggestions reach
/// the agent, so it takes a read's treatment (issue 39 item 11): the key's
/// limits, its request (the ref, the argument, the context) inspected, the
/// answer scanned, a `completion.complete` leaf. `limited` is set when a
/// key's limit refused it.
pub(crate) async fn complete(
    gw: &Gateway,
    agent: &ApiKeyRecord,
    id: &RawValue,
    params: Option<&RawValue>,
    limited: Option<&OnceLock<u64>>,
) -> Vec<u8> {
    let bad = || {
        jsonrpc::error(
            Some(id),
            code::INVALID_PARAMS,
            "completion/complete needs params {ref: {type, name|uri}, argument}",
        )
    };
    let Some(mut members) =
        params.and_then(|p| serde_json::from_str::<IndexMap<String, Box<RawValue>>>(p.get()).ok())
    else {
        return bad();
    };
    let Some(reference) = members
        .get("ref")
        .and_then(|r| serde_json::from_str::<IndexMap<String, Box<RawValue>>>(r.get()).ok())
    else {
        return bad();
    };
    let request = match params.map(strict).transpose() {
        Ok(Some(v)) => v,
        Ok(None) => return bad(),
        Err(e) => return not_acceptable(id, &e),
    };
    let text = |k: &str| {
        reference
            .get(k)
            .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
    };
    let (source, reference, what, pinned) = match text("type").as_deref() {
        Some("ref/prompt") => {
            let Some(exposed) = text("name") else {
                return bad();
            };
            if !gw.roles().allows(&agent.role, &exposed) {
                return jsonrpc::error(
                    Some(id),
                    code::FORBIDDEN,
                    &format!("role `{}` may not use prompt `{exposed}`", agent.role),
                );
            }
            let Some((source, name)) = prompt_owner(gw, &exposed).await else {
                return jsonrpc::error(
                    Some(id),
                    code::INVALID_PARAMS,
                    &format!("unknown prompt `{exposed}`"),
                );
            };
            let pinned = pinned_entry(&source, ContentKind::Prompt, &name);
            let mut r = reference.clone();
            r.insert("name".into(), raw_string(&name));
            (source, r, name, pinned)
        }
        Some("ref/resource") => {
            let Some(uri) = text("uri") else {
                return bad();
            };
            let source = match readable_resource(gw, agent, id, &uri).await {
                Ok(s) => s,
                Err(answer) => return answer,
            };
            let pinned = pinned_resource(&source, &uri);
            (source, reference.clone(), uri, pinned)
        }
        _ => return bad(),
    };
    let arguments_hash = arguments_digest(&request).to_string();
    let record = ReadRecord {
        kind: ReadKind::Completion,
        agent,
        server: &source.server,
        what: &what,
        arguments_hash: Some(&arguments_hash),
    };
    if let Err(why) = pinned {
        return refuse_read(gw, id, &record, why).await;
    }
    let admitted = match admit(gw, id, &record, &request, limited).await {
        Ok(a) => a,
        Err(answer) => return answer,
    };
    let outcome = if sources(gw, "completions")
        .iter()
        .any(|s| s.server == source.server)
    {
        members.insert(
            "ref".into(),
            serde_json::value::to_raw_value(&reference).expect("JSON"),
        );
        let forwarded = serde_json::value::to_raw_value(&members).expect("JSON");
        source
            .conn
            .request("completion/complete", Some(&forwarded), timeout(gw))
            .await
    } else {
        // A server that offers no completions suggests nothing.
        Ok(serde_json::value::to_raw_value(&serde_json::json!({
            "completion": {"values": [], "hasMore": false}
        }))
        .expect("JSON"))
    };
    deliver_read(gw, id, &record, &admitted, outcome).await
}
