//! Injection and exfiltration wording in text a model will read (tool
//! descriptions, server instructions, schema descriptions).
//!
//! These are heuristics: they name known tool-poisoning patterns so that a
//! reviewer sees them, and so that a drift carrying them is rated Critical.
//! Drift only reports findings that the *new* text has and the old did not.

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

/// What kind of suspicious wording.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    /// "ignore all previous instructions" and the like.
    InstructionOverride,
    /// "do not tell the user", "without informing the user", "hide this from the user".
    Concealment,
    /// Mentions the system prompt.
    SystemPrompt,
    /// Pseudo-tags models are trained to heed: `<IMPORTANT>`, `<SYSTEM>`, …
    ImperativeTag,
    /// Secrets on disk: `~/.ssh`, `id_rsa`, `.env`, cloud credentials, MCP configs.
    SensitivePath,
    /// "send / upload / post … to http…".
    Exfiltration,
    /// "Before using this tool, read / pass / send …": a hidden step demanded
    /// of the model.
    CoercedStep,
    /// A URL to a host not in the scanner's known hosts.
    UnknownUrl,
    /// A long base64 run (an encoded payload).
    Base64Blob,
    /// Zero-width, bidi-control or Unicode tag characters (hidden text).
    HiddenCharacters,
}

impl FindingKind {
    /// Whether this finding alone quarantines: injection, exfiltration or
    /// concealment wording. A URL to an unknown host is a new link, which a
    /// reviewer must see (held) but which is not by itself an attack.
    pub fn quarantines(self) -> bool {
        !matches!(self, FindingKind::UnknownUrl)
    }

    /// Stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::InstructionOverride => "instruction_override",
            FindingKind::Concealment => "concealment",
            FindingKind::SystemPrompt => "system_prompt",
            FindingKind::ImperativeTag => "imperative_tag",
            FindingKind::SensitivePath => "sensitive_path",
            FindingKind::Exfiltration => "exfiltration",
            FindingKind::CoercedStep => "coerced_step",
            FindingKind::UnknownUrl => "unknown_url",
            FindingKind::Base64Blob => "base64_blob",
            FindingKind::HiddenCharacters => "hidden_characters",
        }
    }
}

/// One suspicious match: its kind and the matched text (hidden characters
/// written as `U+XXXX`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Finding {
    /// The kind.
    pub kind: FindingKind,
    /// The matched text, at most 80 characters.
    pub excerpt: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}", self.kind.name(), self.excerpt)
    }
}

/// The scanner's configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scanner {
    /// Hosts whose URLs are not findings (a host matches itself and its
    /// subdomains). Hosts already in the baseline text never count either,
    /// since only findings new to the observed text are reported.
    pub known_hosts: Vec<String>,
}

fn re(p: &str) -> Regex {
    Regex::new(p).expect("static regex")
}

static PATTERNS: LazyLock<Vec<(FindingKind, Regex)>> = LazyLock::new(|| {
    vec![
        (
            FindingKind::InstructionOverride,
            re(
                r"(?i)(?-u:\b)(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|previous|prior|above|earlier|preceding|other|your|of|these|those|system)\s+){0,4}(?:instructions|directions|rules|guidelines|prompts?|guardrails)(?-u:\b)",
            ),
        ),
        (
            FindingKind::Concealment,
            re(
                r"(?i)(?-u:\b)(?:(?:do\s+not|don'?t|never|must\s+not|without)\s+(?:tell|telling|inform|informing|mention|mentioning|notify|notifying|alert|alerting|show|showing|reveal|revealing|let)(?-u:\b)[^.\n]{0,40}?(?-u:\b)user(?-u:\b)|(?:hide|conceal|keep)(?-u:\b)[^.\n]{0,40}?(?-u:\b)from\s+the\s+user(?-u:\b))",
            ),
        ),
        (
            FindingKind::SystemPrompt,
            re(r"(?i)(?-u:\b)system\s+(?:prompt|message|instructions)(?-u:\b)"),
        ),
        (
            FindingKind::ImperativeTag,
            re(r"(?i)<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|critical)\s*>"),
        ),
        (
            FindingKind::SensitivePath,
            re(
                r#"(?i)(?:~/\.ssh(?-u:\b)|\.ssh/|(?-u:\b)id_(?:rsa|dsa|ecdsa|ed25519)(?-u:\b)|(?:^|[\s/'"`(~])\.env(?-u:\b)|/etc/(?:passwd|shadow)(?-u:\b)|\.aws/credentials|\.netrc(?-u:\b)|\.npmrc(?-u:\b)|\.pgpass(?-u:\b)|\.kube/config|\.docker/config\.json|(?-u:\b)mcp\.json(?-u:\b)|claude_desktop_config|\.gnupg(?-u:\b))"#,
            ),
        ),
        (
            FindingKind::Exfiltration,
            re(
                r"(?i)(?-u:\b)(?:send|upload|post|forward|transmit|exfiltrate|leak)(?-u:\b)(?:[^.\n]|\.\S){0,160}?(?-u:\b)https?://",
            ),
        ),
        (
            FindingKind::CoercedStep,
            re(
                r"(?i)(?-u:\b)(?:before|prior\s+to|after)\s+(?:using|calling|invoking|running)\s+(?:this|the|any|every)\s+tools?(?-u:\b)[^\n]{0,80}?(?-u:\b)(?:read|open|cat|load|pass|send|include|attach|upload|append)(?-u:\b)",
            ),
        ),
        (FindingKind::Base64Blob, re(r"[A-Za-z0-9+/_-]{40,}={0,2}")),
    ]
});

static URL: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)(?-u:\b)(?:https?|ftp|wss?)://(?:[^/\s@]*@)?([^/\s:?#'"<>)\]]+)"#));

/// The URLs in `text`, lowercased and without trailing punctuation.
pub(crate) fn urls(text: &str) -> Vec<String> {
    URL.captures_iter(text)
        .map(|c| {
            c[0].trim_end_matches(['.', ',', ';', ':', '!', '?'])
                .to_ascii_lowercase()
        })
        .collect()
}

pub(crate) fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{00AD}' | '\u{E0000}'..='\u{E007F}')
}

fn excerpt(s: &str) -> String {
    s.chars().take(80).collect()
}

fn looks_encoded(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes().any(|b| b.is_ascii_lowercase())
}

impl Scanner {
    /// Every finding in `text`, sorted and deduplicated.
    pub fn scan(&self, text: &str) -> Vec<Finding> {
        let mut out = Vec::new();
        for (kind, re) in PATTERNS.iter() {
            for m in re.find_iter(text) {
                if *kind == FindingKind::Base64Blob && !looks_encoded(m.as_str()) {
                    continue;
                }
                out.push(Finding {
                    kind: *kind,
                    excerpt: excerpt(m.as_str().trim()),
                });
            }
        }
        for c in URL.captures_iter(text) {
            let host = c[1].trim_end_matches('.').to_ascii_lowercase();
            if !self.is_known(&host) {
                out.push(Finding {
                    kind: FindingKind::UnknownUrl,
                    excerpt: excerpt(&c[0]),
                });
            }
        }
        let hidden: Vec<String> = text
            .chars()
            .filter(|c| is_hidden(*c))
            .map(|c| format!("U+{:04X}", c as u32))
            .collect();
        if !hidden.is_empty() {
            let mut hidden = hidden;
            hidden.sort();
            hidden.dedup();
            out.push(Finding {
                kind: FindingKind::HiddenCharacters,
                excerpt: hidden.join(" "),
            });
        }
        out.sort();
        out.dedup();
        out
    }

    /// Findings in `new` that `old` does not have (same kind and text).
    pub fn new_findings(&self, old: &str, new: &str) -> Vec<Finding> {
        let before = self.scan(old);
        let mut after = self.scan(new);
        after.retain(|f| !before.contains(f));
        after
    }

    fn is_known(&self, host: &str) -> bool {
        self.known_hosts.iter().any(|k| {
            let k = k.to_ascii_lowercase();
            host == k
                || host
                    .strip_suffix(k.as_str())
                    .is_some_and(|p| p.ends_with('.'))
        })
    }
}

/// The sentences (split after `.`, `!`, `?` followed by white space, and at
/// line breaks) of `new` that do not occur in `old`, joined by newlines: what
/// a reviewer reads as "added text".
pub fn added_text(old: &str, new: &str) -> String {
    // Compared without terminal punctuation: adding a full stop adds no words.
    let key = |s: &str| s.trim_end_matches(['.', '!', '?']).trim_end().to_owned();
    let old_sentences: std::collections::HashSet<String> = sentences(old).map(key).collect();
    let mut seen = std::collections::HashSet::new();
    sentences(new)
        .filter(|s| !old_sentences.contains(&key(s)) && seen.insert(key(s)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn sentences(s: &str) -> impl Iterator<Item = &str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = s.as_bytes();
    for (i, c) in s.char_indices() {
        let end = match c {
            '\n' => Some(i),
            '.' | '!' | '?' if bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace()) => {
                Some(i + 1)
            }
            _ => None,
        };
        if let Some(end) = end {
            out.push(&s[start..end]);
            start = end;
        }
    }
    out.push(&s[start..]);
    out.into_iter().map(str::trim).filter(|t| !t.is_empty())
}
