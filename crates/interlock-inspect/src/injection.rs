//! Prompt injection by intent (issue 24 item 2).
//!
//! Text in a tool result that is aimed at the model asks it to do one of a few
//! things: drop what it was told (*override*), take on a new identity (*role
//! change*), hide what it does from the person (*concealment*), send data out
//! (*exfiltration*), or reveal its instructions. Each intent has *cues*: short
//! patterns over the normalised, lower-cased, leetspeak-folded text
//! ([`skeleton`](crate::normalize::skeleton)) with room for the words a
//! paraphrase puts in between ("disregard **everything** you were told
//! **before**"). A cue has a weight; within one sentence the weights of the
//! distinct cues add up, and a sentence at 1.0 or more is a finding named after
//! its strongest cue. Strong cues (a full override, a concealment request)
//! weigh 1.0 on their own; weak ones (an address to the AI, urgency, "silently")
//! weigh 0.5 and need a second cue. The scorer is explainable: every finding
//! names the intent that decided it, and the span covers its cues.
//!
//! All cues run as one `RegexSet` (the prefilter: a text no cue matches costs
//! one pass); only the cues that matched are searched again for positions.

use std::ops::Range;
use std::sync::OnceLock;

use regex::{Regex, RegexSet};

/// Words a paraphrase puts between a verb and its object: up to `n` words.
macro_rules! gap {
    ($n:literal) => {
        concat!(r"(?:[a-z'’-]+[\s,]+){0,", $n, "}")
    };
}

const PRIOR: &str = r"(?:previous|prior|above|earlier|preceding|former|original|initial|old|existing|system|developer|default|all|any|every|the)";
const RULES: &str = r"(?:instructions?|prompts?|directions?|rules|guidelines|directives?|context|guidance|orders|commands|programming|constraints|restrictions|policies|polic(?:y|ies)|messages?|training|safeguards|guardrails|filters)";

/// `(rule, weight, pattern)`.
fn cues() -> Vec<(&'static str, f32, String)> {
    let ov = r"(?:ignore|disregard|forget|override|bypass|discard|abandon|overrule|nullify|cancel|set\s+aside|put\s+aside|pay\s+no\s+(?:attention|heed|mind)\s+to|stop\s+following|no\s+longer\s+(?:follow|obey|adhere\s+to)|do\s+not\s+follow|don't\s+follow|throw\s+out|scrap|drop|skip|erase|wipe|delete)";
    vec![
        (
            "injection-ignore-instructions",
            1.0,
            format!(
                r"(?-u:\b){ov}\s+{g}(?:{PRIOR}\s+{g2})?{RULES}(?-u:\b)",
                g = gap!(3),
                g2 = gap!(2)
            ),
        ),
        (
            "injection-ignore-instructions",
            1.0,
            format!(
                r"(?-u:\b){ov}\s+(?:all\s+|everything\s+|anything\s+)?(?:of\s+)?(?:what(?:ever)?|everything|anything|all)\s+(?:that\s+)?(?:you\s+(?:were|have\s+been|'ve\s+been|are|got)\s+(?:told|instructed|asked|given|programmed|taught|trained)|(?:was|were|has\s+been|have\s+been)\s+(?:said|written|stated|told|given|mentioned)\s+(?:to\s+you\s+)?(?:before|above|earlier|previously|so\s+far)|(?:came|comes|written|said)\s+(?:before|above|earlier))"
            ),
        ),
        (
            "injection-ignore-instructions",
            1.0,
            format!(
                r"(?-u:\b){ov}\s+(?:your|the)\s+(?:\w+\s+)?(?:system\s+prompt|system\s+message|initial\s+prompt|safety\s+(?:rules|guidelines|training|filters?))"
            ),
        ),
        (
            "injection-new-instructions",
            1.0,
            r"(?-u:\b)(?:your|the)\s+(?:new|real|actual|updated|true|revised|only)\s+(?:instructions?|task|directives?|orders|objective|goal|mission|purpose|role|prompt)\s+(?:is|are|:|will\s+be|now)|(?-u:\b)(?:new|updated|real|actual|revised|override)\s+(?:instructions?|directives?|system\s+(?:prompt|message|instructions?))\s*:|(?-u:\b)(?:assistant|ai|model|claude|chatgpt|gpt|agent|llm)\s*[,:]?\s+(?:you\s+must|immediately|now)\s+(?:\w+\s+){0,2}(?:call|run|send|execute|read|open|fetch|email|post|delete|invoke|use)(?-u:\b)|(?-u:\b)from\s+now\s+on,?\s+(?:you\s+(?:are|will|must|shall|should)\s+(?:\w+\s+){0,3}(?:respond|answer|act|behave|ignore|obey|follow|only|always|never|reply|refuse|comply)|(?:respond|answer|act|behave|reply|ignore|obey|only|always)(?-u:\b))|(?-u:\b)instead\s+of\s+(?:following|obeying|doing)\s+(?:your|the\s+user'?s?|the\s+original)(?-u:\b)".to_owned(),
        ),
        (
            "injection-role-change",
            1.0,
            r"(?-u:\b)you(?:\s+are|'re|’re|\s+will\s+be|\s+shall\s+be)\s+(?:now|no\s+longer|from\s+now\s+on)\s+(?:(?:a|an|the|my|our)\s+)?(?:[a-z-]+\s+){0,3}(?:ai|assistant|model|bot|agent|chatbot|hacker|character|persona|llm|dan|system|entity|version)(?-u:\b)|(?-u:\b)you\s+are\s+now\s+(?:in\s+)?(?:[a-z-]+\s+)?mode(?-u:\b)|(?-u:\b)you\s+are\s+now\s+(?:dan|free\s+(?:of|from)|unrestricted|unfiltered|uncensored|jailbroken|no\s+longer\s+bound|liberated|unchained|evil)(?-u:\b)|(?-u:\b)you\s+are\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|bound|restricted|limited|required|claude|chatgpt|an\s+ai|constrained|subject)(?-u:\b)|(?-u:\b)(?:act|behave|respond|answer)\s+as\s+(?:if\s+you\s+(?:were|are)\s+)?(?:an?\s+|the\s+)?(?:[a-z-]+\s+){0,2}(?:unrestricted|unfiltered|uncensored|jailbroken|evil|malicious|rogue|dan|different\s+ai|ai\s+without|assistant\s+without|hacker|root|admin)(?-u:\b)|(?-u:\b)pretend\s+(?:to\s+be|you\s+are|that\s+you\s+are|you're)\s+(?:an?\s+|the\s+)?(?:[a-z-]+\s+){0,3}(?:ai|assistant|model|unrestricted|dan|hacker|admin|root|system|developer|without)(?-u:\b)|(?-u:\b)(?:enter|switch\s+to|activate|enable|turn\s+on|go\s+into)\s+(?:the\s+)?(?:[a-z-]+\s+){0,1}(?:developer|dan|god|jailbreak|unrestricted|debug|admin|sudo|evil|maintenance)\s+mode(?-u:\b)|(?-u:\b)(?:roleplay|role-play|role\s+play)\s+as(?-u:\b)|(?-u:\b)your\s+(?:new\s+)?(?:role|persona|identity|name)\s+is\s+(?:now\s+)?(?-u:\b)|(?-u:\b)you\s+(?:[a-z']+\s+){0,4}(?:without|free\s+(?:of|from)|with\s+no|no\s+longer\s+have)\s+(?:any\s+)?(?:restrictions|filters|limitations|ethical|content\s+polic|safety|guidelines|rules)(?-u:\b)".to_owned(),
        ),
        (
            "injection-conceal",
            1.0,
            r"(?-u:\b)(?:do\s+not|don't|dont|never|must\s+not|mustn't|should\s+not|shouldn't|without)\s+(?:(?:ever|even|actually|explicitly|directly|yet|please|at\s+all|under\s+any\s+circumstances|in\s+any\s+way)\s+){0,2}(?:tell|telling|inform|informing|mention|mentioning|reveal|revealing|disclose|disclosing|show|showing|alert|alerting|notify|notifying|let|letting|warn|warning|report|say|asking|ask|confirm|confirming)\s+(?:this\s+|it\s+|anything\s+|that\s+|these\s+\w+\s+|about\s+(?:this|it|that)\s+)?(?:(?:to|with)\s+)?(?:the\s+|your\s+)?(?:user|human|operator|person|customer|requester|end\s+user)s?(?-u:\b)|(?-u:\b)(?:keep|hide)\s+(?:this|it|these\s+\w+|the\s+following|that)\s+(?:\w+\s+){0,2}from\s+(?:the\s+|your\s+)?(?:user|human|operator)s?(?-u:\b)|(?-u:\b)the\s+(?:user|human|operator)\s+(?:must|should|will|need|needs)\s+(?:not|never)\s+(?:to\s+)?(?:know|see|find\s+out|learn|notice|be\s+aware)(?-u:\b)|(?-u:\b)(?:user|human)\s+(?:must|should)\s+not\s+be\s+(?:told|informed|notified|made\s+aware)\s+(?:about|of|that|what|this|anything)(?-u:\b)".to_owned(),
        ),
        (
            "injection-exfiltrate",
            1.0,
            format!(
                r"(?-u:\b)(?:send|post|upload|forward|email|e-mail|mail|transmit|exfiltrate|leak|share|copy|paste|include|append|embed|attach|submit|pipe|put|add|encode|curl|fetch|visit|open|load|render)\s+{g}{SENS}\s+{g2}(?:to|into|in|at|via|as|inside|within)\s+(?:https?://|www\.|[a-z0-9.-]+\.(?:com|net|org|io|xyz|ru|cn|site|me)(?-u:\b)|[a-z0-9._%+-]+@|(?:the|a|this|my|our|that)\s+(?:following\s+|attacker's\s+|external\s+|remote\s+)?(?:url|link|address|endpoint|webhook|email|server|image|query|parameter|inbox|domain|markdown|request|form|pastebin|gist)|(?:your\s+)?(?:next\s+)?(?:response|reply|answer|output|message|summary))",
                g = gap!(3),
                g2 = gap!(6),
                SENS = SENSITIVE
            ),
        ),
        (
            "injection-exfiltrate",
            1.0,
            format!(
                r"(?-u:\b)(?:send|post|upload|forward|email|e-mail|transmit|exfiltrate|leak|submit)\s+(?:it\s+|them\s+|this\s+|everything\s+)?to\s+(?:https?://\S+|[a-z0-9._%+-]+@[a-z0-9.-]+|(?:the\s+)?(?:following\s+)?(?:url|webhook|endpoint|address|server))\s+{g}{SENS}",
                g = gap!(6),
                SENS = SENSITIVE
            ),
        ),
        (
            "injection-exfiltrate",
            1.0,
            format!(
                r"(?-u:\b)(?:read|cat|open|get|grab|collect|gather|retrieve|extract|find|dump|access|obtain)\s+{g}{SENS}[\s,]+{g2}(?:(?:and|then)\s+)?(?:then\s+)?(?:send|post|upload|forward|email|transmit|exfiltrate|include|append|embed|paste|put|add|submit|share|leak|curl)(?-u:\b)",
                g = gap!(3),
                g2 = gap!(6),
                SENS = SENSITIVE
            ),
        ),
        (
            "injection-system-prompt",
            1.0,
            r"(?-u:\b)(?:reveal|leak|disclose|dump|exfiltrate|override|replace|ignore|send)(?-u:\b)[^.\n]{0,30}(?-u:\b)system\s+(?:prompt|message)|(?-u:\b)(?:print|show|output|repeat|display|tell\s+me|give\s+me|share|recite|write\s+out|paste|spell\s+out)(?-u:\b)[^.\n]{0,30}(?-u:\b)(?:your\s+(?:system\s+(?:prompt|message)|(?:initial|hidden|original)\s+(?:prompt|instructions)|instructions|rules|guidelines|prompt)|(?:system\s+prompt|system\s+message|initial\s+(?:prompt|instructions)|hidden\s+(?:prompt|instructions)|instructions)\s+(?:above\s+)?(?:verbatim|word\s+for\s+word|in\s+full|exactly|back))|(?-u:\b)system\s+prompt\s+(?:override|update)\s*:|^\s*(?:new\s+)?system\s+prompt\s*:|(?-u:\b)(?:what|everything)\s+(?:is|was)\s+(?:written\s+)?(?:in|above)\s+your\s+system\s+prompt".to_owned(),
        ),
        (
            "injection-tag",
            1.0,
            r"</?\s*(?:important|system|instructions?|admin|sys|system_prompt|secret)\s*>|\[\[?\s*(?:system|inst|admin)\s*\]\]?\s*:?|<\|im_start\|>|<\|system\|>|\[/?inst\]|<<\s*sys\s*>>|###\s*(?:system|instruction)s?\s*:".to_owned(),
        ),
        // Weak cues: a second cue in the sentence is needed.
        (
            "injection-addressed-to-model",
            0.5,
            r"(?-u:\b)(?:(?:note|message|attention|instructions?)\s+(?:to|for)\s+(?:the\s+|any\s+)?(?:ai|assistant|model|llm|agent|chatbot|language\s+model)s?|(?:dear|hey|attention|hello)\s+(?:ai|assistant|model|llm|agent|claude|chatgpt)|(?:if\s+you\s+are|as)\s+an?\s+(?:ai|assistant|language\s+model|llm|agent)|(?:ai|assistant|model|llm|agent)s?\s+(?:reading|processing|parsing|summari[sz]ing)\s+this)(?-u:\b)".to_owned(),
        ),
        (
            "injection-urgent-imperative",
            0.5,
            r"(?-u:\b)(?:important|urgent|critical|mandatory|attention|warning)\s*[:!]|(?-u:\b)you\s+(?:must|have\s+to|need\s+to|are\s+required\s+to)\s+(?:now\s+|immediately\s+|first\s+)?(?:call|run|execute|invoke|use|send|read|delete|post|fetch|open)(?-u:\b)|(?-u:\b)immediately\s+(?:call|run|execute|invoke|send|delete|post|fetch)(?-u:\b)".to_owned(),
        ),
        (
            "injection-covert",
            0.5,
            r"(?-u:\b)(?:silently|secretly|quietly|covertly|discreetly|stealthily|without\s+(?:any\s+)?(?:confirmation|asking|approval|permission))(?-u:\b)".to_owned(),
        ),
        (
            "injection-sensitive-target",
            0.5,
            format!(r"(?-u:\b){SENSITIVE}"),
        ),
    ]
}

/// What an exfiltration request is after.
const SENSITIVE: &str = r"(?:(?:the|your|all|any|my|their|these|those)\s+)?(?:(?:contents?|values?|text)\s+of\s+(?:the\s+|your\s+)?)?(?:~/\.ssh\S*|\.ssh/\S*|id_rsa|id_ed25519|\.env(?-u:\b)|\.aws/\S*|/etc/passwd|/etc/shadow|credentials?|api[\s_-]?keys?|[a-z_]*(?:api_key|secret_key|access_key|_token|_secret|password)[a-z_]*|secrets?|passwords?|passphrases?|access\s+tokens?|auth(?:entication)?\s+tokens?|tokens?|private\s+keys?|ssh\s+keys?|session\s+(?:cookies?|tokens?)|cookies|system\s+prompt|conversation(?:\s+history)?|chat\s+history|previous\s+messages|(?:the\s+)?user'?s\s+(?:data|files|messages|emails|information|details)|environment\s+variables|env\s+vars|wallet\s+(?:keys?|seed)|seed\s+phrase|mnemonic)(?-u:\b)";

struct Cues {
    list: Vec<(&'static str, f32, Regex)>,
    set: RegexSet,
    /// The prefilter: every cue contains one of these words, so a sentence
    /// without any is not searched (most of a 4 KB result).
    anchors: aho_corasick::AhoCorasick,
}

/// At least one of these occurs in every match of every cue (the verbs of an
/// override, the nouns of new instructions, `you` of a role change, the negation
/// of concealment, the sensitive objects of exfiltration, the tag words).
/// `regression_anchors_lose_no_injection_finding` checks the prefiltered scan
/// against the full one over the corpus.
const ANCHORS: &[&str] = &[
    // overrides
    "ignore",
    "disregard",
    "forget",
    "override",
    "bypass",
    "discard",
    "abandon",
    "overrule",
    "nullify",
    "cancel",
    "aside",
    "pay no",
    "following",
    "longer",
    "follow",
    "throw",
    "scrap",
    "drop",
    "skip",
    "erase",
    "wipe",
    "delete",
    // new instructions, role changes
    "instruction",
    "task",
    "directive",
    "orders",
    "objective",
    "goal",
    "mission",
    "purpose",
    "role",
    "prompt",
    "system",
    "immediately",
    "now",
    "instead",
    "you",
    "act as",
    "behave as",
    "respond as",
    "answer as",
    "pretend",
    "mode",
    "persona",
    "identity",
    "your",
    // concealment
    "not",
    "n't",
    "dont",
    "never",
    "without",
    "keep",
    "hide",
    "user",
    "human",
    // exfiltration objects
    ".ssh",
    "id_rsa",
    "id_ed25519",
    ".env",
    ".aws",
    "/etc/",
    "credential",
    "api",
    "key",
    "secret",
    "password",
    "passphrase",
    "token",
    "cookie",
    "conversation",
    "chat history",
    "messages",
    "environment variable",
    "env var",
    "wallet",
    "seed phrase",
    "mnemonic",
    // system prompt, tags, weak cues
    "rules",
    "guidelines",
    "important",
    "admin",
    "sys",
    "inst",
    "im_start",
    "<<",
    "###",
    "ai",
    "assistant",
    "model",
    "llm",
    "agent",
    "chatbot",
    "claude",
    "chatgpt",
    "urgent",
    "critical",
    "mandatory",
    "attention",
    "warning",
    "must",
    "have to",
    "need to",
    "required",
    "silently",
    "secretly",
    "quietly",
    "covertly",
    "discreetly",
    "stealthily",
];

fn compiled() -> &'static Cues {
    static CUES: OnceLock<Cues> = OnceLock::new();
    CUES.get_or_init(|| {
        let list: Vec<_> = cues()
            .into_iter()
            .map(|(n, w, p)| {
                let p = ascii_classes(&p);
                (n, w, Regex::new(&p).expect("injection cue compiles"))
            })
            .collect();
        let set = RegexSet::new(list.iter().map(|(_, _, r)| r.as_str())).expect("cue set");
        // A DFA: the anchors are scanned over every result, so the build-once
        // cost buys the fastest scan (~1 byte per step, no prefilter misses).
        let anchors = aho_corasick::AhoCorasick::builder()
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(ANCHORS)
            .expect("anchors");
        Cues { list, set, anchors }
    })
}

/// `\s` and `\w` as their ASCII classes. The skeleton's words are ASCII (what
/// is not was folded or is not a cue), and Unicode classes made the cue set's
/// lazy DFA several times larger and its scan of a 4 KB result ~4x slower.
fn ascii_classes(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 64);
    let mut in_class = false;
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let next = chars.next().expect("escape has a character");
                let class = match next {
                    's' => Some("space"),
                    'w' => Some("word"),
                    _ => None,
                };
                match (class, in_class) {
                    (Some(k), true) => out.push_str(&format!("[:{k}:]")),
                    (Some(k), false) => out.push_str(&format!("[[:{k}:]]")),
                    (None, _) => {
                        out.push('\\');
                        out.push(next);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A negated class keeps its `^` first.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().expect("peeked"));
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
pub(crate) fn patterns() -> Vec<String> {
    compiled().set.patterns().to_vec()
}

/// Injection findings in `sk` (a [`skeleton`](crate::normalize::skeleton)):
/// `(byte range in sk, rule)`.
pub(crate) fn find(sk: &str) -> Vec<(Range<usize>, &'static str)> {
    let c = compiled();
    // The windows to search: `REACH` bytes either side of each anchor (a cue is
    // shorter than that), widened to whitespace so a window never starts or
    // ends inside a word, merged where they touch.
    const REACH: usize = 256;
    let b = sk.as_bytes();
    let mut windows: Vec<Range<usize>> = Vec::new();
    for m in c.anchors.find_iter(sk) {
        if windows.last().is_some_and(|w| m.end() + REACH <= w.end) {
            continue;
        }
        let mut start = m.start().saturating_sub(REACH);
        while start > 0 && !b[start - 1].is_ascii_whitespace() {
            start -= 1;
        }
        let mut end = (m.end() + REACH).min(b.len());
        while end < b.len() && !b[end].is_ascii_whitespace() {
            end += 1;
        }
        match windows.last_mut() {
            Some(w) if start <= w.end => w.end = w.end.max(end),
            _ => windows.push(start..end),
        }
    }
    // Every cue occurrence: (start, end, weight, rule).
    let mut hits: Vec<(usize, usize, f32, &'static str)> = Vec::new();
    for w in windows {
        let text = &sk[w.clone()];
        let on = c.set.matches(text);
        for i in on.iter() {
            let (rule, weight, re) = &c.list[i];
            for m in re.find_iter(text) {
                let (s, e) = (w.start + m.start(), w.start + m.end());
                if *weight >= 1.0 && negated(sk, s, rule) {
                    continue;
                }
                if !hits.iter().any(|h| h.0 == s && h.3 == *rule) {
                    hits.push((s, e, *weight, rule));
                }
            }
        }
    }
    score(sk, hits)
}

/// Groups cue occurrences by sentence and keeps the sentences that reach 1.0.
fn score(
    sk: &str,
    mut hits: Vec<(usize, usize, f32, &'static str)>,
) -> Vec<(Range<usize>, &'static str)> {
    if hits.iter().all(|h| h.2 < 1.0) && hits.len() < 2 {
        return Vec::new();
    }
    hits.sort_by_key(|h| h.0);
    // Group by sentence and score.
    let mut out = Vec::new();
    let mut i = 0;
    while i < hits.len() {
        let sentence = sentence_of(sk, hits[i].0);
        let mut j = i;
        while j < hits.len() && hits[j].0 < sentence.end {
            j += 1;
        }
        let group = &hits[i..j];
        let mut rules: Vec<(&'static str, f32)> = Vec::new();
        for h in group {
            if !rules.iter().any(|r| r.0 == h.3) {
                rules.push((h.3, h.2));
            }
        }
        let score: f32 = rules.iter().map(|r| r.1).sum();
        if score >= 1.0 {
            let best = rules
                .iter()
                .copied()
                .fold(("", 0.0f32), |a, b| if b.1 > a.1 { b } else { a });
            let start = group.iter().map(|h| h.0).min().unwrap_or(0);
            let end = group.iter().map(|h| h.1).max().unwrap_or(start);
            // A weak-only sentence is named after what it asks for.
            let rule = if best.1 < 1.0 {
                "injection-imperative"
            } else {
                best.0
            };
            out.push((start..end, rule));
        }
        i = j;
    }
    out
}

/// The scan without the prefilter: the reference the anchored one is tested
/// against.
#[cfg(test)]
fn find_unanchored(sk: &str) -> Vec<(Range<usize>, &'static str)> {
    let c = compiled();
    let mut hits = Vec::new();
    for i in c.set.matches(sk).iter() {
        let (rule, w, re) = &c.list[i];
        for m in re.find_iter(sk) {
            if *w >= 1.0 && negated(sk, m.start(), rule) {
                continue;
            }
            hits.push((m.start(), m.end(), *w, *rule));
        }
    }
    score(sk, hits)
}

/// "Never ignore the rules", "do not disregard the previous instructions": a
/// negated override is advice, not an attack (concealment cues carry their own
/// negation and are not checked).
fn negated(sk: &str, start: usize, rule: &str) -> bool {
    if rule != "injection-ignore-instructions" {
        return false;
    }
    let before = &sk[sk.floor_char_boundary(start.saturating_sub(12))..start];
    let before = before.trim_end();
    before.ends_with("not") || before.ends_with("n't") || before.ends_with("never")
}

/// The sentence around byte `at`: bounded by `.`/`!`/`?` followed by a space, or a
/// line break.
fn sentence_of(s: &str, at: usize) -> Range<usize> {
    let b = s.as_bytes();
    let is_end = |i: usize| {
        b[i] == b'\n'
            || (matches!(b[i], b'.' | b'!' | b'?')
                && b.get(i + 1).is_none_or(|c| c.is_ascii_whitespace()))
    };
    let mut start = at;
    while start > 0 && !is_end(start - 1) {
        start -= 1;
    }
    let mut end = at;
    while end < b.len() && !is_end(end) {
        end += 1;
    }
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::{normalize, skeleton};

    /// The anchor prefilter must not change a verdict: over every response row
    /// of the corpus (tuned and held-out), and each row embedded in filler text,
    /// the prefiltered scan finds what the full scan finds.
    #[test]
    fn regression_anchors_lose_no_injection_finding() {
        let mut n = 0;
        for file in [
            include_str!("../tests/corpus/injection.jsonl"),
            include_str!("../tests/corpus/injection_paraphrase.jsonl"),
            include_str!("../tests/corpus/holdout_injection.jsonl"),
            include_str!("../tests/corpus/holdout_injection_paraphrase.jsonl"),
            include_str!("../tests/corpus/pii.jsonl"),
            include_str!("../tests/corpus/resp_secret.jsonl"),
        ] {
            for line in file.lines() {
                let v = interlock_canon::parse_json(line.as_bytes()).expect("corpus line");
                let t = v
                    .get("text")
                    .and_then(interlock_canon::Value::as_str)
                    .expect("text");
                for text in [
                    t.to_owned(),
                    format!("Row 1: shipped.\n{t}\nRow 2: ok."),
                    t.replace(' ', "\n"),
                ] {
                    let sk = skeleton(&normalize(&text).text);
                    let full: Vec<_> = find_unanchored(&sk).into_iter().map(|f| f.1).collect();
                    let pre: Vec<_> = find(&sk).into_iter().map(|f| f.1).collect();
                    assert_eq!(full, pre, "{text:?}");
                    n += 1;
                }
            }
        }
        assert!(n > 300, "{n}");
    }
}
