//! RFC 8785 (JCS) canonical bytes and their SHA-256 digest.
//!
//! Numbers beyond the safe-integer range or with a fraction are formatted by
//! `ryu-js` (ECMAScript `Number.prototype.toString`, which RFC 8785 §3.2.2.3
//! prescribes; `serde_json_canonicalizer` uses the same crate) and strings are escaped by
//! `serde_json` (whose compact escaping is RFC 8785's, and which
//! `serde_json_canonicalizer` itself uses), so those rules come from tested
//! implementations rather than being re-derived here.
//!
//! Structure (brackets, commas, member order) is written by this module.
//! Why not hand the whole value to `serde_json_canonicalizer`: it buffers
//! every object member into its own `Vec`, re-parses every key with
//! `serde_json` to sort it, and boxes a writer per write call — about 8–15×
//! slower than `serde_json::to_vec` on plan-sized documents. Our objects are
//! `BTreeMap`s whose keys are already unique and sorted by code point, which
//! equals RFC 8785's UTF-16 order unless a key holds a character ≥ U+E000
//! (only then do supplementary characters, encoded as surrogates D800–DFFF,
//! sort differently); in that rare case the members are re-sorted by UTF-16.
//! A property test checks this writer against `serde_json_canonicalizer::to_vec`
//! of the whole value.

use std::io::{self, Write};

use serde_json::ser::{CompactFormatter, Formatter as _};

use crate::digest::Digest;
use crate::value::{Number, Value};

/// The RFC 8785 canonical JSON bytes of `v`.
///
/// Infallible for a valid model: numbers are finite by construction and object
/// keys are distinct strings (hence distinct in UTF-16 too).
pub fn canonical_bytes(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_canonical(v, &mut out).expect("writing to a Vec cannot fail");
    out
}

/// [`canonical_bytes`] as a `String` (JCS output is UTF-8 JSON).
pub fn canonical_string(v: &Value) -> String {
    String::from_utf8(canonical_bytes(v)).expect("JCS output is UTF-8")
}

/// SHA-256 over the canonical bytes of `v`, streamed into the hasher (through
/// a small buffer, as the writer emits many one-byte pieces) so the canonical
/// text is never materialized as a whole.
pub fn digest(v: &Value) -> Digest {
    let mut w = io::BufWriter::with_capacity(
        8 * 1024,
        HashWriter(ring::digest::Context::new(&ring::digest::SHA256)),
    );
    write_canonical(v, &mut w).expect("hashing cannot fail");
    let hasher = match w.into_inner() {
        Ok(h) => h.0,
        Err(_) => unreachable!("hashing cannot fail"),
    };
    Digest::from_ring(hasher.finish())
}

/// Writes the RFC 8785 canonical form of `v` to `w`.
///
/// Errors only if `w` does.
pub fn write_canonical<W: Write + ?Sized>(v: &Value, w: &mut W) -> io::Result<()> {
    match v {
        Value::Null => w.write_all(b"null"),
        Value::Bool(true) => w.write_all(b"true"),
        Value::Bool(false) => w.write_all(b"false"),
        Value::Number(n) => write_number(*n, w),
        Value::String(s) => write_string(s, w),
        Value::Array(items) => {
            w.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                write_canonical(item, w)?;
            }
            w.write_all(b"]")
        }
        Value::Object(map) => {
            w.write_all(b"{")?;
            // UTF-8 lead bytes ≥ 0xEE start characters ≥ U+E000.
            if map.keys().any(|k| k.bytes().any(|b| b >= 0xEE)) {
                let mut members: Vec<_> = map.iter().collect();
                members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
                write_members(members.into_iter(), w)?;
            } else {
                write_members(map.iter(), w)?;
            }
            w.write_all(b"}")
        }
    }
}

fn write_members<'a, W: Write + ?Sized>(
    members: impl Iterator<Item = (&'a String, &'a Value)>,
    w: &mut W,
) -> io::Result<()> {
    for (i, (k, v)) in members.enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        write_string(k, w)?;
        w.write_all(b":")?;
        write_canonical(v, w)?;
    }
    Ok(())
}

fn write_number<W: Write + ?Sized>(n: Number, w: &mut W) -> io::Result<()> {
    match n.as_i64() {
        // ECMAScript prints integers below 1e21 as plain decimal digits;
        // within ±(2^53 − 1) that is exactly their integer formatting.
        Some(i) => CompactFormatter.write_i64(&mut WriteRef(w), i),
        None => w.write_all(ryu_js::Buffer::new().format_finite(n.as_f64()).as_bytes()),
    }
}

/// RFC 8785 §3.2.2.2 string escaping (`\"`, `\\`, `\b\f\n\r\t`, other
/// controls as lowercase `\u00xx`, nothing else) is exactly `serde_json`'s
/// compact escaping, which `serde_json_canonicalizer` itself builds on; calling
/// it directly skips that crate's per-write boxing.
fn write_string<W: Write + ?Sized>(s: &str, w: &mut W) -> io::Result<()> {
    use serde::Serializer as _;
    let mut ser = serde_json::Serializer::new(WriteRef(w));
    ser.serialize_str(s).map_err(io::Error::other)
}

/// Lets an unsized writer be passed where a sized one is needed.
struct WriteRef<'a, W: Write + ?Sized>(&'a mut W);

impl<W: Write + ?Sized> Write for WriteRef<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Adapts the hasher to `io::Write`, so the serializer can write into it.
struct HashWriter(ring::digest::Context);

impl Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.update(buf);
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
