//! The LLM path's decisions (issue 42): what a chat request asks a model to
//! read, and whether it may be sent.
//!
//! Interlock's LLM proxy is one layer of a runtime trust layer, beside the
//! tool-call path — not "an LLM firewall". The gateway's `llm` face relays
//! requests to providers; this crate decides, with no I/O and no clock, so
//! its verdicts are the same wherever they are computed and the corpus tests
//! hold them:
//!
//! - [`request`]: a chat request (OpenAI `chat/completions`, Anthropic
//!   `messages`) read into its model, whether it streams, and every text the
//!   model will read — system, user, assistant and tool results alike;
//! - [`scan`]: the scan's layers in order, each a stage of its own the
//!   gateway times, short-circuiting on the first hit: per-key policy
//!   (blocked keywords and topics, maximum length), then the inspection
//!   crate's rules (text aimed at the model, secrets), shared with the MCP
//!   path;
//! - [`fingerprint`]: the first layer, verdicts the judge gave before,
//!   known by the request's normalized fingerprint;
//! - [`answer`]: the model's answer scanned and redacted, whole or as a
//!   stream of server-sent events;
//! - [`patterns`]: the fourth layer, shapes of attack on a model written
//!   as paraphrase;
//! - [`key`]: an agent key's own settings on the proxy (allowed models,
//!   rate, quota; its prompt policy, fail mode and what a hit becomes),
//!   which can only narrow the gateway's;
//! - [`judge`]: the last layer, a model's verdict — what it is asked, the
//!   strict format of its answer, the fail modes and the circuit breaker.
#![forbid(unsafe_code)]

pub mod answer;
pub mod fingerprint;
pub mod judge;
pub mod key;
pub mod patterns;
pub mod request;
pub mod scan;

pub use request::{ChatRequest, Part, RequestError, WireFormat};
pub use scan::{Hit, Layer, PromptPolicy, run_layer};
