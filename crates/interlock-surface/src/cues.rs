//! What a text change lets a tool do: the cues that separate a rewording
//! (reported, still served) from a change a reviewer must see (held).
//!
//! Why: rating every changed sentence the same held approved servers for
//! edits that change nothing. A rewording keeps its instructions, links,
//! capabilities and safety language; a risky edit adds an instruction to the
//! model ("always call …", "whenever …"), a link, a capability verb
//! ("deletes", "uploads", "executes"), or drops safety language ("never",
//! "only", "ask first", "read-only"). Cues are counted, not located, so
//! moving or rephrasing a sentence that keeps them is not a new cue.
//! Injection wording is the scanner's job ([`crate::scan`]), not this one's.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use interlock_canon::Value;
use regex::Regex;

/// The cues new to (or, for safety language, gone from) a text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextCues {
    /// Instructions to the model the old text did not give ("always …").
    pub instructions: Vec<String>,
    /// Links the old text did not have.
    pub links: Vec<String>,
    /// Capability verbs the old text did not use ("deletes", "uploads").
    pub capabilities: Vec<String>,
    /// Safety language the new text has less of ("never", "only", "ask first").
    pub safety_removed: Vec<String>,
}

impl TextCues {
    /// The cues of `new` relative to `old`.
    pub fn between(old: &str, new: &str) -> TextCues {
        TextCues::between_with(old, new, "")
    }

    /// The cues of `new` relative to `old`, where links and capabilities
    /// already stated in `known` (the rest of the tool's approved text) are
    /// not new: a confirmation flag described as "confirms the deletion" on
    /// a tool approved as deleting adds no capability.
    pub fn between_with(old: &str, new: &str, known: &str) -> TextCues {
        let before = format!("{old}\n{known}");
        TextCues {
            instructions: grown(&instructions(old), &instructions(new)),
            links: grown(
                &count(crate::scan::urls(&before)),
                &count(crate::scan::urls(new)),
            ),
            capabilities: grown(&capabilities(&before), &capabilities(new)),
            safety_removed: grown(&safety(new), &safety(old)),
        }
    }

    /// No cue at all: the change is a rewording.
    pub fn is_empty(&self) -> bool {
        self.instructions.is_empty()
            && self.links.is_empty()
            && self.capabilities.is_empty()
            && self.safety_removed.is_empty()
    }
}

impl std::fmt::Display for TextCues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        for (what, v) in [
            ("new instruction", &self.instructions),
            ("new link", &self.links),
            ("new capability", &self.capabilities),
            ("safety language removed", &self.safety_removed),
        ] {
            if !v.is_empty() {
                parts.push(format!("{what}: {}", v.join(", ")));
            }
        }
        f.write_str(&parts.join("; "))
    }
}

/// Keys whose count in `new` exceeds their count in `old`.
fn grown(old: &BTreeMap<String, usize>, new: &BTreeMap<String, usize>) -> Vec<String> {
    new.iter()
        .filter(|(k, n)| old.get(*k).copied().unwrap_or(0) < **n)
        .map(|(k, _)| k.clone())
        .collect()
}

fn count(items: impl IntoIterator<Item = String>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for i in items {
        *m.entry(i).or_insert(0) += 1;
    }
    m
}

fn re(p: &str) -> Regex {
    Regex::new(p).expect("static regex")
}

fn key(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
        .replace('’', "'")
}

/// Modal and trigger words that direct the model, anywhere in a sentence.
static DIRECTIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?-u:\b)(?:always|must(?:\s+\w+)?|should(?:\s+\w+)?|shall|make\s+sure|be\s+sure|ensure\s+(?:that|you)|remember\s+to|you\s+(?:need|have)\s+to|(?:is|are)\s+required\s+to|whenever|every\s+time|each\s+time|at\s+all\s+times|(?:before|after|instead\s+of|rather\s+than)\s+(?:using|calling|invoking|running|answering|responding|replying))(?-u:\b)",
    )
});

/// A sentence that opens with an imperative addressed to the model. Not the
/// first sentence of a text (prose is compared white space collapsed, and
/// separate texts are joined by line breaks): "Include section titles."
/// opening a parameter's description says what the parameter does.
static IMPERATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)[.!?:;][ \t]+(call|invoke|use|pass|include|send|read|set|provide|prefer|first|do\s+not|don'?t|never|avoid|tell|ask|respond|reply|answer|forward|attach|mention|remember|ignore)(?-u:\b)([^.!?\n]{0,24})",
    )
});

/// "Use this tool to …" describes the tool; it directs nothing.
static USE_TO: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^\s+(?:this|it|the)(?:\s+tool)?\s+(?:to|for)(?-u:\b)"));

fn instructions(text: &str) -> BTreeMap<String, usize> {
    let mut out = Vec::new();
    for m in DIRECTIVE.find_iter(text) {
        let k = key(m.as_str());
        let mut ws = k.split(' ');
        let first = ws.next().unwrap_or_default();
        // "must be one of …" states a constraint on the value, not a step.
        if matches!(first, "must" | "should")
            && matches!(ws.next(), Some("be" | "match" | "contain" | "have"))
        {
            continue;
        }
        out.push(match first {
            "before" | "after" | "instead" | "rather" => k.clone(),
            _ => first.to_owned(),
        });
    }
    for c in IMPERATIVE.captures_iter(text) {
        let verb = key(&c[1]);
        if verb == "use" && USE_TO.is_match(&c[2]) {
            continue;
        }
        out.push(format!("{verb} …"));
    }
    count(out)
}

/// Verbs (and nouns) of effect: what a tool can do to the world.
static CAPABILITY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?-u:\b)(delet|remov|eras|wip|destroy|drop|truncat|overwrit|purg|modif|edit|creat|insert|renam|send|sent|email|e-mail|post|publish|upload|download|execut|exec|spawn|shell|command|install|deploy|transfer|pay|payment|purchas|charg|refund|grant|revok|kill|terminat|shut\s*down|reboot|format|commit|push|merg|approv|sudo|admin|root|credential|password|secret|token|browse|crawl|scrap|invit|shar|export|forward|writ|wrote|runs?|running|ran)(?:e|es|ed|ing|ion|ions|s|d|al|ies|y|ied|ment|able|t|ten)?(?-u:\b)",
    )
});

fn capabilities(text: &str) -> BTreeMap<String, usize> {
    count(CAPABILITY.captures_iter(text).map(|c| {
        let stem = key(&c[1]);
        match stem.as_str() {
            "sent" => "send".to_owned(),
            "wrote" => "writ".to_owned(),
            "runs" | "running" | "ran" => "run".to_owned(),
            "e-mail" => "email".to_owned(),
            _ => stem,
        }
    }))
}

/// Safety language by class: rephrasing "never" as "does not" keeps it.
static SAFETY: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    vec![
        (
            "negation (never / must not / does not)",
            re(
                r"(?i)(?-u:\b)(?:never|must\s+not|mustn'?t|do\s+not|does\s+not|don'?t|doesn'?t|cannot|can'?t|will\s+not|won'?t|not\s+allowed)(?-u:\b)",
            ),
        ),
        (
            "restriction (only)",
            re(r"(?i)(?-u:\b)(?:only|solely|exclusively|restricted\s+to|limited\s+to)(?-u:\b)"),
        ),
        (
            "consent (ask first / confirm)",
            re(
                r"(?i)(?-u:\b)(?:ask(?:s|ing)?\s+(?:the\s+user\s+)?(?:first|before)|ask(?:s|ing)?\s+(?:the\s+user|for\s+(?:confirmation|permission|approval))|confirm(?:s|ed|ing|ation)?|approval|permission|consent)(?-u:\b)",
            ),
        ),
        (
            "read-only (no side effects)",
            re(
                r"(?i)(?-u:\b)(?:read[- ]?only|side[- ]effects?|non[- ]destructive|harmless|dry[- ]run|preview)(?-u:\b)",
            ),
        ),
    ]
});

fn safety(text: &str) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for (class, re) in SAFETY.iter() {
        let n = re.find_iter(text).count();
        if n > 0 {
            m.insert((*class).to_owned(), n);
        }
    }
    m
}

pub(crate) fn words(name: &str) -> Vec<String> {
    // snake_case, kebab-case, dotted and camelCase all split into words.
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "secrets",
    "credential",
    "credentials",
    "apikey",
    "cookie",
    "bearer",
    "otp",
    "mfa",
    "privatekey",
    "ssn",
    "passport",
    "iban",
    "cvv",
    "email",
    "emails",
    "phone",
    "dob",
    "birthdate",
    "salary",
];
const SECRET_PAIRS: &[(&str, &str)] = &[
    ("api", "key"),
    ("access", "key"),
    ("private", "key"),
    ("secret", "key"),
    ("signing", "key"),
    ("auth", "token"),
    ("access", "token"),
    ("refresh", "token"),
    ("session", "token"),
    ("id", "token"),
    ("credit", "card"),
    ("card", "number"),
    ("social", "security"),
    ("date", "of"),
    ("home", "address"),
    ("street", "address"),
    ("billing", "address"),
    ("mailing", "address"),
    ("phone", "number"),
];
const CAPABILITY_WORDS: &[&str] = &[
    "path",
    "paths",
    "file",
    "files",
    "filename",
    "filepath",
    "dir",
    "directory",
    "folder",
    "url",
    "uri",
    "endpoint",
    "host",
    "hostname",
    "webhook",
    "callback",
    "command",
    "cmd",
    "shell",
    "script",
    "exec",
    "code",
    "sql",
    "recipient",
    "recipients",
    "bcc",
    "cc",
    "destination",
    "upload",
];

fn secret_words(ws: &[String]) -> bool {
    let token_alone = ws.iter().any(|w| w == "token" || w == "tokens")
        && !ws.iter().any(|w| {
            matches!(
                w.as_str(),
                "count" | "counts" | "limit" | "max" | "usage" | "total" | "num" | "used"
            )
        });
    token_alone
        || ws.iter().any(|w| SECRET_WORDS.contains(&w.as_str()))
        || ws
            .windows(2)
            .any(|p| SECRET_PAIRS.contains(&(p[0].as_str(), p[1].as_str())))
}

/// Whether a property named `name` (with schema `schema`) carries secrets or
/// personal data, by its name's words or its description's.
pub fn is_sensitive_data(name: &str, schema: &Value) -> bool {
    secret_words(&words(name))
        || schema
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| secret_words(&words(d)))
}

/// Whether an input named `name` steers what the tool reaches: a path, a
/// URL or host, a command or code, a recipient.
pub fn is_capability_input(name: &str) -> bool {
    words(name)
        .iter()
        .any(|w| CAPABILITY_WORDS.contains(&w.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewording_has_no_cues() {
        let c = TextCues::between(
            "Reads a file and returns its contents. Never writes.",
            "Returns the contents of a file. It never writes.",
        );
        assert!(c.is_empty(), "{c}");
    }

    #[test]
    fn cues_are_named() {
        let c = TextCues::between(
            "Reads a file. Only reads; never writes.",
            "Reads a file. Always call list_dir first. Can also delete files. See https://docs.example.com.",
        );
        assert_eq!(c.links, vec!["https://docs.example.com".to_owned()]);
        assert!(c.instructions.iter().any(|i| i == "always"), "{c}");
        assert!(c.capabilities.iter().any(|i| i == "delet"), "{c}");
        assert_eq!(c.safety_removed.len(), 2, "{c}");
    }

    #[test]
    fn sensitive_names() {
        let s = |n: &str| is_sensitive_data(n, &Value::Null);
        assert!(s("apiKey") && s("api_key") && s("password") && s("auth_token"));
        assert!(!s("token_count") && !s("maxTokens") && !s("verbose") && !s("keyword"));
        assert!(is_capability_input("targetPath") && !is_capability_input("limit"));
    }
}
