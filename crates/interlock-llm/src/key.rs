//! An agent key's own settings on the LLM proxy, set through the admin API
//! (issue 42) and kept by the store as two JSON objects it does not read:
//!
//! - [`KeyLimits`] (`llm_limits`): which models the key may ask for, and its
//!   own rate and monthly quota of requests, counted apart from its tool
//!   calls;
//! - [`KeyPolicy`] (`llm_policy`): its blocked keywords and topics (added to
//!   the gateway's `[llm.policy]`, never replacing them), a maximum length
//!   (the smaller of the two wins), the judge's fail mode for its requests,
//!   whether a stopped request is refused or held for a reviewer, and
//!   whether its leaves keep the prompt's text.
//!
//! Both are parsed strictly: an unknown field, a wrong type or an empty
//! name is an error naming the field, so an admin's typo never turns a
//! setting off.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::judge::FailMode;
use crate::scan::PromptPolicy;

/// What a request a layer stopped becomes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnHit {
    /// Refused, nothing sent (the default).
    #[default]
    Block,
    /// Held for a reviewer as a one-stage `llm.permit` plan: sent once a
    /// reviewer approves these exact bytes.
    Hold,
}

impl OnHit {
    pub fn parse(s: &str) -> Option<OnHit> {
        match s {
            "block" => Some(OnHit::Block),
            "hold" => Some(OnHit::Hold),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            OnHit::Block => "block",
            OnHit::Hold => "hold",
        }
    }
}

/// `llm_limits`: what a key may ask of the proxy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyLimits {
    /// The models it may ask for (`None`: every model the gateway serves).
    pub models: Option<Vec<String>>,
    /// Requests a minute (a burst of as many).
    pub rate_per_minute: Option<i64>,
    /// Requests a calendar month (UTC).
    pub monthly_quota: Option<i64>,
}

/// `llm_policy`: what a key's prompts are held to, beyond the gateway's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyPolicy {
    pub blocked_keywords: Vec<String>,
    pub blocked_topics: BTreeMap<String, Vec<String>>,
    pub max_chars: Option<usize>,
    /// The judge's fail mode for this key's requests (`None`: the
    /// gateway's).
    pub fail_mode: Option<FailMode>,
    /// `None`: the gateway's `[llm] on_hit`.
    pub on_hit: Option<OnHit>,
    /// Whether this key's `llm.call` leaves keep the texts of its prompts
    /// (off by default: a leaf names the request by its digest).
    pub keep_prompt_text: bool,
}

/// Why a key's settings were refused: the field and what is wrong.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct SettingsError(pub String);

fn object<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>, SettingsError> {
    v.as_object()
        .ok_or_else(|| SettingsError(format!("{what}: a JSON object")))
}

fn names(v: &Value, what: &str) -> Result<Vec<String>, SettingsError> {
    let bad = || {
        SettingsError(format!(
            "{what}: an array of non-empty strings (≤ 200 bytes)"
        ))
    };
    let list = v.as_array().ok_or_else(bad)?;
    if list.len() > 1000 {
        return Err(SettingsError(format!("{what}: at most 1000 entries")));
    }
    list.iter()
        .map(|s| {
            s.as_str()
                .map(str::trim)
                .filter(|s| !s.is_empty() && s.len() <= 200)
                .map(str::to_owned)
                .ok_or_else(bad)
        })
        .collect()
}

fn positive(v: &Value, what: &str) -> Result<Option<i64>, SettingsError> {
    match v {
        Value::Null => Ok(None),
        v => v
            .as_i64()
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or_else(|| SettingsError(format!("{what}: a whole number above 0, or null"))),
    }
}

impl KeyLimits {
    /// Reads `llm_limits`; `null` is no limits.
    pub fn from_json(v: &Value) -> Result<KeyLimits, SettingsError> {
        if v.is_null() {
            return Ok(KeyLimits::default());
        }
        let mut out = KeyLimits::default();
        for (k, v) in object(v, "llm_limits")? {
            match k.as_str() {
                "models" if v.is_null() => out.models = None,
                "models" => out.models = Some(names(v, "llm_limits.models")?),
                "rate_per_minute" => {
                    out.rate_per_minute = positive(v, "llm_limits.rate_per_minute")?;
                }
                "monthly_quota" => out.monthly_quota = positive(v, "llm_limits.monthly_quota")?,
                other => {
                    return Err(SettingsError(format!(
                        "llm_limits: unknown field {other:?} (models, rate_per_minute, monthly_quota)"
                    )));
                }
            }
        }
        Ok(out)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "models": self.models,
            "rate_per_minute": self.rate_per_minute,
            "monthly_quota": self.monthly_quota,
        })
    }

    /// Whether the key may ask for `model`.
    pub fn allows(&self, model: &str) -> bool {
        self.models
            .as_ref()
            .is_none_or(|m| m.iter().any(|x| x == model))
    }
}

impl KeyPolicy {
    /// Reads `llm_policy`; `null` is the gateway's policy alone.
    pub fn from_json(v: &Value) -> Result<KeyPolicy, SettingsError> {
        if v.is_null() {
            return Ok(KeyPolicy::default());
        }
        let mut out = KeyPolicy::default();
        for (k, v) in object(v, "llm_policy")? {
            match k.as_str() {
                "blocked_keywords" => {
                    out.blocked_keywords = names(v, "llm_policy.blocked_keywords")?;
                }
                "blocked_topics" => {
                    for (topic, phrases) in object(v, "llm_policy.blocked_topics")? {
                        if topic.trim().is_empty() || topic.len() > 100 {
                            return Err(SettingsError(
                                "llm_policy.blocked_topics: a topic's name is 1 to 100 bytes"
                                    .into(),
                            ));
                        }
                        let phrases =
                            names(phrases, &format!("llm_policy.blocked_topics.{topic}"))?;
                        out.blocked_topics.insert(topic.clone(), phrases);
                    }
                }
                "max_chars" => {
                    out.max_chars = positive(v, "llm_policy.max_chars")?
                        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
                }
                "fail_mode" if v.is_null() => out.fail_mode = None,
                "fail_mode" => {
                    out.fail_mode =
                        Some(v.as_str().and_then(FailMode::parse).ok_or_else(|| {
                            SettingsError(
                                "llm_policy.fail_mode: fail_closed, fail_open or fail_open_safe"
                                    .into(),
                            )
                        })?);
                }
                "on_hit" if v.is_null() => out.on_hit = None,
                "on_hit" => {
                    out.on_hit =
                        Some(v.as_str().and_then(OnHit::parse).ok_or_else(|| {
                            SettingsError("llm_policy.on_hit: block or hold".into())
                        })?);
                }
                "keep_prompt_text" => {
                    out.keep_prompt_text = v.as_bool().ok_or_else(|| {
                        SettingsError("llm_policy.keep_prompt_text: true or false".into())
                    })?;
                }
                other => {
                    return Err(SettingsError(format!(
                        "llm_policy: unknown field {other:?} (blocked_keywords, blocked_topics, \
                         max_chars, fail_mode, on_hit, keep_prompt_text)"
                    )));
                }
            }
        }
        Ok(out)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "blocked_keywords": self.blocked_keywords,
            "blocked_topics": self.blocked_topics,
            "max_chars": self.max_chars,
            "fail_mode": self.fail_mode.map(FailMode::as_str),
            "on_hit": self.on_hit.map(OnHit::as_str),
            "keep_prompt_text": self.keep_prompt_text,
        })
    }

    /// The gateway's policy with this key's added: its keywords and topics
    /// beside the gateway's (a topic both name blocks both lists' phrases),
    /// and the smaller maximum length. A key's policy can only narrow.
    pub fn narrow(&self, base: &PromptPolicy) -> PromptPolicy {
        let mut out = base.clone();
        out.blocked_keywords
            .extend(self.blocked_keywords.iter().cloned());
        for (topic, phrases) in &self.blocked_topics {
            out.blocked_topics
                .entry(topic.clone())
                .or_default()
                .extend(phrases.iter().cloned());
        }
        out.max_chars = match (base.max_chars, self.max_chars) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_strictly_and_name_the_field() {
        let l = KeyLimits::from_json(&json!({"models": ["gpt-4o-mini"], "rate_per_minute": 5}))
            .unwrap();
        assert!(l.allows("gpt-4o-mini"));
        assert!(!l.allows("gpt-4o"));
        assert_eq!(l.rate_per_minute, Some(5));
        assert!(KeyLimits::from_json(&Value::Null).unwrap().allows("any"));
        let e = KeyLimits::from_json(&json!({"model": ["x"]})).unwrap_err();
        assert!(e.0.contains("unknown field \"model\""), "{e}");
        let e = KeyLimits::from_json(&json!({"rate_per_minute": 0})).unwrap_err();
        assert!(e.0.contains("rate_per_minute"), "{e}");
        let e = KeyLimits::from_json(&json!({"models": [""]})).unwrap_err();
        assert!(e.0.contains("non-empty"), "{e}");
        let back = KeyLimits::from_json(&l.to_json()).unwrap();
        assert_eq!(back, l);
    }

    #[test]
    fn a_keys_policy_narrows_the_gateways_and_never_widens_it() {
        let base = PromptPolicy {
            blocked_keywords: vec!["falcon".into()],
            blocked_topics: BTreeMap::from([("weapons".into(), vec!["nerve agent".into()])]),
            max_chars: Some(1000),
        };
        let key = KeyPolicy::from_json(&json!({
            "blocked_keywords": ["osprey"],
            "blocked_topics": {"weapons": ["pipe bomb"], "payroll": ["salary band"]},
            "max_chars": 5000,
            "fail_mode": "fail_open_safe",
            "on_hit": "hold",
        }))
        .unwrap();
        let p = key.narrow(&base);
        assert_eq!(p.blocked_keywords, vec!["falcon", "osprey"]);
        assert_eq!(
            p.blocked_topics["weapons"],
            vec!["nerve agent", "pipe bomb"]
        );
        assert_eq!(p.blocked_topics["payroll"], vec!["salary band"]);
        assert_eq!(p.max_chars, Some(1000), "the smaller length wins");
        assert_eq!(key.fail_mode, Some(FailMode::OpenSafe));
        assert_eq!(key.on_hit, Some(OnHit::Hold));
        assert_eq!(KeyPolicy::from_json(&key.to_json()).unwrap(), key);
        let e = KeyPolicy::from_json(&json!({"on_hit": "ask"})).unwrap_err();
        assert!(e.0.contains("block or hold"), "{e}");
        let e = KeyPolicy::from_json(&json!({"fail_mode": "open"})).unwrap_err();
        assert!(e.0.contains("fail_open_safe"), "{e}");
        let e = KeyPolicy::from_json(&json!({"keep_prompt_text": "yes"})).unwrap_err();
        assert!(e.0.contains("true or false"), "{e}");
    }
}
