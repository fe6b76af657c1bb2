//! The reviewer API's receipts (issue 18): find them (`GET /api/v1/receipts`,
//! filtered and keyset-paged by the store), export them
//! (`POST /api/v1/receipts/export`, the CLI's `receipts export` code path),
//! one receipt as a C2SP tlog-proof (`GET /api/v1/log/{index}/tlog-proof`),
//! and the overview's counts (`GET /api/v1/overview`).

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use interlock_canon as canon;
use interlock_core::time::parse_time;
use interlock_log::{ExportFilter, LogError, ReceiptEntry, receipts_page};
use interlock_store::ReceiptFilter;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::extract::{ApiError, Body, Param, Query};
use crate::gateway::Gateway;
use crate::reviewer::key::reviewer;

/// The most receipts one page returns.
pub const MAX_PAGE: u32 = 500;

fn storage(e: LogError) -> ApiError {
    ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string())
}

fn invalid(message: String) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "invalid", message)
}

/// The filters shared by the list and the export. Times are RFC 3339 UTC,
/// a date, or Unix seconds (`from` inclusive, `to` exclusive).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptsQuery {
    from: Option<String>,
    to: Option<String>,
    plan: Option<String>,
    server: Option<String>,
    agent: Option<String>,
    tool: Option<String>,
    event: Option<String>,
    /// The index of the previous page's last receipt: the page holds older ones.
    cursor: Option<u64>,
    limit: Option<u32>,
    /// Export only: a contiguous range of log indices (inclusive).
    from_index: Option<u64>,
    to_index: Option<u64>,
    /// Export only: carry the approved surfaces the receipts name.
    #[serde(default)]
    with_surfaces: bool,
}

fn time(name: &str, v: Option<&str>) -> Result<Option<i64>, ApiError> {
    v.filter(|s| !s.is_empty())
        .map(|s| {
            parse_time(s).map_err(|e| {
                invalid(format!(
                    "{name}: {e} (an RFC 3339 UTC time, a date or Unix seconds)"
                ))
            })
        })
        .transpose()
}

/// An empty string is no filter (an HTML form's empty field).
fn given(v: &Option<String>) -> Option<String> {
    v.as_ref().filter(|s| !s.is_empty()).cloned()
}

impl ReceiptsQuery {
    fn filter(&self) -> Result<ReceiptFilter, ApiError> {
        let (since, until) = (
            time("from", self.from.as_deref())?,
            time("to", self.to.as_deref())?,
        );
        if let (Some(a), Some(b)) = (since, until)
            && a >= b
        {
            return Err(invalid(format!(
                "from ({a}) must be before to ({b}): the range would be empty"
            )));
        }
        Ok(ReceiptFilter {
            since,
            until,
            from_index: self.from_index,
            to_index: self.to_index,
            plan_id: given(&self.plan),
            server: given(&self.server),
            agent: given(&self.agent),
            tool: given(&self.tool),
            kind: given(&self.event),
        })
    }
}

fn entry_json(e: &ReceiptEntry) -> Value {
    let mut v = match &e.summary {
        Some(s) => serde_json::to_value(s).expect("a summary serializes"),
        None => json!({"kind": interlock_log::UNREADABLE}),
    };
    v["index"] = json!(e.index);
    if let Some((name, value)) = e.summary.as_ref().and_then(|s| s.hash.clone()) {
        v["hash"] = json!({"name": name, "value": value});
    }
    v["predicate"] = e
        .predicate
        .as_ref()
        .map_or(Value::Null, canon::to_serde_json);
    v
}

/// `GET /api/v1/receipts?from=&to=&plan=&server=&agent=&tool=&event=&cursor=&limit=`:
/// the receipts the filters select, newest first, each decoded (kind, time,
/// verdict, approver, bound hash, findings, and the whole predicate; the
/// stored leaf is `GET /api/v1/log/{index}/proof`). `next_cursor` asks for
/// the next page; it is absent on the last one.
pub async fn receipts(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Query(q): Query<ReceiptsQuery>,
) -> Result<Json<Value>, ApiError> {
    reviewer(&gw, &headers).await?;
    let filter = q.filter()?;
    let limit = q.limit.unwrap_or(100).clamp(1, MAX_PAGE);
    let page = receipts_page(gw.engine().store(), &filter, q.cursor, limit)
        .await
        .map_err(storage)?;
    let next = (page.len() == limit as usize)
        .then(|| page.last().map(|e| e.index))
        .flatten();
    Ok(Json(json!({
        "receipts": page.iter().map(entry_json).collect::<Vec<_>>(),
        "next_cursor": next,
    })))
}

/// `POST /api/v1/receipts/export` (body: the list's filters, plus
/// `from_index`/`to_index`/`with_surfaces`): the bundle of the selected
/// receipts and its report and summary — the three files `interlock receipts
/// export` writes, from the same code — as `{"files": [{"name",
/// "media_type", "content"}], ...}`. Three files, not an archive: the
/// auditor drops `bundle.json` back on the window or hands it to `interlock
/// receipts verify` as it is, and neither side needs an archive format.
pub async fn export(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Body(q): Body<ReceiptsQuery>,
) -> Result<Json<Value>, ApiError> {
    reviewer(&gw, &headers).await?;
    let f = q.filter()?;
    let log = gw.engine().log();
    // The newest receipts are exported too: sign a checkpoint for them now.
    log.refresh().await.map_err(storage)?;
    log.seal().await.map_err(storage)?;
    let filter = ExportFilter {
        since: f.since,
        until: f.until,
        plan_id: f.plan_id,
        server: f.server,
        agent: f.agent,
        tool: f.tool,
        kind: f.kind,
        with_surfaces: q.with_surfaces,
        from_index: f.from_index,
        to_index: f.to_index,
    };
    let files = interlock_log::export_files(gw.engine().store(), &filter)
        .await
        .map_err(|e| match e {
            LogError::Export(m) => ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", m),
            other => storage(other),
        })?;
    let bundle_json = String::from_utf8(files.bundle_json).map_err(|_| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the bundle is not UTF-8".into(),
        )
    })?;
    // Every approver key registration is exported whatever the filter (they
    // back the decisions' signatures), so the count can exceed the list's:
    // said, so the auditor is not left guessing.
    let registrations = files
        .report
        .receipts
        .iter()
        .filter(|r| r.kind == "approver.registered")
        .count();
    Ok(Json(json!({
        "receipts": files.bundle.receipts.len(),
        "registrations": registrations,
        "log_key": files.bundle.trust.log_key,
        "verified": files.report.is_ok(),
        "problems": files.report.errors().map(ToString::to_string).collect::<Vec<_>>(),
        "files": [
            {"name": "bundle.json", "media_type": "application/json", "content": bundle_json},
            {"name": "report.html", "media_type": "text/html", "content": files.report_html},
            {"name": "summary.csv", "media_type": "text/csv", "content": files.summary_csv},
        ],
    })))
}

/// `GET /api/v1/log/{index}/tlog-proof`: receipt `index` as a C2SP tlog-proof
/// file (c2sp.org/tlog-proof; issue 17), against the latest checkpoint —
/// signed now if none covers the receipt yet. Checked as `interlock receipts
/// verify` will check it before it is sent.
pub async fn tlog_proof(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Param(index): Param<u64>,
) -> Result<Response, ApiError> {
    reviewer(&gw, &headers).await?;
    let log = gw.engine().log();
    log.refresh().await.map_err(storage)?;
    if index >= log.size() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no receipt at index {index} (the log holds {})", log.size()),
        ));
    }
    if index >= log.sealed_size() {
        log.seal().await.map_err(storage)?;
    }
    let text = interlock_log::tlog_proof_file(gw.engine().store(), index)
        .await
        .map_err(|e| match e {
            LogError::Export(m) => ApiError::new(StatusCode::NOT_FOUND, "not_found", m),
            other => storage(other),
        })?;
    let disposition = format!(
        "attachment; filename=\"receipt-{index}.{}\"",
        interlock_merkle::TLOG_PROOF_EXTENSION
    );
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            ),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_str(&disposition).expect("an ASCII header"),
            ),
        ],
        text,
    )
        .into_response())
}

/// The overview's query: `since` (a time, default 7 days ago), `bucket`
/// (seconds, default an hour), `today` (where the reviewer's day starts,
/// default midnight UTC).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverviewQuery {
    since: Option<String>,
    bucket: Option<i64>,
    today: Option<String>,
}

/// The most buckets one overview asks the store for.
const MAX_BUCKETS: i64 = 2_000;

/// Receipt kinds that record a reviewer's decision.
const DECISIONS: [&str; 10] = [
    "plan.approved",
    "plan.rejected",
    "plan.decision",
    "server.approved",
    "server.rejected",
    "tool.approved",
    "tool.blocked",
    "standing.granted",
    "standing.revoked",
    "tool.envelope_widened",
];

/// Per-name totals and series of tool calls.
#[derive(Default)]
struct Series {
    calls: Vec<u64>,
    holds: Vec<u64>,
    blocks: Vec<u64>,
    shadow_calls: u64,
    shadow_would_block: u64,
}

impl Series {
    fn new(n: usize) -> Series {
        Series {
            calls: vec![0; n],
            holds: vec![0; n],
            blocks: vec![0; n],
            ..Series::default()
        }
    }

    fn add(&mut self, at: usize, verdict: Option<&str>, shadow: bool, count: u64) {
        self.calls[at] += count;
        match verdict {
            Some("held") => self.holds[at] += count,
            Some("blocked" | "not_allowed") => self.blocks[at] += count,
            _ => {}
        }
        if shadow {
            self.shadow_calls += count;
            if verdict == Some("shadow_would_block") {
                self.shadow_would_block += count;
            }
        }
    }

    fn json(&self, name: &str) -> Value {
        let sum = |v: &[u64]| v.iter().sum::<u64>();
        json!({
            "name": name,
            "calls": sum(&self.calls),
            "holds": sum(&self.holds),
            "blocks": sum(&self.blocks),
            "shadow_calls": self.shadow_calls,
            "shadow_would_block": self.shadow_would_block,
            "shadow_would_block_rate": (self.shadow_calls > 0)
                .then(|| self.shadow_would_block as f64 / self.shadow_calls as f64),
            "series": {"calls": self.calls, "holds": self.holds, "blocks": self.blocks},
        })
    }
}

/// What the overview counts as calls: MCP tool calls, the agents' own tool
/// uses their hooks reported (issue 40), and requests to models (issue 42).
const CALLS: [&str; 3] = ["tool.call", "hook.call", "llm.call"];

/// The overview's name for the agents' own tools (a hook's use has no server).
const AGENT_TOOLS: &str = "(agents' own tools)";

/// The overview's name for requests to models through the LLM proxy.
const MODELS: &str = "(models)";

/// `GET /api/v1/overview?since=&bucket=&today=`: what waits now (held,
/// quarantined), what was decided today, and tool calls, holds and blocks
/// per time bucket, per server and per agent, with each agent's shadow-mode
/// would-block rate. The counting is SQL (`GROUP BY` over the receipt
/// index); this only lays the counts out as series.
pub async fn overview(
    State(gw): State<Gateway>,
    headers: HeaderMap,
    Query(q): Query<OverviewQuery>,
) -> Result<Json<Value>, ApiError> {
    reviewer(&gw, &headers).await?;
    let now = gw.engine().now();
    let bucket = q.bucket.unwrap_or(3_600);
    if bucket <= 0 {
        return Err(invalid(format!(
            "bucket must be a positive number of seconds, not {bucket}"
        )));
    }
    let since = time("since", q.since.as_deref())?.unwrap_or(now - 7 * 86_400);
    // Buckets start at multiples of their width (whole hours, whole UTC
    // days), so the last one is the one `now` is in.
    let since = since - since.rem_euclid(bucket);
    if since > now {
        return Err(invalid("since is in the future".into()));
    }
    if (now - since) / bucket > MAX_BUCKETS {
        return Err(invalid(format!(
            "{} buckets of {bucket} s since {since}: at most {MAX_BUCKETS}; ask for wider buckets",
            (now - since) / bucket
        )));
    }
    let today = time("today", q.today.as_deref())?.unwrap_or(now - now.rem_euclid(86_400));
    let store = gw.engine().store();
    interlock_log::index_receipts(store)
        .await
        .map_err(storage)?;
    let rows = store.receipt_counts(since, bucket).await?;
    // The day so far, as one bucket.
    let day = store
        .receipt_counts(today, (now - today).max(0) + 1)
        .await?;
    let n = usize::try_from((now - since) / bucket + 1).unwrap_or(1);
    let mut all = Series::new(n);
    let mut servers: std::collections::BTreeMap<String, Series> = Default::default();
    let mut agents: std::collections::BTreeMap<String, Series> = Default::default();
    let (mut decided_today, mut held_today, mut calls_today) = (0u64, 0u64, 0u64);
    for r in &day {
        // A hook's after-event reports the outcome of a use counted already.
        if r.verdict.as_deref() == Some("reported") {
            continue;
        }
        if DECISIONS.contains(&r.kind.as_str()) {
            decided_today += r.count;
        }
        if CALLS.contains(&r.kind.as_str()) {
            calls_today += r.count;
            if r.verdict.as_deref() == Some("held") {
                held_today += r.count;
            }
        }
    }
    for r in &rows {
        if !CALLS.contains(&r.kind.as_str()) || r.verdict.as_deref() == Some("reported") {
            continue;
        }
        let Some(at) = usize::try_from((r.start - since) / bucket)
            .ok()
            .filter(|i| *i < n)
        else {
            continue;
        };
        let v = r.verdict.as_deref();
        all.add(at, v, r.shadow, r.count);
        // A coding agent's own tool use and a request to a model have no
        // server: each is counted under one name of its own.
        let server = r.server.clone().unwrap_or_else(|| {
            if r.kind == "llm.call" {
                MODELS
            } else {
                AGENT_TOOLS
            }
            .to_owned()
        });
        servers
            .entry(server)
            .or_insert_with(|| Series::new(n))
            .add(at, v, r.shadow, r.count);
        let agent = r.agent.clone().unwrap_or_default();
        agents
            .entry(agent)
            .or_insert_with(|| Series::new(n))
            .add(at, v, r.shadow, r.count);
    }
    let views = gw.pins().views();
    let quarantined = views
        .iter()
        .filter(|v| v.record.status == interlock_store::ServerStatus::Quarantined)
        .count();
    let held_servers = views.iter().filter(|v| v.waits_for_review()).count();
    let held_plans = gw
        .engine()
        .plans(Some(interlock_engine::PlanStatus::Proposed))
        .await?
        .len();
    Ok(Json(json!({
        "now": now,
        "since": since,
        "bucket": bucket,
        "today": today,
        "buckets": (0..n).map(|i| since + i as i64 * bucket).collect::<Vec<_>>(),
        "held": held_plans + held_servers,
        "held_plans": held_plans,
        "held_servers": held_servers,
        "quarantined": quarantined,
        "decided_today": decided_today,
        "calls_today": calls_today,
        "held_calls_today": held_today,
        "all": all.json("all"),
        "servers": servers.iter().map(|(k, s)| s.json(k)).collect::<Vec<_>>(),
        "agents": agents.iter().map(|(k, s)| s.json(k)).collect::<Vec<_>>(),
    })))
}
