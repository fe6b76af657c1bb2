//! `/metrics` (issue 21): the gateway's counters, latencies and alert sinks'
//! lag in the OpenMetrics text format Prometheus scrapes (the Prometheus
//! project's own `prometheus-client` crate encodes it).
//!
//! What is counted comes from the log, not the call path: the tally
//! (`crate::tally`) reads every leaf this process sees (from the log's size
//! at start) and counts calls by verdict, holds, blocks, drifts and
//! quarantines with the same mapping the alert sinks use
//! (`interlock_alerts::event::classify`), so the numbers agree with the
//! evidence and cost a call nothing. Only two latencies are measured
//! on the call path (two clock reads and an atomic add each): the time from a
//! call's arrival to its verdict, and each log append a call waits on.
//!
//! Who may scrape: a reviewer key of the full scope, or a metrics-only key
//! (`interlock reviewers add NAME --scope metrics`), which reaches nothing else
//! ([`crate::reviewer::metrics`] serves them; this room holds the numbers).

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use interlock_alerts::event::{Category, classify};
use interlock_receipts::ReceiptSummary;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerdictLabel {
    verdict: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SinkLabel {
    sink: String,
}

/// One alert sink's gauges (from `crate::alerts::SinkStatus`).
pub(crate) struct SinkGauges {
    pub name: String,
    pub lag: u64,
    pub delivered: u64,
    pub dead_letters: u64,
    /// The request in flight failed at least once.
    pub retrying: bool,
}

/// The gateway's metrics (one per gateway, in its shared state).
pub struct Metrics {
    registry: Registry,
    calls: Family<VerdictLabel, Counter>,
    holds: Counter,
    blocks: Counter,
    drifts: Counter,
    quarantines: Counter,
    leaves: Gauge<u64, AtomicU64>,
    decision: Histogram,
    append: Histogram,
    sink_lag: Family<SinkLabel, Gauge<u64, AtomicU64>>,
    sink_delivered: Family<SinkLabel, Gauge<u64, AtomicU64>>,
    sink_dead: Family<SinkLabel, Gauge<u64, AtomicU64>>,
    sink_retrying: Family<SinkLabel, Gauge<u64, AtomicU64>>,
    llm_calls: Family<VerdictLabel, Counter>,
    llm_judge_breaker: Family<StateLabel, Gauge<u64, AtomicU64>>,
    llm_judge_failures: Gauge<u64, AtomicU64>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabel {
    state: String,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("interlock");
        let calls = Family::<VerdictLabel, Counter>::default();
        let holds = Counter::default();
        let blocks = Counter::default();
        let drifts = Counter::default();
        let quarantines = Counter::default();
        let leaves = Gauge::<u64, AtomicU64>::default();
        // 0.1 ms … ~1.6 s.
        let decision = Histogram::new(exponential_buckets(0.0001, 2.0, 15));
        let append = Histogram::new(exponential_buckets(0.0001, 2.0, 15));
        let sink_lag = Family::default();
        let sink_delivered = Family::default();
        let sink_dead = Family::default();
        let sink_retrying = Family::default();
        let llm_calls = Family::<VerdictLabel, Counter>::default();
        let llm_judge_breaker = Family::default();
        let llm_judge_failures = Gauge::<u64, AtomicU64>::default();
        registry.register(
            "llm_calls",
            "Requests to models through the LLM proxy since the gateway started, by verdict",
            llm_calls.clone(),
        );
        registry.register(
            "llm_judge_breaker",
            "The LLM judge's circuit breaker: 1 for its state (closed, open, half_open)",
            llm_judge_breaker.clone(),
        );
        registry.register(
            "llm_judge_consecutive_failures",
            "The LLM judge's failures since its last verdict",
            llm_judge_failures.clone(),
        );
        registry.register(
            "tool_calls",
            "Tool calls logged since the gateway started, by verdict",
            calls.clone(),
        );
        registry.register(
            "holds",
            "Calls held for a reviewer since the gateway started",
            holds.clone(),
        );
        registry.register(
            "blocks",
            "Calls and reads stopped since the gateway started",
            blocks.clone(),
        );
        registry.register(
            "drifts",
            "Server surface drifts since the gateway started",
            drifts.clone(),
        );
        registry.register(
            "quarantines",
            "Servers quarantined since the gateway started",
            quarantines.clone(),
        );
        registry.register("log_leaves", "Leaves in the log", leaves.clone());
        registry.register_with_unit(
            "decision_latency",
            "From a tool call's arrival to its verdict (held calls excluded: they wait for a human)",
            prometheus_client::registry::Unit::Seconds,
            decision.clone(),
        );
        registry.register_with_unit(
            "log_append_latency",
            "A tool call's wait for one log append to commit",
            prometheus_client::registry::Unit::Seconds,
            append.clone(),
        );
        registry.register(
            "alert_sink_lag",
            "Signed leaves an alert sink has not delivered yet",
            sink_lag.clone(),
        );
        registry.register(
            "alert_sink_delivered",
            "Events an alert sink's receiver accepted (stored, across restarts)",
            sink_delivered.clone(),
        );
        registry.register(
            "alert_sink_dead_letters",
            "Requests an alert sink gave up on",
            sink_dead.clone(),
        );
        registry.register(
            "alert_sink_retrying",
            "1 while an alert sink's request in flight has failed at least once",
            sink_retrying.clone(),
        );
        Metrics {
            registry,
            calls,
            holds,
            blocks,
            drifts,
            quarantines,
            leaves,
            decision,
            append,
            sink_lag,
            sink_delivered,
            sink_dead,
            sink_retrying,
            llm_calls,
            llm_judge_breaker,
            llm_judge_failures,
        }
    }
}

impl Metrics {
    /// A verdict reached `elapsed` after the call arrived.
    pub fn decided(&self, elapsed: Duration) {
        self.decision.observe(elapsed.as_secs_f64());
    }

    /// A call waited `elapsed` for a log append.
    pub fn appended(&self, elapsed: Duration) {
        self.append.observe(elapsed.as_secs_f64());
    }

    /// Counts one leaf (by the alert sinks' classification).
    pub(crate) fn count(&self, s: &ReceiptSummary) {
        let (category, _) = classify(&s.kind, s.verdict.as_deref(), s.outcome.as_deref());
        if s.kind == "llm.call" {
            self.llm_calls
                .get_or_create(&VerdictLabel {
                    verdict: s.verdict.clone().unwrap_or_else(|| "none".into()),
                })
                .inc();
        }
        if s.kind == "tool.call" {
            self.calls
                .get_or_create(&VerdictLabel {
                    verdict: s.verdict.clone().unwrap_or_else(|| "none".into()),
                })
                .inc();
        }
        match category {
            Category::Hold => {
                self.holds.inc();
            }
            Category::Block => {
                self.blocks.inc();
            }
            // A server first seen (pending review) is no drift of an approved surface.
            Category::Drift if s.kind != "server.pending" => {
                self.drifts.inc();
            }
            Category::Quarantine => {
                self.quarantines.inc();
            }
            _ => {}
        }
    }

    /// The log's size as this gateway sees it.
    pub(crate) fn set_leaves(&self, size: u64) {
        self.leaves.set(size);
    }

    /// One alert sink's state as `/metrics` shows it.
    pub(crate) fn set_sink(&self, sink: SinkGauges) {
        let l = SinkLabel { sink: sink.name };
        self.sink_lag.get_or_create(&l).set(sink.lag);
        self.sink_delivered.get_or_create(&l).set(sink.delivered);
        self.sink_dead.get_or_create(&l).set(sink.dead_letters);
        self.sink_retrying
            .get_or_create(&l)
            .set(u64::from(sink.retrying));
    }

    /// The LLM judge's breaker as `/metrics` shows it.
    pub(crate) fn set_llm_judge(
        &self,
        state: interlock_llm::judge::BreakerState,
        consecutive_failures: u32,
    ) {
        use interlock_llm::judge::BreakerState as S;
        for s in [S::Closed, S::Open, S::HalfOpen] {
            self.llm_judge_breaker
                .get_or_create(&StateLabel {
                    state: s.as_str().into(),
                })
                .set(u64::from(s == state));
        }
        self.llm_judge_failures.set(u64::from(consecutive_failures));
    }

    /// Everything, in `format`.
    pub(crate) fn encode(&self, format: Exposition) -> Result<String, std::fmt::Error> {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(match format {
            Exposition::OpenMetrics => text,
            Exposition::PrometheusText => prometheus_text(&text),
        })
    }
}

/// The two text formats a scraper may ask for (`Accept`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exposition {
    /// `application/openmetrics-text; version=1.0.0`: what Prometheus asks
    /// for first, and `prometheus-client` writes.
    OpenMetrics,
    /// `text/plain; version=0.0.4`: what `promtool check metrics` and older
    /// scrapers read (`curl -H 'Accept: text/plain' … | promtool check metrics`).
    PrometheusText,
}

impl Exposition {
    /// The format an `Accept` header asks for: the Prometheus text format
    /// only when it names `text/plain` and not OpenMetrics (Prometheus names
    /// both, OpenMetrics first); otherwise, and by default, OpenMetrics.
    pub fn negotiate(accept: Option<&str>) -> Exposition {
        match accept {
            Some(a) if a.contains("text/plain") && !a.contains("application/openmetrics-text") => {
                Exposition::PrometheusText
            }
            _ => Exposition::OpenMetrics,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Exposition::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Exposition::PrometheusText => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// OpenMetrics text as the Prometheus text format 0.0.4 (issue 39 item 20):
/// there a counter's `# HELP`/`# TYPE` name its sample (`x_total`), not the
/// family (`x`), and `# UNIT` and `# EOF` do not exist. The samples are the
/// same lines.
fn prometheus_text(open_metrics: &str) -> String {
    let counters: std::collections::HashSet<&str> = open_metrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(open_metrics.len());
    for line in open_metrics.lines() {
        if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(name)
                .then(|| format!("{prefix}{name}_total {tail}"))
        });
        match renamed {
            Some(l) => out.push_str(&l),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    use super::*;

    /// `promtool check metrics` on what `/metrics` serves: its findings, or
    /// `None` when Debian's `prometheus` package (which ships promtool) is
    /// not installed here.
    fn promtool_findings(text: &str) -> Option<String> {
        let mut child = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        Some(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }

    #[test]
    fn prometheus_asks_for_open_metrics_and_text_plain_gets_the_text_format() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(
            Exposition::negotiate(Some(prometheus)),
            Exposition::OpenMetrics
        );
        assert_eq!(Exposition::negotiate(None), Exposition::OpenMetrics);
        assert_eq!(Exposition::negotiate(Some("*/*")), Exposition::OpenMetrics);
        assert_eq!(
            Exposition::negotiate(Some("text/plain")),
            Exposition::PrometheusText
        );
    }

    /// Issue 39 item 20: `promtool check metrics` reported "no help text"
    /// for `interlock_holds_total` and `interlock_quarantines_total`. Every
    /// family now passes it, with samples in every family.
    #[test]
    fn regression_issue_39_every_metric_family_passes_promtool() {
        let m = Metrics::default();
        m.decided(Duration::from_millis(3));
        m.appended(Duration::from_millis(1));
        m.set_leaves(7);
        m.set_sink(SinkGauges {
            name: "siem".into(),
            lag: 2,
            delivered: 5,
            dead_letters: 0,
            retrying: false,
        });
        let text = m.encode(Exposition::PrometheusText).unwrap();
        let Some(findings) = promtool_findings(&text) else {
            panic!("promtool is not installed (Debian: apt-get install prometheus)");
        };
        assert!(findings.trim().is_empty(), "promtool: {findings}\n{text}");
        for family in ["holds", "blocks", "drifts", "quarantines", "log_leaves"] {
            assert!(
                text.contains(&format!("# HELP interlock_{family}")),
                "{family}: {text}"
            );
        }
        // The OpenMetrics text Prometheus asks for keeps its own naming.
        let om = m.encode(Exposition::OpenMetrics).unwrap();
        assert!(om.contains("# TYPE interlock_holds counter"), "{om}");
        assert!(om.trim_end().ends_with("# EOF"), "{om}");
    }
}
