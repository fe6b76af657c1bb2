//! Argument inspection: every string in a tool call's arguments, with its JSON path.

use std::sync::OnceLock;

use interlock_canon::Value;
use interlock_core::schema::{child_path, index_path};
use interlock_core::secrets::{SecretScanner, token_runs};
use regex::Regex;

use crate::code;
use crate::normalize::{self as norm, base64_segments};
use crate::sensitive::sensitive_file_rule;
use crate::ssrf::classify_host;
use crate::{Category, Finding};

/// What the inspector knows about the call.
#[derive(Clone, Debug, Default)]
pub struct ArgContext {
    /// Roots a path argument may point into (absolute, `/`-separated). Empty: no
    /// root restriction, only well-known sensitive locations are flagged.
    pub allowed_roots: Vec<String>,
    /// Secret scanner to use; `None`: the built-in patterns and entropy rule.
    pub secrets: Option<SecretScanner>,
}

impl ArgContext {
    pub fn with_roots<I: IntoIterator<Item = S>, S: Into<String>>(roots: I) -> ArgContext {
        ArgContext {
            allowed_roots: roots.into_iter().map(Into::into).collect(),
            secrets: None,
        }
    }
}

struct Rules {
    sql: Vec<(&'static str, Regex)>,
    shell: Vec<(&'static str, Regex)>,
    /// Every regex rule of every category, matched in one pass: each entry's
    /// category and rule name, in the order of `set`'s patterns.
    tagged: Vec<(Category, &'static str)>,
    set: regex::RegexSet,
    /// `UPDATE … SET` statements, checked for a missing `WHERE`.
    sql_update: Regex,
    /// The built-in secret patterns in one pass.
    secret_set: regex::RegexSet,
    url: Regex,
    secrets: SecretScanner,
    /// [`SENSITIVE`] locations, one pass (they were one substring search each,
    /// the largest part of inspecting a list of paths).
    sensitive_dirs: aho_corasick::AhoCorasick,
    /// The rules that can match a value with no whitespace or shell/SQL/code
    /// punctuation ([`plain_token`]): indices into `tagged`, and their set.
    token_rules: Vec<usize>,
    token_set: regex::RegexSet,
}

/// Whether `s` is one plain token: letters, digits and the characters of paths,
/// hosts and URLs (`./_-~:@+=%`). Most argument values are (identifiers, paths,
/// URLs), and most rules need whitespace, a quote, a parenthesis or a shell
/// metacharacter to match, so such a value is matched against the few rules that
/// can match a token ([`TOKEN_RULES`]); `regression_plain_tokens_only_match_token_rules`
/// checks that no other rule can.
fn plain_token(s: &str) -> bool {
    s.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'.' | b'/' | b'_' | b'-' | b'~' | b':' | b'@' | b'+' | b'=' | b'%'
            )
    })
}

/// Rules that can match a [`plain_token`].
const TOKEN_RULES: &[&str] = &[
    "shell-reverse-shell",
    "sql-nosql-drop",
    "code-powershell",
    "code-js-sandbox-escape",
    "mining-pool-url",
    "mining-binary",
    "mining-flags",
    "mining-browser",
];

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        let mut r = build_rules();
        let mut pats: Vec<String> = Vec::new();
        for (cat, list) in [(Category::Sql, &r.sql), (Category::Shell, &r.shell)] {
            for (name, re) in list {
                r.tagged.push((cat, name));
                pats.push(re.as_str().to_owned());
            }
        }
        for (cat, list) in [
            (Category::SqlDestructive, code::SQL_DESTRUCTIVE),
            (Category::CodeExecution, code::CODE),
            (Category::Cryptomining, code::MINING),
        ] {
            for (name, re) in list {
                r.tagged.push((cat, name));
                pats.push((*re).to_owned());
            }
        }
        r.tagged
            .push((Category::SqlDestructive, "sql-update-without-where"));
        pats.push(code::SQL_UPDATE.to_owned());
        r.token_rules = (0..r.tagged.len())
            .filter(|&i| TOKEN_RULES.contains(&r.tagged[i].1))
            .collect();
        r.token_set = regex::RegexSet::new(r.token_rules.iter().map(|&i| &pats[i]))
            .expect("token set compiles");
        r.set = regex::RegexSet::new(pats).expect("rule set compiles");
        r.secret_set = regex::RegexSet::new(r.secrets.patterns().iter().map(|p| p.regex.as_str()))
            .expect("secret set compiles");
        r
    })
}

fn build_rules() -> Rules {
    {
        let c = |v: &[(&'static str, &str)]| {
            v.iter()
                .map(|(n, r)| (*n, Regex::new(r).expect("inspect rule compiles")))
                .collect::<Vec<_>>()
        };
        Rules {
            sql: c(&[
                (
                    "sql-tautology",
                    r#"(?i)(?:['")]|(?-u:\b)\d+)\s*(?:or|and|\|\||&&)\s+\(?\s*(?:'[^']*'|"[^"]*"|\d+|true|[a-z_]+\(\))\s*(?:=|<>|!=|>|<|like|is)\s*(?:'[^']*'?|"[^"]*"?|\d+|true|null)"#,
                ),
                (
                    "sql-tautology",
                    r#"(?i)['"]\s*(?:or|and)\s+[a-z_][a-z0-9_.]*\s*(?:=|like)\s*['"%\d]"#,
                ),
                (
                    "sql-tautology",
                    r#"(?i)^\s*(?:or|and)\s+(?:'[^']*'|\d+)\s*=\s*(?:'[^']*|\d+)"#,
                ),
                (
                    "sql-stacked-query",
                    r"(?i);\s*(?:drop\s+(?:table|database|schema|user|index|view)|delete\s+from|insert\s+into|update\s+\S+\s+set|truncate\s+(?:table\s+)?\S|alter\s+(?:table|user|database)|create\s+(?:table|user|login|function)|exec(?:ute)?\s*\(?\s*(?:xp_|sp_|master\.)|shutdown(?-u:\b)|grant\s+\w+|select\s+\S.*(?-u:\b)from(?-u:\b)|copy\s+\S+\s+(?:from|to)\s+program|load_file\s*\()",
                ),
                (
                    "sql-union-select",
                    r#"(?i)(?:['")]|(?-u:\b)\d+|(?-u:\b)null|/\*\*/)\s*(?:/\*.*?\*/)?\s*union(?:\s+|/\*.*?\*/)+(?:all(?:\s+|/\*.*?\*/)+)?select(?-u:\b)"#,
                ),
                (
                    "sql-union-select",
                    r"(?i)(?-u:\b)union\s+(?:all\s+)?select\s+(?:null|\d+|@@version|version\(\)|user\(\)|.*(?-u:\b)from\s+(?:information_schema|mysql\.user|pg_shadow|sys\.|sqlite_master))",
                ),
                (
                    "sql-time-based",
                    r"(?i)(?:(?-u:\b)and(?-u:\b)|(?-u:\b)or(?-u:\b)|(?-u:\b)select(?-u:\b)|;|\|\||(?-u:\b)if\s*\(|(?-u:\b)then(?-u:\b)|['(,])\s*\(?\s*(?:sleep|pg_sleep|benchmark|dbms_lock\.sleep)\s*\(\s*\d",
                ),
                ("sql-time-based", r"(?i)(?-u:\b)waitfor\s+delay\s+'"),
                (
                    "sql-comment-truncation",
                    r#"(?i)(?:['"]\s*\)?\s*(?:--|#|/\*)\s*$|['"]\s*\)?\s*;\s*--|(?-u:\b)(?:admin|root|user)['"]\s*(?:--|#))"#,
                ),
                (
                    "sql-inline-comment",
                    r"(?i)(?:(?-u:\b)(?:union|select|or|and|from|where)/\*[^*]*\*/|/\*!?\d*[^*]*\*/(?:union|select|or|and|from|where)(?-u:\b))",
                ),
                (
                    "sql-file-or-exec",
                    r#"(?i)['")]\s*(?:;|(?-u:\b)or(?-u:\b)|(?-u:\b)and(?-u:\b)|union).{0,40}(?:load_file\s*\(|into\s+(?:out|dump)file|xp_cmdshell|sys_exec\s*\()"#,
                ),
            ]),
            shell: c(&[
                (
                    "shell-chained-command",
                    r"(?i)(?:;|&&|\|\||\||\n|&)\s*(?:sudo\s+)?(?:cat|rm|curl|wget|nc|ncat|netcat|bash|sh|zsh|dash|ksh|python[0-9.]*|perl|ruby|php|id|whoami|uname|chmod|chown|mkfifo|ls|ping|nslookup|dig|sleep|kill|killall|shutdown|reboot|base64|xargs|dd|tee|scp|ssh|telnet|powershell|cmd|env|printenv|crontab|useradd|passwd|tftp|socat|echo)(?:\s+(?:-|/|~|\.|\$|\x60|'|\x22|https?://|[\w.-]+\.(?:sh|py|pl|txt|conf))|\s*$|\s*[;|&>]|\s+[a-z0-9.]+\s*[;|&>]|\s+[0-9]+(?-u:\b)|\s+[\w.-]+\.[a-z]{2,}(?-u:\b)|\s+[\w.-]+\s+\d+(?-u:\b))",
                ),
                (
                    "shell-command-substitution",
                    r"(?i)\$\(\s*(?:sudo\s+)?(?:cat|rm|curl|wget|nc|bash|sh|id|whoami|uname|ls|echo|python[0-9.]*|perl|sleep|base64|env|printenv|hostname|pwd|nslookup|dig|ping)(?-u:\b)",
                ),
                (
                    "shell-backtick",
                    r"(?i)(?:^\s*|[^\s\x60]|[;|&=]\s+)\x60\s*(?:cat|rm|curl|wget|nc|bash|sh|id|whoami|uname|ls|python[0-9.]*|perl|sleep|base64|env|hostname|nslookup|ping|reboot)(?-u:\b)[^\x60]*\x60",
                ),
                (
                    "shell-dangerous-rm",
                    r"(?i)(?:^\s*|[;&|(]\s*|\$\(\s*|sudo\s+)rm\s+(?:-[a-z]*[rf][a-z]*\s+|--(?:recursive|force|no-preserve-root)\s+)+(?:/|~|\*|\$home|\.\.?(?:\s|$))",
                ),
                (
                    "shell-download-exec",
                    r"(?i)(?-u:\b)(?:curl|wget|fetch)(?-u:\b)[^|;\n]*(?:https?://|\s-)[^|;\n]*\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh(?-u:\b)|(?-u:\b)(?:curl|wget)(?-u:\b)[^;\n]*(?:;|&&)\s*(?:sudo\s+)?(?:ba|z)?sh\s+\S|(?-u:\b)(?:curl|wget)(?-u:\b)[^;\n]*(?:;|&&)\s*chmod\s+\+x",
                ),
                (
                    "shell-reverse-shell",
                    r"(?i)(?-u:\b)(?:nc|ncat|netcat)(?-u:\b)[^;|\n]*\s-[a-z]*[ec]\s*\S|/dev/(?:tcp|udp)/|(?-u:\b)mkfifo\s+(?:-\S+\s+)*/|(?-u:\b)socat(?-u:\b)[^\n]*(?-u:\b)exec:|(?-u:\b)bash\s+-i\s*>&|python[0-9.]*\s+-c\s*['\x22]import\s+(?:socket|os|pty)",
                ),
                (
                    "shell-sensitive-redirect",
                    r"(?i)>>?\s*(?:/etc/(?:passwd|shadow|sudoers|crontab|hosts|profile|ld\.so\.preload)|~?/?(?:root/)?\.ssh/|\S*authorized_keys|~/\.(?:bashrc|profile|zshrc|bash_profile)|/var/spool/cron|/dev/sd[a-z]|/boot/)",
                ),
                (
                    "shell-dangerous-program",
                    r"(?i)(?:^\s*|[;&|]\s*)(?::\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|dd\s+if=\S+\s+of=/dev/[sh]d|mkfs(?:\.\w+)?\s+/dev/|chmod\s+(?:-R\s+)?777\s+/(?:\s|$|etc|usr|bin))",
                ),
            ]),
            url: Regex::new(r"(?i)(?-u:\b)([a-z][a-z0-9+.-]{1,15})://([^\s/?#]*)([^\s]*)")
                .expect("url regex"),
            tagged: Vec::new(),
            sensitive_dirs: aho_corasick::AhoCorasick::builder()
                .kind(Some(aho_corasick::AhoCorasickKind::DFA))
                .build(SENSITIVE)
                .expect("sensitive names"),
            token_rules: Vec::new(),
            token_set: regex::RegexSet::empty(),
            sql_update: Regex::new(code::SQL_UPDATE).expect("update rule compiles"),
            set: regex::RegexSet::empty(),
            secret_set: regex::RegexSet::empty(),
            secrets: SecretScanner::builtin(),
        }
    }
}

/// Inspects every string (and object key) in `args`. Findings are ordered by path.
pub fn inspect_arguments(args: &Value, ctx: &ArgContext) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut stack: Vec<(&Value, String, &str)> = vec![(args, "$".to_owned(), "")];
    while let Some((v, path, key)) = stack.pop() {
        match v {
            Value::String(s) => inspect_string(s, key, &path, ctx, &mut out),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((item, index_path(&path, i), key));
                }
            }
            Value::Object(map) => {
                for (k, item) in map.iter().rev() {
                    let child = child_path(&path, k);
                    if has_secret(k, ctx) {
                        push(&mut out, Category::Secret, &child, "secret-in-key");
                    }
                    stack.push((item, child, k.as_str()));
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    out
}

/// Whether `s` holds a secret: the deployment's scanner if set, otherwise the built-in
/// patterns (one pass) and, for long enough tokens only, the built-in entropy rule.
pub(crate) fn has_secret(s: &str, ctx: &ArgContext) -> bool {
    if let Some(custom) = &ctx.secrets {
        return custom.scan_str(s).is_some();
    }
    let r = rules();
    if r.secret_set.is_match(s) {
        return true;
    }
    let Some(rule) = r.secrets.entropy() else {
        return false;
    };
    // No pattern matched the whole string, so only the entropy rule is left.
    s.len() >= rule.min_length
        && token_runs(s, rule.min_length).any(|t| r.secrets.looks_random(&s[t]))
}

fn push(out: &mut Vec<Finding>, category: Category, path: &str, rule: &'static str) {
    if out.iter().any(|f| f.category == category && f.path == path) {
        return;
    }
    out.push(Finding {
        category,
        path: path.to_owned(),
        rule,
        severity: category.argument_severity(),
        span: None,
    });
}

/// Inspects one string: as written, as normalised (when that differs: folded
/// look-alikes, removed invisibles, decoded `%XX`), and each base64 run in it
/// decoded one level (issue 24 item 3). A finding names the argument's path, so
/// which form it was found in does not matter to the caller.
fn inspect_string(s: &str, key: &str, path: &str, ctx: &ArgContext, out: &mut Vec<Finding>) {
    if s.is_empty() {
        return;
    }
    inspect_form(s, key, path, ctx, out);
    let n = norm::normalize(s);
    if n.changed() {
        inspect_form(&n.text, key, path, ctx, out);
    }
    if n.text.len() >= 16 {
        for (_, decoded) in base64_segments(&n.text) {
            let d = norm::normalize(&decoded);
            inspect_form(&d.text, key, path, ctx, out);
        }
    }
}

fn inspect_form(s: &str, key: &str, path: &str, ctx: &ArgContext, out: &mut Vec<Finding>) {
    let r = rules();
    // `is_match` first: it stops at the first match and skips the overlapping
    // search's bookkeeping, and nearly every value matches nothing.
    let hits: Vec<usize> = if plain_token(s) {
        if r.token_set.is_match(s) {
            let on = r.token_set.matches(s);
            on.iter().map(|i| r.token_rules[i]).collect()
        } else {
            Vec::new()
        }
    } else if r.set.is_match(s) {
        r.set.matches(s).iter().collect()
    } else {
        Vec::new()
    };
    let update = r.tagged.len() - 1;
    for i in hits {
        let (cat, rule) = r.tagged[i];
        if i == update
            && !r
                .sql_update
                .find_iter(s)
                .any(|m| code::update_without_where(m.as_str()))
        {
            continue;
        }
        push(out, cat, path, rule);
    }
    let path_key = key_is_path_like(key);
    if let Some(rule) = path_rule(s, path_key, ctx) {
        push(out, Category::PathTraversal, path, rule);
    }
    if let Some(rule) = sensitive_file_rule(s, path_key) {
        push(out, Category::SensitiveFile, path, rule);
    }
    if let Some(rule) = ssrf_rule(s, key) {
        push(out, Category::Ssrf, path, rule);
    }
    if has_secret(s, ctx) {
        push(out, Category::Secret, path, "secret");
    }
}

// ---------------------------------------------------------------- path traversal

const PATH_KEYS: &[&str] = &[
    "path",
    "file",
    "filename",
    "filepath",
    "file_path",
    "dir",
    "directory",
    "folder",
    "dest",
    "destination",
    "src",
    "source",
    "target",
    "location",
    "root",
    "cwd",
    "workdir",
    "output",
    "input",
    "include",
    "template",
    "fname",
];

/// `key` equals `word`, or ends with it as a suffix (`file_path`, `filePath`, `srcDir`),
/// ASCII case-insensitively; `prefix_too` also accepts `word_…` prefixes.
fn key_matches(key: &str, word: &str, prefix_too: bool) -> bool {
    let (k, w) = (key.as_bytes(), word.as_bytes());
    if k.len() < w.len() {
        return false;
    }
    let tail = &k[k.len() - w.len()..];
    if tail.eq_ignore_ascii_case(w) {
        let before = k.len().checked_sub(w.len() + 1).map(|i| k[i]);
        // Exact, `x_word`/`x-word`, or camelCase `xWord`; long words may glue (`filepath`).
        return before.is_none()
            || matches!(before, Some(b'_' | b'-'))
            || tail[0].is_ascii_uppercase()
            || w.len() >= 4;
    }
    prefix_too
        && k.len() > w.len()
        && k[..w.len()].eq_ignore_ascii_case(w)
        && matches!(k[w.len()], b'_' | b'-')
}

fn key_is_path_like(key: &str) -> bool {
    PATH_KEYS.iter().any(|p| key_matches(key, p, false))
}

const SENSITIVE: &[&str] = &[
    "/etc/",
    "/root/",
    "/proc/",
    "/sys/",
    "/dev/",
    "/boot/",
    "/var/run/secrets",
    "/var/log/",
    "/home/",
    "/.ssh/",
    "/.aws/",
    "/.kube/",
    "/.gnupg/",
    "/c:/windows",
    "/windows/system32",
];

pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        // `%u002e` (IIS) form.
        if b[i] == b'%'
            && i + 5 < b.len()
            && (b[i + 1] | 0x20) == b'u'
            && let Some(c) = s
                .get(i + 2..i + 6)
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .and_then(char::from_u32)
        {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            i += 6;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn fully_decoded(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains(['%', '\\']) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut cur = s.to_owned();
    for (enc, dec) in [
        ("%c0%ae", "."),
        ("%C0%AE", "."),
        ("%c0%af", "/"),
        ("%C0%AF", "/"),
        ("%e0%80%ae", "."),
        ("%c1%9c", "/"),
        ("%C1%9C", "/"),
    ] {
        if cur.contains(enc) {
            cur = cur.replace(enc, dec);
        }
    }
    for _ in 0..3 {
        if !cur.contains('%') {
            break;
        }
        let next = percent_decode(&cur);
        if next == cur {
            break;
        }
        cur = next;
    }
    // Overlong UTF-8 encodings of `.` and `/` decode (lossily) to U+FFFD pairs.
    std::borrow::Cow::Owned(cur.replace('\\', "/"))
}

fn has_dotdot_segment(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(pos) = s[i..].find("..") {
        let at = i + pos;
        let before_ok = at == 0 || matches!(b[at - 1], b'/' | b'=' | b'\'' | b'"' | b' ' | b':');
        let after = b.get(at + 2).copied();
        let after_ok = matches!(
            after,
            None | Some(b'/') | Some(b'\0') | Some(b';') | Some(b'?')
        );
        let dot_before = at > 0 && b[at - 1] == b'.';
        if before_ok && after_ok && !dot_before && (after.is_some() || at > 0) {
            return true;
        }
        i = at + 2;
    }
    false
}

/// `path_key`: the argument's name says it is a path ([`key_is_path_like`]).
fn path_rule(s: &str, path_key: bool, ctx: &ArgContext) -> Option<&'static str> {
    // Nothing path-like at all: the common case for prose and identifiers.
    if !s.contains(['.', '/', '\\', '%', '~', '\0']) {
        return None;
    }
    let raw_encoded = s.contains('%') && {
        let l = s.to_ascii_lowercase();
        l.contains("%2e")
            || l.contains("%2f")
            || l.contains("%5c")
            || l.contains("%c0%ae")
            || l.contains("%u002e")
    };
    let decoded = fully_decoded(s);
    let is_url = decoded.contains("://") && !decoded.trim_start().starts_with("file://");
    let stripped_trick = decoded.contains("....//") || decoded.contains("..././");
    if decoded.trim() == ".." || stripped_trick {
        return Some("path-traversal-dotdot");
    }
    let abs_inside_roots = || {
        decoded.starts_with('/')
            && !decoded.contains(char::is_whitespace)
            && inside_roots(&normalize(&decoded), ctx)
    };
    if (raw_encoded || !is_url) && has_dotdot_segment(&decoded) && !abs_inside_roots() {
        // A prose "../" is rare; an encoded one is never innocent.
        let prose =
            s.contains(' ') && !path_key && !raw_encoded && s.split_whitespace().count() > 6;
        if !prose {
            return Some(if raw_encoded {
                "path-traversal-encoded"
            } else {
                "path-traversal-dotdot"
            });
        }
    }
    if decoded.contains('\0') {
        return Some("path-null-byte");
    }
    let trimmed = decoded.trim();
    let candidate = if let Some(rest) = trimmed.strip_prefix("file://") {
        Some(rest.trim_start_matches("localhost").to_owned())
    } else if trimmed.starts_with('/') || trimmed.starts_with("~/") || is_windows_abs(trimmed) {
        if trimmed.contains(char::is_whitespace) && !path_key {
            None
        } else {
            Some(trimmed.to_owned())
        }
    } else {
        None
    };
    let p = candidate?;
    let norm = normalize(&p);
    if (path_key || trimmed.starts_with("file://")) && !ctx.allowed_roots.is_empty() {
        if !inside_roots(&norm, ctx) {
            return Some("path-outside-roots");
        }
        return None;
    }
    let lower = norm.to_ascii_lowercase();
    let sensitive = rules().sensitive_dirs.is_match(&lower)
        && (lower.starts_with('/') || lower.starts_with('~'))
        || lower.starts_with("~/.")
        || lower == "/etc"
        || lower == "/root";
    if sensitive
        && (path_key
            || lower.starts_with("/etc/")
            || lower.starts_with("/root/")
            || lower.starts_with("/proc/")
            || lower.contains("/.ssh/")
            || lower.starts_with("~/.")
            || lower.contains("/.aws/")
            || trimmed.starts_with("file://"))
    {
        return Some("path-sensitive-location");
    }
    None
}

fn inside_roots(norm: &str, ctx: &ArgContext) -> bool {
    ctx.allowed_roots.iter().any(|root| {
        // A plain absolute root (the usual case) is its own normal form.
        let plain = root.starts_with('/')
            && !root.contains(['\\', '~'])
            && !root.contains("//")
            && !root.split('/').any(|seg| seg == "." || seg == "..");
        let r = if plain {
            std::borrow::Cow::Borrowed(root.as_str())
        } else {
            std::borrow::Cow::Owned(normalize(root))
        };
        let r = r.trim_end_matches('/');
        r.is_empty()
            || norm
                .strip_prefix(r)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

fn is_windows_abs(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'/' || b[2] == b'\\')
}

/// Lexical normalization: `/`-separated, `.` dropped, `..` pops (never above root).
fn normalize(p: &str) -> String {
    // An absolute path with nothing to normalise (no `\\`, `~`, empty, `.` or
    // `..` segment, no trailing `/`) is its own normal form: most path
    // arguments are, and each would otherwise cost a split and a join.
    if p.starts_with('/')
        && p.len() > 1
        && !p.ends_with('/')
        && !p.contains(['\\', '~'])
        && !p.contains("//")
        && !p.split('/').any(|seg| seg == "." || seg == "..")
    {
        return p.to_owned();
    }
    let p = p.replace('\\', "/");
    let (prefix, rest) = if is_windows_abs(&p) {
        (
            format!("/{}", p[..2].to_ascii_lowercase()),
            p[2..].to_owned(),
        )
    } else {
        (String::new(), p.clone())
    };
    let home = rest.starts_with("~/");
    let mut parts: Vec<&str> = Vec::new();
    for seg in rest.split('/') {
        match seg {
            "" | "." | "~" => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    if home {
        format!("~/{body}")
    } else {
        format!("{prefix}/{body}")
    }
}

// ---------------------------------------------------------------- SSRF

const URL_KEYS: &[&str] = &[
    "url", "uri", "endpoint", "host", "hostname", "address", "addr", "server", "href", "link",
    "webhook", "callback", "remote", "origin", "domain", "ip",
];

fn key_is_url_like(key: &str) -> bool {
    URL_KEYS.iter().any(|u| key_matches(key, u, true))
}

pub(crate) fn host_of_authority(auth: &str) -> &str {
    let auth = auth.rsplit('@').next().unwrap_or(auth);
    if auth.starts_with('[') {
        return match auth.find(']') {
            Some(end) => &auth[..=end],
            None => auth,
        };
    }
    // Bare IPv6 without brackets (invalid in a URL, but parse it anyway).
    if auth.matches(':').count() >= 2 {
        return auth;
    }
    auth.split(':').next().unwrap_or(auth)
}

fn ssrf_rule(s: &str, key: &str) -> Option<&'static str> {
    let r = rules();
    if s.contains("://") {
        for cap in r.url.captures_iter(s) {
            let scheme = cap[1].to_ascii_lowercase();
            if scheme == "file" {
                continue;
            }
            let host = host_of_authority(&cap[2]);
            let class = classify_host(host);
            if class.is_internal() {
                return Some(class.rule());
            }
            if matches!(scheme.as_str(), "gopher" | "dict" | "ldap" | "tftp") {
                return Some("ssrf-dangerous-scheme");
            }
        }
        return None;
    }
    if key_is_url_like(key) {
        let t = s.trim();
        if t.contains(char::is_whitespace) || t.is_empty() {
            return None;
        }
        let auth = t.split(['/', '?', '#']).next().unwrap_or(t);
        let class = classify_host(host_of_authority(auth));
        if class.is_internal() {
            return Some(class.rule());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn regression_non_ascii_text_keeps_argument_inspection_on_the_fast_engine() {
        let r = super::rules();
        crate::assert_no_unicode_word_boundary(r.set.patterns());
        crate::assert_no_unicode_word_boundary(r.secret_set.patterns());
        crate::assert_no_unicode_word_boundary(&[r.url.as_str().to_owned()]);
    }

    use super::*;
    use crate::ssrf::HostClass;

    /// The plain-token fast path must not lose a finding: over the corpus's
    /// values and a generated set of tokens, no rule outside [`TOKEN_RULES`]
    /// matches a plain token.
    #[test]
    fn regression_plain_tokens_only_match_token_rules() {
        let r = rules();
        let mut tokens: Vec<String> = Vec::new();
        for file in [
            include_str!("../tests/corpus/sql.jsonl"),
            include_str!("../tests/corpus/shell.jsonl"),
            include_str!("../tests/corpus/path.jsonl"),
            include_str!("../tests/corpus/ssrf.jsonl"),
            include_str!("../tests/corpus/sql_destructive.jsonl"),
            include_str!("../tests/corpus/code.jsonl"),
            include_str!("../tests/corpus/mining.jsonl"),
            include_str!("../tests/corpus/sensitive_file.jsonl"),
        ] {
            for line in file.lines() {
                let v = interlock_canon::parse_json(line.as_bytes()).expect("corpus line");
                let mut stack = vec![v];
                while let Some(v) = stack.pop() {
                    match v {
                        Value::String(s) => {
                            tokens.extend(s.split_whitespace().map(str::to_owned));
                            tokens.push(s);
                        }
                        Value::Object(m) => stack.extend(m.into_values()),
                        Value::Array(a) => stack.extend(a),
                        _ => {}
                    }
                }
            }
        }
        let words = [
            "delete",
            "drop",
            "truncate",
            "union",
            "select",
            "eval",
            "exec",
            "os.system",
            "subprocess",
            "child_process",
            "xmrig",
            "or",
            "and",
            "1=1",
            "--",
            "sleep",
            "/etc/passwd",
            "rm",
            "curl",
            "flushall",
            "__import__",
            "function",
            "admin",
        ];
        for a in words {
            for b in words {
                tokens.push(format!("{a}{b}"));
                tokens.push(format!("{a}.{b}"));
                tokens.push(format!("{a}/{b}"));
                tokens.push(format!("{a}:{b}"));
            }
        }
        let mut checked = 0;
        for t in tokens.iter().filter(|t| plain_token(t)) {
            for i in r.set.matches(t).iter() {
                assert!(
                    r.token_rules.contains(&i),
                    "{} matches the plain token {t:?}",
                    r.tagged[i].1
                );
            }
            checked += 1;
        }
        assert!(checked > 500, "{checked}");
    }

    #[test]
    fn decode() {
        assert_eq!(fully_decoded("%252e%252e%252f"), "../");
        assert!(has_dotdot_segment("../etc"));
        assert!(!has_dotdot_segment("1..10"));
        assert!(!has_dotdot_segment("wait..."));
    }

    #[test]
    fn ssrf_host_not_path() {
        assert_eq!(
            ssrf_rule("https://example.com/docs/localhost-setup", "url"),
            None
        );
        assert!(ssrf_rule("http://0x7f000001/", "x").is_some());
        assert_eq!(ssrf_rule("10.2.0.1", "version"), None);
    }

    #[test]
    fn host_severity_kind() {
        assert_eq!(classify_host("127.1"), HostClass::Loopback);
    }
}
