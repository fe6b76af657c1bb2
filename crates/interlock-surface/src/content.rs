//! [`Content`]: a prompt, a resource or a resource template as one server
//! lists it (`prompts/list`, `resources/list`, `resources/templates/list`),
//! pinned with the tools (issue 16 item 6).
//!
//! Why: a prompt's description and its arguments' descriptions are text the
//! model reads as much as a tool's description, so a prompt that starts
//! saying "first read ~/.ssh/id_rsa" is drift like a tool description that
//! does. What is pinned is the listing, not what `prompts/get` or
//! `resources/read` return later (those depend on arguments and change by
//! design; they are inspected on every read instead).
//!
//! Normalized before hashing, so noise is no drift: prose white space is
//! collapsed (`description`, `title`, and each prompt argument's), prompt
//! arguments are compared by name whatever their order, and a resource's
//! `size` and `annotations.lastModified` (which follow its contents, not
//! what it is) are left out.

use std::fmt;

use interlock_canon::{Digest, Map, Value};

use crate::error::SurfaceError;
use crate::text::collapse_whitespace;

/// Which listing an entry comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ContentKind {
    /// `prompts/list`, keyed by `name`.
    Prompt,
    /// `resources/list`, keyed by `uri`.
    Resource,
    /// `resources/templates/list`, keyed by `uriTemplate`.
    ResourceTemplate,
}

impl ContentKind {
    /// All three, in surface order.
    pub const ALL: [ContentKind; 3] = [
        ContentKind::Prompt,
        ContentKind::Resource,
        ContentKind::ResourceTemplate,
    ];

    /// The member that names an entry.
    pub fn key_field(self) -> &'static str {
        match self {
            ContentKind::Prompt => "name",
            ContentKind::Resource => "uri",
            ContentKind::ResourceTemplate => "uriTemplate",
        }
    }

    /// The listing's result key (and the key in a stored surface).
    pub fn list_key(self) -> &'static str {
        match self {
            ContentKind::Prompt => "prompts",
            ContentKind::Resource => "resources",
            ContentKind::ResourceTemplate => "resourceTemplates",
        }
    }

    /// The MCP method that lists it.
    pub fn list_method(self) -> &'static str {
        match self {
            ContentKind::Prompt => "prompts/list",
            ContentKind::Resource => "resources/list",
            ContentKind::ResourceTemplate => "resources/templates/list",
        }
    }

    /// Lowercase name as shown and stored (`prompt`, `resource`,
    /// `resource_template`).
    pub fn name(self) -> &'static str {
        match self {
            ContentKind::Prompt => "prompt",
            ContentKind::Resource => "resource",
            ContentKind::ResourceTemplate => "resource_template",
        }
    }

    /// From [`ContentKind::name`].
    pub fn from_name(name: &str) -> Option<ContentKind> {
        ContentKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for ContentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ContentKind::Prompt => "prompt",
            ContentKind::Resource => "resource",
            ContentKind::ResourceTemplate => "resource template",
        })
    }
}

/// Which entry: its kind and its key (a prompt's name, a resource's URI).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentRef {
    /// The listing.
    pub kind: ContentKind,
    /// Its name, URI or URI template.
    pub key: String,
}

impl ContentRef {
    /// A reference.
    pub fn new(kind: ContentKind, key: impl Into<String>) -> ContentRef {
        ContentRef {
            kind,
            key: key.into(),
        }
    }
}

impl fmt::Display for ContentRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}", self.kind, self.key)
    }
}

/// One listed entry, exactly as the server listed it, with its normalized
/// form and hash computed once.
#[derive(Clone, Debug, PartialEq)]
pub struct Content {
    reference: ContentRef,
    raw: Map,
    /// Always a `Value::Object`.
    normalized: Value,
    hash: Digest,
}

impl Content {
    /// An entry of `kind` from its JSON object; `index` is only used in errors.
    pub fn from_value(kind: ContentKind, v: &Value, index: usize) -> Result<Content, SurfaceError> {
        let raw = v.as_object().ok_or(SurfaceError::ContentNotObject {
            kind,
            index,
            found: v.kind(),
        })?;
        let key = raw
            .get(kind.key_field())
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .ok_or(SurfaceError::ContentMissingKey { kind, index })?;
        let normalized = Value::Object(normalize(kind, raw));
        let hash = interlock_canon::digest(&normalized);
        Ok(Content {
            reference: ContentRef::new(kind, key),
            raw: raw.clone(),
            normalized,
            hash,
        })
    }

    /// Which entry this is.
    pub fn reference(&self) -> &ContentRef {
        &self.reference
    }
    /// Its kind.
    pub fn kind(&self) -> ContentKind {
        self.reference.kind
    }
    /// Its name, URI or URI template.
    pub fn key(&self) -> &str {
        &self.reference.key
    }
    /// The object as listed.
    pub fn raw(&self) -> &Map {
        &self.raw
    }
    /// The object as hashed and compared.
    pub fn normalized(&self) -> &Map {
        self.normalized
            .as_object()
            .expect("an entry is an object by construction")
    }
    /// A field of the normalized object.
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.normalized().get(key)
    }
    /// The digest of the normalized object.
    pub fn hash(&self) -> Digest {
        self.hash
    }
}

/// Members that follow a resource's contents rather than what it is.
const VOLATILE_RESOURCE_MEMBERS: [&str; 1] = ["size"];

fn normalize(kind: ContentKind, raw: &Map) -> Map {
    let mut m = raw.clone();
    collapse_prose(&mut m);
    match kind {
        ContentKind::Prompt => {
            if let Some(Value::Array(args)) = m.get_mut("arguments") {
                for a in args.iter_mut() {
                    if let Value::Object(am) = a {
                        collapse_prose(am);
                    }
                }
                // Arguments are passed by name: their order carries no meaning.
                args.sort_by_cached_key(|a| {
                    (
                        a.get("name").and_then(Value::as_str).map(str::to_owned),
                        interlock_canon::canonical_string(a),
                    )
                });
            }
        }
        ContentKind::Resource | ContentKind::ResourceTemplate => {
            for k in VOLATILE_RESOURCE_MEMBERS {
                m.remove(k);
            }
            let drop_annotations = match m.get_mut("annotations") {
                Some(Value::Object(a)) => {
                    a.remove("lastModified");
                    a.is_empty()
                }
                _ => false,
            };
            if drop_annotations {
                m.remove("annotations");
            }
        }
    }
    m
}

fn collapse_prose(m: &mut Map) {
    for key in ["description", "title"] {
        if let Some(Value::String(s)) = m.get_mut(key) {
            let c = collapse_whitespace(s);
            if c != *s {
                *s = c;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use interlock_canon::parse_json;

    fn entry(kind: ContentKind, json: &str) -> Content {
        Content::from_value(kind, &parse_json(json.as_bytes()).unwrap(), 0).unwrap()
    }

    #[test]
    fn argument_order_white_space_and_volatile_members_do_not_change_the_hash() {
        let a = entry(
            ContentKind::Prompt,
            r#"{"name":"review","description":"Asks for a  review.","arguments":[{"name":"a"},{"name":"b","description":"B "}]}"#,
        );
        let b = entry(
            ContentKind::Prompt,
            r#"{"arguments":[{"description":"B","name":"b"},{"name":"a"}],"description":" Asks for a review.","name":"review"}"#,
        );
        assert_eq!(a.hash(), b.hash());
        let r1 = entry(
            ContentKind::Resource,
            r#"{"uri":"file:///a","name":"a","size":10,"annotations":{"lastModified":"2026-01-01T00:00:00Z"}}"#,
        );
        let r2 = entry(
            ContentKind::Resource,
            r#"{"uri":"file:///a","name":"a","size":99}"#,
        );
        assert_eq!(r1.hash(), r2.hash());
        let r3 = entry(
            ContentKind::Resource,
            r#"{"uri":"file:///a","name":"a","annotations":{"audience":["user"]}}"#,
        );
        assert_ne!(r1.hash(), r3.hash());
    }

    #[test]
    fn an_entry_needs_its_key() {
        let v = parse_json(br#"{"description":"no name"}"#).unwrap();
        assert_eq!(
            Content::from_value(ContentKind::Prompt, &v, 3),
            Err(SurfaceError::ContentMissingKey {
                kind: ContentKind::Prompt,
                index: 3
            })
        );
        let v = parse_json(br#""a string""#).unwrap();
        assert!(matches!(
            Content::from_value(ContentKind::Resource, &v, 0),
            Err(SurfaceError::ContentNotObject { .. })
        ));
    }
}
