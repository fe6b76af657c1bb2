//! Why a listing is not a surface ([`SurfaceError`]). Its own module because the
//! tool listing ([`crate::surface`]) and the content listings ([`crate::content`])
//! both report it, and the surface holds the content.

use crate::content::ContentKind;

/// Why a `tools/list` result is not a surface.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SurfaceError {
    /// The result is neither `{"tools": [...]}` nor an array of tools.
    #[error("tools/list result must be an object with a \"tools\" array (found {found})")]
    NotAToolsList {
        /// JSON type found.
        found: &'static str,
    },
    /// `tools[index]` is not an object.
    #[error("tools[{index}] is not an object (found {found})")]
    ToolNotObject {
        /// Position in the `tools` array.
        index: usize,
        /// JSON type found.
        found: &'static str,
    },
    /// `tools[index]` has no `name`, or a non-string one.
    #[error("tools[{index}] has no string \"name\"")]
    MissingName {
        /// Position in the `tools` array.
        index: usize,
    },
    /// `tools[index].name` is the empty string.
    #[error("tools[{index}] has an empty \"name\"")]
    EmptyName {
        /// Position in the `tools` array.
        index: usize,
    },
    /// A prompt, resource or resource template entry is not an object.
    #[error("{}[{index}] is not an object (found {found})", kind.list_key())]
    ContentNotObject {
        /// Which listing.
        kind: ContentKind,
        /// Position in it.
        index: usize,
        /// JSON type found.
        found: &'static str,
    },
    /// An entry has no (non-empty) string `name` / `uri` / `uriTemplate`.
    #[error("{}[{index}] has no non-empty string {:?}", kind.list_key(), kind.key_field())]
    ContentMissingKey {
        /// Which listing.
        kind: ContentKind,
        /// Position in it.
        index: usize,
    },
    /// Two entries of one listing share a key.
    #[error("duplicate {kind} {key:?} in {}", kind.list_key())]
    DuplicateContent {
        /// Which listing.
        kind: ContentKind,
        /// The shared name or URI.
        key: String,
    },
    /// A listing (`prompts`, `resources`, …) is not an array.
    #[error("{} must be an array (found {found})", kind.list_key())]
    ContentNotAList {
        /// Which listing.
        kind: ContentKind,
        /// JSON type found.
        found: &'static str,
    },
    /// Two tools share a name.
    #[error("duplicate tool name {name:?} (tools[{first}] and tools[{second}])")]
    DuplicateName {
        /// The name.
        name: String,
        /// Position of the first tool with it.
        first: usize,
        /// Position of the second.
        second: usize,
    },
}
