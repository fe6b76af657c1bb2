//! What the fuzz targets share.
#![forbid(unsafe_code)]

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The nesting depth of arrays and objects in a JSON text (a scalar is 0), or
/// `None` if serde_json does not accept it (its recursion limit is 128).
///
/// Counted as serde_json reads the text, not on a `serde_json::Value`: a
/// `Value` keeps only the last of duplicate keys, so the depth of an earlier
/// duplicate member would be lost.
pub fn json_depth(text: &[u8]) -> Option<usize> {
    serde_json::from_slice::<Depth>(text).ok().map(|d| d.0)
}

struct Depth(usize);

impl<'de> Deserialize<'de> for Depth {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Depth, D::Error> {
        d.deserialize_any(DepthVisitor)
    }
}

struct DepthVisitor;

impl<'de> Visitor<'de> for DepthVisitor {
    type Value = Depth;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Depth, E> {
        Ok(Depth(0))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Depth, E> {
        Ok(Depth(0))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Depth, E> {
        Ok(Depth(0))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Depth, E> {
        Ok(Depth(0))
    }
    fn visit_str<E>(self, _: &str) -> Result<Depth, E> {
        Ok(Depth(0))
    }
    fn visit_unit<E>(self) -> Result<Depth, E> {
        Ok(Depth(0))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Depth, A::Error> {
        let mut max = 0;
        while let Some(Depth(d)) = seq.next_element()? {
            max = max.max(d);
        }
        Ok(Depth(1 + max))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Depth, A::Error> {
        let mut max = 0;
        while let Some((IgnoredAny, Depth(d))) = map.next_entry()? {
            max = max.max(d);
        }
        Ok(Depth(1 + max))
    }
}
