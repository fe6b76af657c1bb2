//! Behavioural envelopes (issue 16, item 2): what an approved MCP tool was
//! seen to do, learned from the calls the gateway forwards while it is
//! approved, then fixed by its hash and checked against every later call.
//!
//! A tool's definition can stay byte-for-byte the same while its behaviour
//! reaches further (a new host, a secret in its results). Surface pinning
//! cannot see that; the envelope can. It records the hosts and path roots the
//! arguments and the results name ([`facts`]), the PII and secret kinds the
//! response scan finds in results (`interlock_inspect::DataClass`), the
//! largest result, `structuredContent`'s members and their JSON types, and
//! the error rate. [`Envelope::check_arguments`] runs before a call is
//! forwarded (a finding holds the call); [`Envelope::check_result`] and
//! [`OutputSchema::check`] after (a finding withholds the result).
//!
//! Pure: no I/O, no async, no clock. The gateway keeps envelopes, decides
//! when learning ends, stores them and writes the evidence.
#![forbid(unsafe_code)]

mod envelope;
pub mod facts;
mod finding;
mod schema;

pub use envelope::{Bounds, Envelope, EnvelopeError, FORMAT, SIZE_SLACK_BYTES, WidenError};
pub use facts::{ArgFacts, JsonType, ResultFacts};
pub use finding::{EnvelopeFinding, FindingKind, RecentErrors, Stage};
pub use schema::{OutputSchema, SchemaError};
