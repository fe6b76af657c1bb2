//! Running a boundary review (issue 22): every configured upstream observed at
//! once, read-only, and each surface classified against approved baselines —
//! local ones with `interlock_trust::review::classify`, or a team gateway's over
//! its reviewer API.
//!
//! Why here and not in `interlock-trust`: observing means connecting to the
//! upstreams (the gateway's MCP client) and asking a team gateway means HTTP;
//! the classification itself, the lockfile and the reports are trust's.
//!
//! - [`observe`]: one upstream connected read-only, its surface listed.

pub mod observe;

use interlock_surface::{DriftPolicy, Surface, surface_hash};
use interlock_trust::review::{Review, ServerReview, classify};

/// Where the approved surfaces come from.
#[derive(Clone, Debug)]
pub enum Baselines {
    /// Surfaces by server (a verified lockfile's, or a data directory's
    /// approved baselines); `kind` is `lockfile` or `data_dir`.
    Local {
        kind: &'static str,
        location: String,
        surfaces: std::collections::BTreeMap<String, Surface>,
    },
    /// A team gateway's reviewer API classifies against its baselines
    /// (`POST /api/v1/servers/{name}/review`).
    Gateway(crate::client::ReviewerClient),
}

/// Why a review could not even start.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("no server named `{0}` in the configuration")]
    UnknownServer(String),
}

/// Reviews the configured servers (`only` those, if given): observes them
/// all at once, read-only, then classifies each against `baselines` with
/// `policy` (a team gateway uses its own). An approved server no longer
/// configured is reported as removed (when reviewing them all).
pub async fn review(
    config: &crate::GatewayConfig,
    only: &[String],
    baselines: &Baselines,
    policy: &DriftPolicy,
    confiner: &interlock_sandbox::Confiner,
) -> Result<Review, ReviewError> {
    let started = std::time::Instant::now();
    for name in only {
        if !config.servers.contains_key(name) {
            return Err(ReviewError::UnknownServer(name.clone()));
        }
    }
    let names: Vec<&String> = config
        .servers
        .keys()
        .filter(|n| only.is_empty() || only.contains(n))
        .collect();
    let observed = futures_util::future::join_all(
        names
            .iter()
            .map(|n| observe::observe(n, &config.servers[n.as_str()], &config.limits, confiner)),
    )
    .await;
    let mut servers = Vec::new();
    for (name, result) in names.iter().zip(observed) {
        let name = name.as_str();
        let review = match (result, baselines) {
            (Err(e), Baselines::Local { surfaces, .. }) => ServerReview::not_observed(
                name,
                surfaces.get(name).map(|s| surface_hash(s).to_string()),
                e.to_string(),
            ),
            (Err(e), Baselines::Gateway(_)) => {
                ServerReview::not_observed(name, None, e.to_string())
            }
            (Ok(o), Baselines::Local { surfaces, .. }) => {
                let mut r = classify(name, surfaces.get(name), &o.surface, policy);
                r.observe_ms = o.elapsed.as_secs_f64() * 1e3;
                r
            }
            (Ok(o), Baselines::Gateway(client)) => {
                let body = interlock_canon::to_serde_json(&o.surface.to_value());
                let key = format!(
                    "interlock-review-{}",
                    interlock_canon::digest(&o.surface.to_value())
                );
                match client
                    .review(name, &serde_json::json!({"surface": body}), &key)
                    .await
                {
                    Ok(v) => match serde_json::from_value::<ServerReview>(v) {
                        Ok(mut r) => {
                            r.observe_ms = o.elapsed.as_secs_f64() * 1e3;
                            r
                        }
                        Err(e) => ServerReview::not_observed(
                            name,
                            None,
                            format!("the gateway's review answer is malformed: {e}"),
                        ),
                    },
                    Err(e) => ServerReview::not_observed(
                        name,
                        None,
                        format!("the gateway could not review it: {e}"),
                    ),
                }
            }
        };
        servers.push(review);
    }
    let (kind, location) = match baselines {
        Baselines::Local {
            kind,
            location,
            surfaces,
        } => {
            if only.is_empty() {
                for (name, s) in surfaces {
                    if !config.servers.contains_key(name) {
                        servers.push(ServerReview::removed(name, surface_hash(s).to_string()));
                    }
                }
            }
            (kind.to_string(), location.clone())
        }
        Baselines::Gateway(c) => ("gateway".to_owned(), c.origin()),
    };
    Ok(Review {
        baseline: kind,
        baseline_location: location,
        servers,
        total_ms: started.elapsed().as_secs_f64() * 1e3,
    })
}
