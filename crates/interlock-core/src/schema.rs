//! Reading typed fields out of the canonical value model while collecting every
//! problem with its JSON path, so one `plan check` names all the mistakes at once
//! instead of the first.

use std::collections::BTreeSet;

use crate::canon::{Map, Value};

/// One schema problem: where it is and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// JSON path, e.g. `$.body.stages[0].action`.
    pub path: String,
    pub message: String,
}

/// A reader over one object that remembers which keys were read, so unknown keys can
/// be reported (typos such as `precondition` must not silently drop a check).
pub(crate) struct ObjectReader<'a> {
    map: &'a Map,
    path: String,
    read: BTreeSet<&'a str>,
}

impl<'a> ObjectReader<'a> {
    /// Starts reading `value` at `path`; reports an error if it is not an object.
    pub fn new(
        value: &'a Value,
        path: &str,
        errors: &mut Vec<SchemaError>,
    ) -> Option<ObjectReader<'a>> {
        match value {
            Value::Object(map) => Some(ObjectReader {
                map,
                path: path.to_owned(),
                read: BTreeSet::new(),
            }),
            other => {
                errors.push(SchemaError {
                    path: path.to_owned(),
                    message: format!("must be an object, found {}", other.kind()),
                });
                None
            }
        }
    }

    pub fn path_of(&self, key: &str) -> String {
        child_path(&self.path, key)
    }

    /// The raw value of `key`, marking it read.
    pub fn get(&mut self, key: &'a str) -> Option<&'a Value> {
        self.read.insert(key);
        self.map.get(key)
    }

    /// A required, non-empty string.
    pub fn string(&mut self, key: &'a str, errors: &mut Vec<SchemaError>) -> Option<String> {
        match self.get(key) {
            None => {
                errors.push(self.error(key, format!("missing required field `{key}`")));
                None
            }
            Some(v) => self.non_empty_string(key, v, errors),
        }
    }

    /// An optional string; present means non-empty.
    pub fn opt_string(
        &mut self,
        key: &'a str,
        errors: &mut Vec<SchemaError>,
    ) -> Option<Option<String>> {
        match self.get(key) {
            None => Some(None),
            Some(v) => self.non_empty_string(key, v, errors).map(Some),
        }
    }

    /// An optional object; absent is an empty map.
    pub fn opt_object(&mut self, key: &'a str, errors: &mut Vec<SchemaError>) -> Option<Map> {
        match self.get(key) {
            None => Some(Map::new()),
            Some(Value::Object(m)) => Some(m.clone()),
            Some(other) => {
                errors.push(self.error(
                    key,
                    format!("`{key}` must be an object, found {}", other.kind()),
                ));
                None
            }
        }
    }

    /// An optional array; absent is empty.
    pub fn opt_array(
        &mut self,
        key: &'a str,
        errors: &mut Vec<SchemaError>,
    ) -> Option<&'a [Value]> {
        match self.get(key) {
            None => Some(&[]),
            Some(Value::Array(items)) => Some(items),
            Some(other) => {
                errors.push(self.error(
                    key,
                    format!("`{key}` must be an array, found {}", other.kind()),
                ));
                None
            }
        }
    }

    /// Reports every key that was never read, unless `allowed` says it is fine.
    pub fn finish(self, errors: &mut Vec<SchemaError>, allowed: impl Fn(&str) -> bool) {
        for key in self.map.keys() {
            if !self.read.contains(key.as_str()) && !allowed(key) {
                errors.push(SchemaError {
                    path: child_path(&self.path, key),
                    message: format!("unknown field `{key}`"),
                });
            }
        }
    }

    pub fn error(&self, key: &str, message: String) -> SchemaError {
        SchemaError {
            path: self.path_of(key),
            message,
        }
    }

    fn non_empty_string(
        &self,
        key: &str,
        v: &Value,
        errors: &mut Vec<SchemaError>,
    ) -> Option<String> {
        match v {
            Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
            Value::String(_) => {
                errors.push(self.error(key, format!("`{key}` must not be empty")));
                None
            }
            other => {
                errors.push(self.error(
                    key,
                    format!("`{key}` must be a string, found {}", other.kind()),
                ));
                None
            }
        }
    }
}

/// `$.a` + `b` → `$.a.b`; keys that are not identifiers are quoted: `$.a["x y"]`.
pub fn child_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        format!("{parent}.{key}")
    } else {
        format!("{parent}[{}]", serde_json::Value::String(key.to_owned()))
    }
}

/// `$.a` + 3 → `$.a[3]`.
pub fn index_path(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}
