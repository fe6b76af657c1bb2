//! Roles: which exposed tools an agent key may see and call.
//!
//! A role is a list of globs over exposed tool names (`files__read_*`). The
//! built-in role `default` allows every served tool unless the config defines
//! it; a role the config does not know allows nothing (deny by default — a typo
//! in `--role` must not open everything).

use std::collections::BTreeMap;

use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;

/// What agents of one role may call.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleConfig {
    /// Globs over exposed tool names (`files__read_*`, `*`). A tool that matches
    /// none is neither listed nor callable for the role.
    pub tools: Vec<String>,
    /// The highest risk a call may have and run without a reviewer: `low`,
    /// `medium`, `high` (default) or `critical`. Riskier calls are held as plans.
    #[serde(default)]
    pub max_risk: Option<String>,
}

/// The role of a review-only reviewer key (`interlock reviewers add NAME
/// --scope review`, issue 22): CI's key. It reaches only
/// `POST /api/v1/servers/{name}/review` — it cannot read the inbox, submit a
/// decision or (being no agent key) call a tool.
pub const REVIEW_ONLY_ROLE: &str = "review";

/// The role of a metrics-only reviewer key: it reaches `GET /metrics` and
/// nothing else (not the reviewer API, not `/mcp`).
pub const METRICS_ONLY_ROLE: &str = "metrics";

/// The role of a full reviewer key: the reviewer API, `/metrics`, decisions.
pub const FULL_REVIEWER_ROLE: &str = "reviewer";

/// The roles a reviewer key may have; an agent key's come from the config.
pub const REVIEWER_ROLES: [&str; 3] = [FULL_REVIEWER_ROLE, REVIEW_ONLY_ROLE, METRICS_ONLY_ROLE];

/// The role every served tool is open to unless the config says otherwise.
pub const DEFAULT_ROLE: &str = "default";

/// One compiled glob.
#[derive(Clone, Debug)]
pub struct Glob(GlobMatcher);

impl Glob {
    pub fn new(pattern: &str) -> Result<Glob, globset::Error> {
        Ok(Glob(
            GlobBuilder::new(pattern)
                .literal_separator(false)
                .build()?
                .compile_matcher(),
        ))
    }

    pub fn is_match(&self, name: &str) -> bool {
        self.0.is_match(name)
    }
}

/// Every role, compiled.
#[derive(Clone, Debug, Default)]
pub struct Roles(BTreeMap<String, Vec<Glob>>);

impl Roles {
    /// Compiles the config's roles (already checked by the config loader) and
    /// adds `default` unless defined.
    pub fn new(config: &BTreeMap<String, RoleConfig>) -> Roles {
        let mut roles: BTreeMap<String, Vec<Glob>> = config
            .iter()
            .map(|(name, r)| {
                (
                    name.clone(),
                    r.tools.iter().filter_map(|g| Glob::new(g).ok()).collect(),
                )
            })
            .collect();
        roles
            .entry(DEFAULT_ROLE.to_owned())
            .or_insert_with(|| vec![Glob::new("*").expect("a valid glob")]);
        Roles(roles)
    }

    /// Whether `role` may see and call the exposed tool `tool`.
    pub fn allows(&self, role: &str, tool: &str) -> bool {
        self.0
            .get(role)
            .is_some_and(|globs| globs.iter().any(|g| g.is_match(tool)))
    }

    /// Whether the role is defined (or built in).
    pub fn knows(&self, role: &str) -> bool {
        self.0.contains_key(role)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_allow_by_glob_and_deny_unknown_roles() {
        let mut config = BTreeMap::new();
        config.insert(
            "reader".to_owned(),
            RoleConfig {
                tools: vec!["files__read_*".into(), "interlock__get_plan".into()],
                max_risk: None,
            },
        );
        let roles = Roles::new(&config);
        assert!(roles.allows("reader", "files__read_file"));
        assert!(!roles.allows("reader", "files__write_file"));
        assert!(roles.allows(DEFAULT_ROLE, "files__write_file"));
        assert!(!roles.allows("typo", "files__read_file"));
    }
}
