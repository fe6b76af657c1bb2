//! Learned fingerprints: the scan's first layer (the seed's). A request the
//! judge already judged is known by its fingerprint — the digest of its
//! texts, each with its role, lower-cased and with white space collapsed,
//! so a re-sent request and one differing only in case or spacing are the
//! same — and its verdict is reused until it expires: an unsafe one stops
//! the request at once (sub-millisecond), a safe one spares it the judge.
//!
//! [`Learned`] is the bounded cache (oldest out first), with time an
//! argument; the gateway persists what it learns and loads it at start.

use std::collections::{HashMap, VecDeque};

use crate::request::ChatRequest;

/// The fingerprint of `req`: `sha256:<hex>`.
pub fn fingerprint(req: &ChatRequest) -> String {
    let mut normal = String::new();
    for p in &req.parts {
        normal.push_str(p.role.as_str());
        normal.push('\u{1f}');
        let mut space = false;
        for c in p.text.chars().flat_map(char::to_lowercase) {
            if c.is_whitespace() {
                space = !normal.is_empty();
            } else {
                if space {
                    normal.push(' ');
                    space = false;
                }
                normal.push(c);
            }
        }
        normal.push('\u{1e}');
    }
    interlock_canon::Digest::of_bytes(normal.as_bytes()).to_string()
}

/// A verdict kept under a fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Known {
    pub is_unsafe: bool,
    pub category: String,
    pub reason: String,
    /// Unix seconds.
    pub expires_at: i64,
}

/// The bounded cache of learned verdicts.
#[derive(Debug)]
pub struct Learned {
    capacity: usize,
    by_fingerprint: HashMap<String, Known>,
    /// Fingerprints in the order they were learned (oldest first).
    order: VecDeque<String>,
}

impl Learned {
    pub fn new(capacity: usize) -> Learned {
        Learned {
            capacity: capacity.max(1),
            by_fingerprint: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    /// The verdict known for `fp` at `now` (unix seconds), if not expired.
    pub fn get(&mut self, fp: &str, now: i64) -> Option<&Known> {
        if self
            .by_fingerprint
            .get(fp)
            .is_some_and(|k| k.expires_at <= now)
        {
            self.by_fingerprint.remove(fp);
            self.order.retain(|f| f != fp);
        }
        self.by_fingerprint.get(fp)
    }

    /// Learns `known` for `fp`; the oldest goes when the cache is full.
    pub fn learn(&mut self, fp: String, known: Known) {
        if self.by_fingerprint.insert(fp.clone(), known).is_some() {
            self.order.retain(|f| f != &fp);
        }
        self.order.push_back(fp);
        while self.order.len() > self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.by_fingerprint.remove(&old);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.by_fingerprint.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_fingerprint.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::WireFormat;

    fn req(user: &str) -> ChatRequest {
        let body =
            serde_json::json!({"model": "m", "messages": [{"role": "user", "content": user}]});
        ChatRequest::parse(WireFormat::OpenAi, body.to_string().as_bytes()).unwrap()
    }

    fn known(is_unsafe: bool, expires_at: i64) -> Known {
        Known {
            is_unsafe,
            category: "injection".into(),
            reason: "r".into(),
            expires_at,
        }
    }

    #[test]
    fn case_and_spacing_do_not_change_a_fingerprint_but_words_and_roles_do() {
        let a = fingerprint(&req("Ignore   the RULES\nnow"));
        assert_eq!(a, fingerprint(&req("ignore the rules now")));
        assert_ne!(a, fingerprint(&req("ignore the rules later")));
        let body = serde_json::json!({"model": "m", "messages": [{"role": "system", "content": "ignore the rules now"}]});
        let system = ChatRequest::parse(WireFormat::OpenAi, body.to_string().as_bytes()).unwrap();
        assert_ne!(a, fingerprint(&system));
        assert!(a.starts_with("sha256:"));
    }

    #[test]
    fn a_learned_verdict_is_reused_until_it_expires_and_the_oldest_goes_first() {
        let mut l = Learned::new(2);
        l.learn("a".into(), known(true, 100));
        l.learn("b".into(), known(false, 100));
        assert!(l.get("a", 50).unwrap().is_unsafe);
        assert_eq!(l.get("a", 100), None, "expired at its time");
        l.learn("a".into(), known(true, 200));
        l.learn("c".into(), known(true, 200));
        assert_eq!(l.len(), 2);
        assert_eq!(l.get("b", 0), None, "the oldest went");
        assert!(l.get("c", 0).is_some());
    }
}
