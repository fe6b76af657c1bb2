//! `[llm]` and `[llm.providers.NAME]`.
//!
//! ```toml
//! [llm]
//! timeout_secs = 300
//! on_hit = "block"                  # or "hold": a reviewer decides
//! hold_secs = 20                    # how long a held request waits
//! [llm.policy]                      # every agent key's prompt policy
//! blocked_keywords = ["project falcon"]
//! blocked_topics = { weapons = ["nerve agent"] }
//! max_chars = 200000
//! [llm.judge]                       # the last layer: a model's verdict
//! model = "llama3.2"                # served by one of the providers
//! timeout_ms = 5000
//! fail_mode = "fail_closed"         # fail_open, fail_open_safe
//! [llm.providers.local]             # any OpenAI-compatible endpoint
//! base_url = "http://127.0.0.1:11434/v1"
//! api_key_keychain = "ollama"       # or api_key_env = "VAR"; or neither
//! models = ["llama3.2"]
//! ```

use std::collections::BTreeMap;

use interlock_llm::PromptPolicy;
use interlock_llm::judge::FailMode;
use serde::Deserialize;

/// What is wrong with `[llm]`, as one sentence.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LlmConfigError(pub String);

/// `[llm]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    /// How long a provider may take to answer (a streamed answer: to send
    /// its last byte).
    pub timeout_secs: u64,
    /// What a request a layer stopped becomes: `block` (refused) or `hold`
    /// (a reviewer decides); a key's `llm_policy.on_hit` overrides it.
    pub on_hit: String,
    /// How long a held request waits for its decision before it is
    /// answered "held — retry when approved".
    pub hold_secs: u64,
    pub policy: PolicyConfig,
    /// The judge, when one is configured.
    pub judge: Option<JudgeConfig>,
    /// What is done with what the answer scan finds.
    pub response: ResponseConfig,
    pub providers: BTreeMap<String, ProviderConfig>,
}

/// `[llm.response]`: each finding of the answer scan, `redact` (default) or
/// `allow` (reported on the leaf, left in the answer).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResponseConfig {
    pub pii: String,
    pub secrets: String,
    pub injection: String,
}

impl Default for ResponseConfig {
    fn default() -> Self {
        ResponseConfig {
            pii: "redact".into(),
            secrets: "redact".into(),
            injection: "redact".into(),
        }
    }
}

impl ResponseConfig {
    /// The inspection crate's policy (checked when the config was read).
    pub fn policy(&self) -> interlock_inspect::ResponsePolicy {
        let action = |s: &str| s.parse().unwrap_or(interlock_inspect::Action::Redact);
        interlock_inspect::ResponsePolicy {
            pii: action(&self.pii),
            secrets: action(&self.secrets),
            injection: action(&self.injection),
            scanner: None,
        }
    }

    fn check(&self) -> Result<(), LlmConfigError> {
        for (name, v) in [
            ("pii", &self.pii),
            ("secrets", &self.secrets),
            ("injection", &self.injection),
        ] {
            if !matches!(v.as_str(), "allow" | "redact") {
                return Err(LlmConfigError(format!(
                    "llm.response.{name}: {v:?} is not allow or redact"
                )));
            }
        }
        Ok(())
    }
}

/// `[llm.judge]`: the model asked last, and what its failure means.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeConfig {
    /// A model one of `[llm.providers.*]` serves.
    pub model: String,
    #[serde(default = "default_judge_timeout")]
    pub timeout_ms: u64,
    /// `fail_closed` (default), `fail_open` or `fail_open_safe`.
    #[serde(default = "default_fail_mode")]
    pub fail_mode: String,
    /// Consecutive failures that open the breaker.
    #[serde(default = "default_breaker_failures")]
    pub breaker_failures: u32,
    /// How long the open breaker skips the judge.
    #[serde(default = "default_breaker_open_secs")]
    pub breaker_open_secs: u64,
    /// How long a verdict is remembered by the request's fingerprint (0:
    /// nothing is learned).
    #[serde(default = "default_learn_secs")]
    pub learn_secs: u64,
    /// The most fingerprints kept (the oldest go first).
    #[serde(default = "default_learn_max")]
    pub learn_max: u32,
}

fn default_learn_secs() -> u64 {
    24 * 3600
}
fn default_learn_max() -> u32 {
    10_000
}

fn default_judge_timeout() -> u64 {
    5000
}
fn default_fail_mode() -> String {
    "fail_closed".into()
}
fn default_breaker_failures() -> u32 {
    5
}
fn default_breaker_open_secs() -> u64 {
    60
}

impl JudgeConfig {
    /// The fail mode (checked when the config was read).
    pub fn fail_mode(&self) -> FailMode {
        FailMode::parse(&self.fail_mode).unwrap_or_default()
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            timeout_secs: 300,
            on_hit: "block".into(),
            hold_secs: 20,
            policy: PolicyConfig::default(),
            judge: None,
            response: ResponseConfig::default(),
            providers: BTreeMap::new(),
        }
    }
}

/// `[llm.policy]`: the prompt policy every agent key is held to.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    pub blocked_keywords: Vec<String>,
    pub blocked_topics: BTreeMap<String, Vec<String>>,
    pub max_chars: Option<usize>,
}

impl PolicyConfig {
    pub fn prompt_policy(&self) -> PromptPolicy {
        PromptPolicy {
            blocked_keywords: self.blocked_keywords.clone(),
            blocked_topics: self.blocked_topics.clone(),
            max_chars: self.max_chars,
        }
    }
}

/// Which wire format a provider speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderFormat {
    /// OpenAI's `chat/completions` (OpenAI, Groq, Ollama, Gemini's
    /// OpenAI endpoint, vLLM, …).
    #[default]
    Openai,
    /// Anthropic's `messages`.
    Anthropic,
    /// Google's Gemini API, `models/{model}:generateContent`.
    Gemini,
}

impl ProviderFormat {
    /// The wire format agents speak to reach this provider's models.
    pub fn wire(self) -> interlock_llm::WireFormat {
        match self {
            ProviderFormat::Openai => interlock_llm::WireFormat::OpenAi,
            ProviderFormat::Anthropic => interlock_llm::WireFormat::Anthropic,
            ProviderFormat::Gemini => interlock_llm::WireFormat::Gemini,
        }
    }
}

/// `[llm.providers.NAME]`: a model provider's endpoint.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The API's base (`https://api.openai.com/v1`,
    /// `https://api.anthropic.com/v1`); requests go to
    /// `<base_url>/chat/completions` or `<base_url>/messages`.
    pub base_url: String,
    /// `openai` (default), `anthropic` or `gemini`.
    #[serde(default)]
    pub format: ProviderFormat,
    #[serde(default)]
    pub api_key_keychain: Option<String>,
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The key, once resolved (never read from the file).
    #[serde(skip)]
    pub api_key: Option<String>,
    /// The models it serves, by the name agents ask for.
    pub models: Vec<String>,
}

impl LlmConfig {
    pub fn check(&self) -> Result<(), LlmConfigError> {
        let mut served_by: BTreeMap<&str, &str> = BTreeMap::new();
        for (name, p) in &self.providers {
            let err = |what: String| Err(LlmConfigError(format!("llm.providers.{name}: {what}")));
            crate::outbound_url::check(&p.base_url, "api_key_keychain / api_key_env")
                .or_else(err)?;
            if p.api_key_keychain.is_some() && p.api_key_env.is_some() {
                return err("name the key once: api_key_keychain or api_key_env".into());
            }
            if p.models.is_empty() {
                return err("models: name at least one model it serves".into());
            }
            for m in &p.models {
                if let Some(other) = served_by.insert(m, name) {
                    return err(format!(
                        "model {m:?} is also served by llm.providers.{other}: a model has one provider"
                    ));
                }
            }
        }
        if let Some(judge) = &self.judge {
            let err = |what: String| Err(LlmConfigError(format!("llm.judge: {what}")));
            match self.provider_for(&judge.model) {
                None => {
                    return err(format!(
                        "model {:?} is served by none of [llm.providers.*]",
                        judge.model
                    ));
                }
                Some((name, p)) if p.format != ProviderFormat::Openai => {
                    return err(format!(
                        "the judge is asked in OpenAI's format, and llm.providers.{name} speaks {:?}",
                        p.format
                    ));
                }
                Some(_) => {}
            }
            if FailMode::parse(&judge.fail_mode).is_none() {
                return err(format!(
                    "fail_mode {:?} is not fail_closed, fail_open or fail_open_safe",
                    judge.fail_mode
                ));
            }
            if judge.timeout_ms == 0 || judge.breaker_failures == 0 || judge.breaker_open_secs == 0
            {
                return err(
                    "timeout_ms, breaker_failures and breaker_open_secs are at least 1".into(),
                );
            }
        }
        self.response.check()?;
        if interlock_llm::key::OnHit::parse(&self.on_hit).is_none() {
            return Err(LlmConfigError(format!(
                "llm.on_hit: {:?} is not block or hold",
                self.on_hit
            )));
        }
        if self.timeout_secs == 0 {
            return Err(LlmConfigError("llm.timeout_secs must be at least 1".into()));
        }
        Ok(())
    }

    /// What a stopped request becomes (checked when the config was read).
    pub fn on_hit(&self) -> interlock_llm::key::OnHit {
        interlock_llm::key::OnHit::parse(&self.on_hit).unwrap_or_default()
    }

    /// The provider serving `model`.
    pub fn provider_for(&self, model: &str) -> Option<(&str, &ProviderConfig)> {
        self.providers
            .iter()
            .find(|(_, p)| p.models.iter().any(|m| m == model))
            .map(|(n, p)| (n.as_str(), p))
    }

    pub fn has_keychain_references(&self) -> bool {
        self.providers
            .values()
            .any(|p| p.api_key_keychain.is_some())
    }

    /// Fills each provider's key from the keychain (`lookup`, the host's)
    /// or the environment; a missing key is an error naming the provider.
    pub fn resolve_secrets(
        &mut self,
        lookup: &mut dyn FnMut(&str) -> Result<Option<String>, String>,
    ) -> Result<(), LlmConfigError> {
        for (name, p) in &mut self.providers {
            if let Some(token) = &p.api_key_keychain {
                let key = lookup(token)
                    .map_err(|e| {
                        LlmConfigError(format!(
                            "llm.providers.{name}: the key from the keychain (token {token}): {e}"
                        ))
                    })?
                    .ok_or_else(|| {
                        LlmConfigError(format!(
                            "llm.providers.{name}: the keychain has no token {token}"
                        ))
                    })?;
                p.api_key = Some(key);
            }
        }
        Ok(())
    }

    /// Reads `api_key_env` references (at start: a missing variable is an
    /// error then, not a failed request later).
    pub fn resolve_env(&mut self) -> Result<(), LlmConfigError> {
        for (name, p) in &mut self.providers {
            if let Some(var) = &p.api_key_env
                && p.api_key.is_none()
            {
                match std::env::var(var) {
                    Ok(v) if !v.is_empty() => p.api_key = Some(v),
                    _ => {
                        return Err(LlmConfigError(format!(
                            "llm.providers.{name}: the environment variable {var} (api_key_env) \
                             is not set"
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_text: &str) -> Result<LlmConfig, String> {
        let c: LlmConfig = toml::from_str(toml_text).map_err(|e| e.to_string())?;
        c.check().map_err(|e| e.to_string())?;
        Ok(c)
    }

    #[test]
    fn a_provider_routes_its_models() {
        let c = parse(
            "[providers.local]\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodels = [\"llama3.2\"]\n",
        )
        .unwrap();
        assert_eq!(c.provider_for("llama3.2").unwrap().0, "local");
        assert!(c.provider_for("gpt-4o").is_none());
    }

    #[test]
    fn unsafe_or_ambiguous_providers_are_refused_with_the_reason() {
        let e =
            parse("[providers.a]\nbase_url = \"http://api.example.com/v1\"\nmodels = [\"m\"]\n")
                .unwrap_err();
        assert!(e.contains("plain http only to a loopback address"), "{e}");
        let e = parse(
            "[providers.a]\nbase_url = \"https://u:p@api.example.com/v1\"\nmodels = [\"m\"]\n",
        )
        .unwrap_err();
        assert!(e.contains("no credentials in the URL"), "{e}");
        let e = parse(
            "[providers.a]\nbase_url = \"https://a.example/v1\"\nmodels = [\"m\"]\n\
             [providers.b]\nbase_url = \"https://b.example/v1\"\nmodels = [\"m\"]\n",
        )
        .unwrap_err();
        assert!(e.contains("a model has one provider"), "{e}");
        let e =
            parse("[providers.a]\nbase_url = \"https://a.example/v1\"\nmodels = []\n").unwrap_err();
        assert!(e.contains("at least one model"), "{e}");
        let e = parse("[providers.a]\nbase_url = \"https://a.example/v1\"\nmodels = [\"m\"]\napi_key = \"sk-in-the-file\"\n")
            .unwrap_err();
        assert!(e.contains("unknown field"), "{e}");
        let e = parse("[judge]\nmodel = \"m\"\n[providers.a]\nbase_url = \"https://a.example/v1\"\nmodels = [\"n\"]\n")
            .unwrap_err();
        assert!(e.contains("served by none"), "{e}");
        let e = parse("[judge]\nmodel = \"m\"\nfail_mode = \"open\"\n[providers.a]\nbase_url = \"https://a.example/v1\"\nmodels = [\"m\"]\n")
            .unwrap_err();
        assert!(e.contains("fail_open_safe"), "{e}");
    }
}
