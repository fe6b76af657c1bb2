//! The LLM path's providers (issue 42): `[llm]` in `gateway.toml` — which
//! provider serves which model, its key (from the OS keychain or the
//! environment, never the file), the prompt policy — and the one HTTP client
//! that relays requests to them. The agent face's `llm` folder judges each
//! request ([`interlock_llm`]) and relays it through here.

pub mod config;
pub mod fingerprints;
pub mod judge;
pub(crate) mod per_key;
pub mod provider;
