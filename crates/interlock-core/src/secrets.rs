//! Finding secrets in plan bodies (and, later, tool-call arguments and responses).
//!
//! A plan is stored, shown to reviewers, logged and exported in receipts, so a secret
//! inside one leaks to all of those places. Known formats are matched by pattern;
//! anything else that looks like key material is caught by an entropy rule tuned so
//! that the hex digests plans legitimately carry (`sha256:…`) do not trip it.
//! Findings never repeat the secret: they name the kind and where it is.

use regex::Regex;

use crate::canon::Value;
use crate::schema::{child_path, index_path};

/// A named pattern for one kind of secret.
#[derive(Clone, Debug)]
pub struct SecretPattern {
    pub name: String,
    pub regex: Regex,
}

/// The high-entropy rule: a token of at least `min_length` characters drawn from
/// the base64/base64url/hex alphabets, mixing letters and digits, whose Shannon
/// entropy is at least `bits_per_char`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EntropyRule {
    pub min_length: usize,
    pub bits_per_char: f64,
}

impl Default for EntropyRule {
    /// 4.2 bits/char sits above hex's ceiling of 4.0 (so digests pass) and below
    /// what random base64 of 24+ characters reaches (≈4.4–5.0).
    fn default() -> Self {
        EntropyRule {
            min_length: 24,
            bits_per_char: 4.2,
        }
    }
}

/// Where a secret was found and what kind it looks like.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretFinding {
    /// JSON path of the string (or key) that holds it.
    pub path: String,
    pub kind: String,
}

#[derive(Clone, Debug)]
pub struct SecretScanner {
    patterns: Vec<SecretPattern>,
    entropy: Option<EntropyRule>,
}

impl Default for SecretScanner {
    fn default() -> Self {
        SecretScanner::builtin()
    }
}

/// The built-in patterns: `(name, regex)`.
pub const BUILTIN_PATTERNS: &[(&str, &str)] = &[
    (
        "aws-access-key-id",
        r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?-u:\b)",
    ),
    (
        "aws-secret-access-key",
        r#"(?i)aws.{0,20}(?:secret|key).{0,20}['"=:\s]\s*[A-Za-z0-9/+=]{40}(?-u:\b)"#,
    ),
    ("gcp-api-key", r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}(?-u:\b)"),
    (
        "private-key",
        r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----",
    ),
    (
        "github-token",
        r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})(?-u:\b)",
    ),
    ("gitlab-token", r"(?-u:\b)glpat-[A-Za-z0-9_-]{20,}"),
    (
        "slack-token",
        r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}(?-u:\b)",
    ),
    (
        "stripe-secret-key",
        r"(?-u:\b)(?:sk|rk)_live_[A-Za-z0-9]{20,}(?-u:\b)",
    ),
    (
        "jwt",
        r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    (
        "bearer-token",
        r"(?i)(?-u:\b)bearer\s+[A-Za-z0-9\-._~+/]{20,}=*",
    ),
    (
        "basic-auth-in-url",
        r"(?i)(?-u:\b)[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]{3,}@",
    ),
];

impl SecretScanner {
    /// Built-in patterns and the default entropy rule.
    pub fn builtin() -> SecretScanner {
        let patterns = BUILTIN_PATTERNS
            .iter()
            .map(|(name, re)| SecretPattern {
                name: (*name).to_owned(),
                regex: Regex::new(re).expect("built-in secret patterns compile"),
            })
            .collect();
        SecretScanner {
            patterns,
            entropy: Some(EntropyRule::default()),
        }
    }

    /// Adds a deployment's own pattern.
    pub fn add_pattern(&mut self, pattern: SecretPattern) {
        self.patterns.push(pattern);
    }

    /// Replaces (or, with `None`, turns off) the entropy rule.
    pub fn set_entropy(&mut self, rule: Option<EntropyRule>) {
        self.entropy = rule;
    }

    pub fn patterns(&self) -> &[SecretPattern] {
        &self.patterns
    }

    pub fn entropy(&self) -> Option<EntropyRule> {
        self.entropy
    }

    /// The kind of the first secret found in `text`, if any.
    pub fn scan_str(&self, text: &str) -> Option<String> {
        if let Some(p) = self.patterns.iter().find(|p| p.regex.is_match(text)) {
            return Some(p.name.clone());
        }
        let rule = self.entropy?;
        token_runs(text, rule.min_length)
            .find(|r| looks_random(&text[r.clone()], rule))
            .map(|_| "high-entropy-string".to_owned())
    }

    /// Whether `token` (one run of token characters) trips the entropy rule —
    /// the rule alone, for a caller that has already matched the patterns
    /// against the whole text (running every pattern again per token was most
    /// of a response scan's time).
    pub fn looks_random(&self, token: &str) -> bool {
        self.entropy
            .is_some_and(|rule| token.len() >= rule.min_length && looks_random(token, rule))
    }

    /// Every string (and object key) in `value` that holds a secret.
    pub fn scan_value(&self, value: &Value, path: &str) -> Vec<SecretFinding> {
        let mut found = Vec::new();
        // An explicit stack: values are already depth-limited at intake, but a scan
        // must not be the thing that makes a deep value expensive.
        let mut stack = vec![(value, path.to_owned())];
        while let Some((v, p)) = stack.pop() {
            match v {
                Value::String(s) => {
                    if let Some(kind) = self.scan_str(s) {
                        found.push(SecretFinding { path: p, kind });
                    }
                }
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push((item, index_path(&p, i)));
                    }
                }
                Value::Object(map) => {
                    for (k, item) in map.iter().rev() {
                        let child = child_path(&p, k);
                        if let Some(kind) = self.scan_str(k) {
                            found.push(SecretFinding {
                                path: child.clone(),
                                kind,
                            });
                        }
                        stack.push((item, child));
                    }
                }
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
        found
    }
}

/// The maximal runs of token characters (`A–Z a–z 0–9 + / = _ -`, the
/// base64, base64url and hex alphabets) in `text` that are at least `min_len`
/// bytes long, as byte ranges: the candidates of the entropy rule.
///
/// A byte loop over a table: every argument string and every tool result goes
/// through here, and splitting by `char` (or a `[…]{24,}` regex, forward and
/// back) cost several times as much per byte. Token characters are ASCII, so a
/// run never splits a multi-byte character.
pub fn token_runs(text: &str, min_len: usize) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            if !TOKEN_BYTE[usize::from(b[i])] {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && TOKEN_BYTE[usize::from(b[i])] {
                i += 1;
            }
            if i - start >= min_len.max(1) {
                return Some(start..i);
            }
        }
        None
    })
}

/// Whether a byte is a token character ([`token_runs`]).
const TOKEN_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'-');
        c += 1;
    }
    t
};

fn looks_random(token: &str, rule: EntropyRule) -> bool {
    let has_digit = token.bytes().any(|b| b.is_ascii_digit());
    let has_alpha = token.bytes().any(|b| b.is_ascii_alphabetic());
    // Identifiers made of words (`my-service-name`) are low-entropy per character
    // anyway; the letter+digit mix and the entropy threshold keep them out.
    has_digit
        && has_alpha
        && !looks_like_path(token)
        && shannon_bits_per_char(token) >= rule.bits_per_char
}

/// A path such as `/tmp/.tmpLtKx0A/workspace/app/config` mixes a random temporary
/// name with words, which can push its entropy over the threshold. A path has at
/// least one segment that is a plain lower-case word; random base64 that happens to
/// contain `/` almost never does (≈0.4 chance per character of a lower-case letter).
fn looks_like_path(token: &str) -> bool {
    token.contains('/')
        && token
            .split('/')
            .any(|seg| seg.len() >= 3 && seg.bytes().all(|b| b.is_ascii_lowercase()))
}

/// Shannon entropy of the byte distribution of `s`, in bits per byte.
pub fn shannon_bits_per_char(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_runs_are_the_maximal_runs_a_split_by_char_gives() {
        for text in [
            "",
            "key=AKIAIOSFODNN7EXAMPLE; next",
            "naïve-token_with/slashes+and=pads é tail",
            "aaaa bbbbbbbb",
            "x",
        ] {
            for min in [1, 4, 8] {
                let by_char: Vec<&str> = text
                    .split(|c: char| {
                        !(c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-'))
                    })
                    .filter(|t| t.len() >= min)
                    .collect();
                let by_bytes: Vec<&str> = token_runs(text, min).map(|r| &text[r]).collect();
                assert_eq!(by_bytes, by_char, "{text:?} {min}");
            }
        }
    }

    #[test]
    fn finds_known_formats() {
        let s = SecretScanner::builtin();
        for (text, kind) in [
            ("key AKIAIOSFODNN7EXAMPLE here", "aws-access-key-id"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----\nabc", "private-key"),
            (
                "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
                "bearer-token",
            ),
            ("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "github-token"),
            ("xoxb-1234567890-abcdefghij", "slack-token"),
            ("token: glpat-xYz12AbCdEfGhIjKlMnO", "gitlab-token"),
            (
                "https://admin:hunter22@db.example.com/x",
                "basic-auth-in-url",
            ),
        ] {
            assert_eq!(s.scan_str(text).as_deref(), Some(kind), "{text}");
        }
    }

    #[test]
    fn entropy_rule_catches_random_tokens_but_not_digests_or_prose() {
        let s = SecretScanner::builtin();
        assert_eq!(
            s.scan_str("token=q8Zr3KxP0vLm7TqW2yNb5HcJ9dFs4GaE")
                .as_deref(),
            Some("high-entropy-string")
        );
        for benign in [
            "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "/usr/local/share/interlock/config/production-2026.toml",
            "/tmp/.tmpLtKx0A/workspace/app/config.toml",
            "/tmp/.tmpQ7ZmW3rX/data/workspace/notes-2026.txt",
            "Rotate the deployment of service-frontend-v2 in region eu-west-1",
            "10.2.0.1",
            "O'Brien",
        ] {
            assert_eq!(s.scan_str(benign), None, "{benign}");
        }
    }

    #[test]
    fn findings_name_the_path_not_the_secret() {
        let v = crate::canon::parse_json(br#"{"a":[{"b":"AKIAIOSFODNN7EXAMPLE"}]}"#).unwrap();
        let found = SecretScanner::builtin().scan_value(&v, "$.body");
        assert_eq!(
            found,
            vec![SecretFinding {
                path: "$.body.a[0].b".into(),
                kind: "aws-access-key-id".into()
            }]
        );
    }
}
