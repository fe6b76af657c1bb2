//! What a server lists of what its `pin` list pins (issue 16 item 6): the
//! instructions (when pinned), its tools, and each pinned content listing it
//! offers (prompts; resources and their templates).
//!
//! One function for the two places that must see the same surface: the
//! gateway's re-list (`gateway.rs`, before `Pins::observe`) and the read-only
//! boundary review (`review::observe`, issue 22). A pinned listing that fails
//! fails the whole observation, as a failed `tools/list` does: half a surface
//! is never pinned nor reviewed. One exception (issue 45 item 6): a listing
//! the server answers with "method not found" although it declared the
//! capability (a server with resources and no templates, say) is a listing it
//! does not offer — empty, as if undeclared — not a reason to take the whole
//! server down. Any other error names the listing that failed.
//!
//! A second exception, for the gateway's re-list only: a content listing the
//! server answers with any other error, when the gateway holds the server's
//! last answer to it, keeps that answer in its place ([`Kept`]) and reports
//! the listing as stale ([`StaleListing`]). The surface is then the one last
//! pinned for that listing — the same bytes, so no drift is made up — and the
//! server's tools stay served. Without a last answer (the first listing since
//! the gateway started) half a surface is still never pinned.

use std::collections::BTreeMap;

use interlock_surface::ContentKind;
use serde_json::value::RawValue;

use crate::config::{Limits, PinPart, PinSet};
use crate::upstream::{Connection, METHOD_NOT_FOUND, ServerHello, StaleListing, UpstreamError};
use interlock_trust::pins::{Listing, ServerView};

/// What may stand in for a content listing that answers with an error.
pub enum Kept<'a> {
    /// Nothing: any error fails the observation (the boundary review).
    Nothing,
    /// The server's last listings as the gateway serves them (its view), if
    /// it has one.
    LastListed(Option<&'a ServerView>),
}

/// A server's listing, and which of its content listings are kept from last
/// time because they answered with an error now.
pub struct Observed {
    pub listing: Listing,
    pub stale: Vec<StaleListing>,
}

/// The listing of `pin`'s parts that `hello` says the server offers, with
/// `tools` (already listed) and its `instructions`.
pub async fn listing(
    conn: &Connection,
    hello: Option<&ServerHello>,
    pin: &PinSet,
    limits: &Limits,
    instructions: Option<&str>,
    tools: Vec<Box<RawValue>>,
    kept: Kept<'_>,
) -> Result<Observed, UpstreamError> {
    let offers = |capability: &str| hello.is_some_and(|h| h.offers(capability));
    let mut kinds = Vec::new();
    if pin.pins(PinPart::Prompts) && offers("prompts") {
        kinds.push(ContentKind::Prompt);
    }
    if pin.pins(PinPart::Resources) && offers("resources") {
        kinds.extend([ContentKind::Resource, ContentKind::ResourceTemplate]);
    }
    let mut content = BTreeMap::new();
    let mut stale = Vec::new();
    for kind in kinds {
        let listed = crate::upstream::pages::list_pages(
            conn,
            kind.list_method(),
            kind.list_key(),
            limits.max_upstream_message_bytes,
            limits.upstream_timeout(),
        )
        .await;
        let items = match listed {
            Ok(items) => items,
            Err(e) if e.rpc_code() == Some(METHOD_NOT_FOUND) => {
                tracing::info!(
                    method = kind.list_method(),
                    "the server declared the capability but does not offer this listing: \
                     pinned as empty"
                );
                Vec::new()
            }
            Err(e @ UpstreamError::Rpc(_)) => {
                let last = match &kept {
                    Kept::LastListed(Some(view)) => view.last_listing(kind),
                    Kept::LastListed(None) | Kept::Nothing => None,
                };
                let Some(last) = last else {
                    return Err(UpstreamError::Unavailable(format!(
                        "{}: {e}",
                        kind.list_method()
                    )));
                };
                tracing::warn!(
                    method = kind.list_method(),
                    error = %e,
                    "a listing answered with an error: its last answer is kept"
                );
                stale.push(StaleListing {
                    method: kind.list_method(),
                    error: e.to_string(),
                });
                last.to_vec()
            }
            Err(e) => {
                return Err(UpstreamError::Unavailable(format!(
                    "{}: {e}",
                    kind.list_method()
                )));
            }
        };
        content.insert(kind, items);
    }
    Ok(Observed {
        listing: Listing {
            instructions: instructions
                .filter(|_| pin.pins(PinPart::Instructions))
                .map(str::to_owned),
            tools,
            content,
            launch: None,
        },
        stale,
    })
}
