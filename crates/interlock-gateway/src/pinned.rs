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

use std::collections::BTreeMap;

use interlock_surface::ContentKind;
use serde_json::value::RawValue;

use crate::config::{Limits, PinPart, PinSet};
use crate::upstream::{Connection, METHOD_NOT_FOUND, ServerHello, UpstreamError};
use interlock_trust::pins::Listing;

/// The listing of `pin`'s parts that `hello` says the server offers, with
/// `tools` (already listed) and its `instructions`.
pub async fn listing(
    conn: &Connection,
    hello: Option<&ServerHello>,
    pin: &PinSet,
    limits: &Limits,
    instructions: Option<&str>,
    tools: Vec<Box<RawValue>>,
) -> Result<Listing, UpstreamError> {
    let offers = |capability: &str| hello.is_some_and(|h| h.offers(capability));
    let mut kinds = Vec::new();
    if pin.pins(PinPart::Prompts) && offers("prompts") {
        kinds.push(ContentKind::Prompt);
    }
    if pin.pins(PinPart::Resources) && offers("resources") {
        kinds.extend([ContentKind::Resource, ContentKind::ResourceTemplate]);
    }
    let mut content = BTreeMap::new();
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
            Err(e) => {
                return Err(UpstreamError::Unavailable(format!(
                    "{}: {e}",
                    kind.list_method()
                )));
            }
        };
        content.insert(kind, items);
    }
    Ok(Listing {
        instructions: instructions
            .filter(|_| pin.pins(PinPart::Instructions))
            .map(str::to_owned),
        tools,
        content,
        launch: None,
    })
}
