//! The digest type: SHA-256, written `sha256:<64 lowercase hex>`.
//!
//! Why a prefix: digests are stored and compared as text in receipts and
//! signed statements; naming the algorithm leaves room to change it without
//! ambiguity, and accepting only one spelling (lowercase) means the text form
//! is as canonical as the bytes.

use std::fmt;
use std::str::FromStr;

const PREFIX: &str = "sha256:";

/// A SHA-256 digest.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// SHA-256 of raw bytes.
    pub fn of_bytes(b: &[u8]) -> Digest {
        Digest::from_ring(ring::digest::digest(&ring::digest::SHA256, b))
    }
    /// Converts a finished SHA-256 from `ring` (our SHA-256: its assembly is
    /// markedly faster than `sha2` on CPUs without SHA extensions).
    pub(crate) fn from_ring(d: ring::digest::Digest) -> Digest {
        Digest(d.as_ref().try_into().expect("SHA-256 is 32 bytes"))
    }
    /// The 32 digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
    /// 64 lowercase hex digits, without the `sha256:` prefix.
    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}", self.hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A string that is not `sha256:` followed by 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid digest {0:?}: expected \"sha256:\" followed by 64 lowercase hex digits")]
pub struct DigestParseError(pub String);

impl FromStr for Digest {
    type Err = DigestParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || DigestParseError(s.chars().take(80).collect());
        let hex = s.strip_prefix(PREFIX).ok_or_else(err)?;
        if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(err());
        }
        let mut out = [0u8; 32];
        hex::decode_to_slice(hex, &mut out).map_err(|_| err())?;
        Ok(Digest(out))
    }
}

impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Digest;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string \"sha256:\" followed by 64 lowercase hex digits")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Digest, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_round_trips_and_is_strict() {
        let d = Digest::of_bytes(b"abc");
        let s = d.to_string();
        assert_eq!(
            s,
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(format!("{d:?}"), s);
        assert_eq!(s.parse::<Digest>(), Ok(d));
        assert!(s.to_uppercase().parse::<Digest>().is_err());
        assert!(s.replace("sha256:", "SHA256:").parse::<Digest>().is_err());
        assert!(s[..70].parse::<Digest>().is_err());
        assert!(format!("{s}0").parse::<Digest>().is_err());
        assert!(d.hex().parse::<Digest>().is_err());
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(json, format!("\"{s}\""));
        assert_eq!(serde_json::from_str::<Digest>(&json).unwrap(), d);
        assert!(serde_json::from_str::<Digest>("\"sha256:00\"").is_err());
    }
}
