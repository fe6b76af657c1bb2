//! A paginated listing read whole from one upstream (`prompts/list`,
//! `resources/list`, ...): the agent face's content listings and the pinned
//! listing both read with it, with the limits each is given.

use std::time::Duration;

use indexmap::IndexMap;
use serde_json::value::RawValue;

use super::{Connection, UpstreamError};

/// At most this many pages are read from one upstream for one listing.
pub const MAX_PAGES: usize = 32;

/// Every item of a paginated listing (`key` of each page), following
/// `nextCursor` up to [`MAX_PAGES`], at most `max_bytes` in all (so an upstream
/// cannot make the gateway gather an unbounded answer page by page).
pub async fn list_pages(
    conn: &Connection,
    method: &str,
    key: &str,
    max_bytes: usize,
    timeout: Duration,
) -> Result<Vec<Box<RawValue>>, UpstreamError> {
    let mut bytes = 0usize;
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor
            .as_ref()
            .map(|c| serde_json::value::to_raw_value(&serde_json::json!({ "cursor": c })))
            .transpose()
            .expect("a cursor serializes");
        let raw = conn.request(method, params.as_deref(), timeout).await?;
        bytes += raw.get().len();
        if bytes > max_bytes {
            return Err(UpstreamError::Unavailable(format!(
                "{method}: the listing exceeds {max_bytes} bytes across its pages"
            )));
        }
        // (`serde(flatten)` cannot hold raw values, hence a map.)
        let page: IndexMap<String, Box<RawValue>> =
            serde_json::from_str(raw.get()).map_err(|e| {
                UpstreamError::Unavailable(format!("{method} returned a malformed result: {e}"))
            })?;
        if let Some(list) = page.get(key) {
            let list: Vec<Box<RawValue>> = serde_json::from_str(list.get()).map_err(|e| {
                UpstreamError::Unavailable(format!("{method}: `{key}` is not a list: {e}"))
            })?;
            items.extend(list);
        }
        match page
            .get("nextCursor")
            .and_then(|c| serde_json::from_str::<String>(c.get()).ok())
        {
            Some(c) if !c.is_empty() => cursor = Some(c),
            _ => break,
        }
    }
    Ok(items)
}
