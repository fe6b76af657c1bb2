//! A `tools/call`'s params, parsed just enough to route it: the members kept
//! raw (forwarded as received, only `name` rewritten), and its arguments read
//! strictly once the tool is known.

use indexmap::IndexMap;
use interlock_canon::{self as canon, Value};
use serde_json::value::RawValue;

use super::stop::Stop;

/// A `tools/call`'s params, parsed just enough to route it: the members kept
/// raw (forwarded as received, `name` rewritten).
pub(crate) struct Request {
    pub members: IndexMap<String, Box<RawValue>>,
    pub name: String,
}

impl Request {
    pub(crate) fn parse(params: Option<&RawValue>) -> Result<Request, &'static str> {
        let members = params
            .and_then(|p| serde_json::from_str::<IndexMap<String, Box<RawValue>>>(p.get()).ok())
            .ok_or("tools/call needs params {name, arguments}")?;
        let name = members
            .get("name")
            .and_then(|n| serde_json::from_str::<String>(n.get()).ok())
            .ok_or("tools/call needs params.name (a string)")?;
        Ok(Request { members, name })
    }

    pub(crate) fn arguments(&self) -> Option<&RawValue> {
        self.members.get("arguments").map(|a| &**a)
    }

    /// The arguments as one value (none given: an empty object), strictly read.
    pub(crate) fn read_arguments(&self) -> Result<Value, Stop> {
        match self.arguments() {
            None => Ok(Value::Object(canon::Map::new())),
            Some(a) => canon::parse_json(a.get().as_bytes()).map_err(|e| {
                Stop::InvalidParams(format!("the arguments are not acceptable JSON: {e}"))
            }),
        }
    }
}
