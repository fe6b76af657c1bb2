//! A shell command line as the shell would split it: simple commands, the
//! pipelines and lists that join them, their words unquoted, their
//! redirections, and the scripts nested in command and process substitutions.
//!
//! Why not a crate: the well-kept bash parsers either bring `insta` and
//! `cached` as run-time dependencies (`brush-parser`) or a C grammar
//! (`tree-sitter-bash`), and `shlex`, which this crate would otherwise use,
//! splits words but knows no operators (`a;b` is one word to it). What the
//! inspector needs is small — words, operators, quotes, substitutions and
//! here-documents — and must never panic on hostile input
//! (`tests/props.rs`); a line it cannot read is reported as such
//! ([`Script::unreadable`]) rather than guessed at.

/// How deep substitutions may nest before the line is refused as unreadable.
pub(crate) const MAX_DEPTH: usize = 8;

/// A parsed command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Script {
    /// Pipelines in order; each is the simple commands joined by `|`.
    pub pipelines: Vec<Vec<Simple>>,
    /// Why the line could not be read fully (an open quote, nesting deeper
    /// than [`MAX_DEPTH`]); what was read is still inspected.
    pub unreadable: Option<&'static str>,
}

/// One simple command.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Simple {
    /// Its words, unquoted (a substitution stays as written, `$(…)`).
    pub words: Vec<String>,
    pub redirects: Vec<Redirect>,
    /// The text of a here-document or here-string fed to it.
    pub stdin_text: Option<String>,
    /// Scripts in its command and process substitutions.
    pub nested: Vec<Script>,
}

/// A redirection: `>`, `>>`, `<`, `&>`, … and what it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub op: String,
    pub target: String,
}

impl Redirect {
    /// Whether it writes to its target.
    pub fn writes(&self) -> bool {
        self.op.contains('>') && !self.op.ends_with('&') && !self.target.starts_with('&')
    }

    /// Whether it reads its target.
    pub fn reads(&self) -> bool {
        self.op == "<" || self.op == "<>"
    }
}

impl Script {
    /// Every simple command, nested ones included, with its depth.
    pub fn commands(&self) -> Vec<&Simple> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(s) = stack.pop() {
            for cmd in s.pipelines.iter().flatten() {
                out.push(cmd);
                stack.extend(cmd.nested.iter());
            }
        }
        out
    }

    /// Whether any command (nested ones included) satisfies `f`.
    pub fn any(&self, f: impl Fn(&Simple) -> bool) -> bool {
        self.commands().into_iter().any(f)
    }
}

/// Parses `line`; `depth` is how deep in substitutions it sits.
pub(crate) fn parse(line: &str, depth: usize) -> Script {
    let mut p = Parser {
        chars: line.chars().collect(),
        at: 0,
        depth,
        script: Script::default(),
        pipeline: Vec::new(),
        cmd: Simple::default(),
        word: String::new(),
        in_word: false,
        pending_redirect: None,
        heredocs: Vec::new(),
    };
    if depth > MAX_DEPTH {
        p.script.unreadable = Some("substitutions nest too deeply to inspect");
        return p.script;
    }
    p.run();
    p.script
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    depth: usize,
    script: Script,
    pipeline: Vec<Simple>,
    cmd: Simple,
    word: String,
    in_word: bool,
    /// A redirection operator waiting for its target word.
    pending_redirect: Option<String>,
    /// Here-document delimiters (and whether `<<-`) whose bodies start at the
    /// next newline.
    heredocs: Vec<(String, bool)>,
}

impl Parser {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.at + k).copied()
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => {
                    self.end_word();
                    self.at += 1;
                }
                '\n' => {
                    self.end_command();
                    self.end_pipeline();
                    self.at += 1;
                    self.read_heredoc_bodies();
                }
                ';' | '(' | ')' => {
                    self.end_command();
                    self.end_pipeline();
                    self.at += 1;
                }
                '&' if self.peek(1) == Some('&') => {
                    self.end_command();
                    self.end_pipeline();
                    self.at += 2;
                }
                '&' if self.peek(1) == Some('>') => {
                    self.end_word();
                    let op = if self.peek(2) == Some('>') {
                        "&>>"
                    } else {
                        "&>"
                    };
                    self.at += op.len();
                    self.pending_redirect = Some(op.to_owned());
                }
                '&' => {
                    self.end_command();
                    self.end_pipeline();
                    self.at += 1;
                }
                '|' if self.peek(1) == Some('|') => {
                    self.end_command();
                    self.end_pipeline();
                    self.at += 2;
                }
                '|' => {
                    self.end_command();
                    self.at += if self.peek(1) == Some('&') { 2 } else { 1 };
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    // Process substitution: its script runs too.
                    self.at += 2;
                    let inner = self.until_close(')');
                    self.push_nested(&inner);
                    self.word.push_str("<(…)");
                    self.in_word = true;
                }
                '<' | '>' => self.redirect(),
                '#' if !self.in_word => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                '\'' => {
                    self.at += 1;
                    self.in_word = true;
                    while let Some(c) = self.peek(0) {
                        self.at += 1;
                        if c == '\'' {
                            break;
                        }
                        self.word.push(c);
                    }
                    if self.at > self.chars.len() || self.chars[self.at - 1] != '\'' {
                        self.script.unreadable = Some("a quote is never closed");
                    }
                }
                '"' => self.double_quoted(),
                '\\' => {
                    self.at += 1;
                    match self.peek(0) {
                        Some('\n') => self.at += 1,
                        Some(c) => {
                            self.word.push(c);
                            self.in_word = true;
                            self.at += 1;
                        }
                        None => {}
                    }
                }
                '$' if self.peek(1) == Some('(') => self.dollar_paren(),
                '`' => self.backtick(),
                c => {
                    self.word.push(c);
                    self.in_word = true;
                    self.at += 1;
                }
            }
        }
        self.end_command();
        self.end_pipeline();
    }

    fn double_quoted(&mut self) {
        self.at += 1;
        self.in_word = true;
        loop {
            match self.peek(0) {
                None => {
                    self.script.unreadable = Some("a quote is never closed");
                    return;
                }
                Some('"') => {
                    self.at += 1;
                    return;
                }
                Some('\\') => {
                    match self.peek(1) {
                        Some(c @ ('$' | '`' | '"' | '\\')) => self.word.push(c),
                        Some('\n') => {}
                        Some(c) => {
                            self.word.push('\\');
                            self.word.push(c);
                        }
                        None => {}
                    }
                    self.at += 2;
                }
                Some('$') if self.peek(1) == Some('(') => self.dollar_paren(),
                Some('`') => self.backtick(),
                Some(c) => {
                    self.word.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// `$(…)` (a command substitution) or `$((…))` (arithmetic, kept as text).
    fn dollar_paren(&mut self) {
        self.in_word = true;
        if self.peek(2) == Some('(') {
            self.at += 3;
            let inner = self.until_close(')');
            self.word.push_str("$((");
            self.word.push_str(&inner);
            self.word.push(')');
            return;
        }
        self.at += 2;
        let inner = self.until_close(')');
        self.push_nested(&inner);
        self.word.push_str("$(");
        self.word.push_str(&inner);
        self.word.push(')');
    }

    fn backtick(&mut self) {
        self.in_word = true;
        self.at += 1;
        let mut inner = String::new();
        let mut closed = false;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '`' => {
                    closed = true;
                    break;
                }
                '\\' => {
                    if let Some(n) = self.peek(0) {
                        inner.push(n);
                        self.at += 1;
                    }
                }
                c => inner.push(c),
            }
        }
        if !closed {
            self.script.unreadable = Some("a backquote is never closed");
        }
        self.push_nested(&inner);
        self.word.push_str("$(");
        self.word.push_str(&inner);
        self.word.push(')');
    }

    /// The text up to the `close` that matches an opening already consumed,
    /// quote-aware; the close is consumed too.
    fn until_close(&mut self, close: char) -> String {
        let open = if close == ')' { '(' } else { close };
        let mut depth = 1usize;
        let mut out = String::new();
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"'), '\\') | (None, '\\') => {
                    out.push(c);
                    if let Some(n) = self.peek(0) {
                        out.push(n);
                        self.at += 1;
                    }
                    continue;
                }
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, c) if c == open => depth += 1,
                (None, c) if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return out;
                    }
                }
                _ => {}
            }
            out.push(c);
        }
        self.script.unreadable = Some("a substitution is never closed");
        out
    }

    fn push_nested(&mut self, inner: &str) {
        let nested = parse(inner, self.depth + 1);
        if let Some(why) = nested.unreadable {
            self.script.unreadable.get_or_insert(why);
        }
        self.cmd.nested.push(nested);
    }

    fn redirect(&mut self) {
        // A word of digits just before it is its file descriptor.
        let fd = self.in_word && self.word.chars().all(|c| c.is_ascii_digit());
        let mut op = String::new();
        if fd {
            op = std::mem::take(&mut self.word);
            self.in_word = false;
        } else {
            self.end_word();
        }
        let first = self.chars[self.at];
        op.push(first);
        self.at += 1;
        while let Some(c) = self.peek(0) {
            if c == '>' || c == '<' || c == '&' || c == '|' || (c == '-' && op.ends_with("<<")) {
                op.push(c);
                self.at += 1;
                if op.len() >= 4 {
                    break;
                }
            } else {
                break;
            }
        }
        // `>&2`, `2>&1`: a descriptor, not a file.
        if op.ends_with('&') {
            let mut target = String::new();
            while let Some(c) = self.peek(0).filter(|c| c.is_ascii_digit() || *c == '-') {
                target.push(c);
                self.at += 1;
            }
            if !target.is_empty() {
                self.cmd.redirects.push(Redirect { op, target });
                return;
            }
        }
        self.pending_redirect = Some(op);
    }

    fn end_word(&mut self) {
        if !self.in_word {
            return;
        }
        let word = std::mem::take(&mut self.word);
        self.in_word = false;
        match self.pending_redirect.take() {
            Some(op) if op.trim_start_matches(|c: char| c.is_ascii_digit()) == "<<<" => {
                self.cmd.stdin_text = Some(word.clone());
                self.cmd.redirects.push(Redirect { op, target: word });
            }
            Some(op) if op.contains("<<") => {
                self.heredocs.push((word.clone(), op.ends_with('-')));
                self.cmd.redirects.push(Redirect { op, target: word });
            }
            Some(op) => self.cmd.redirects.push(Redirect { op, target: word }),
            None => self.cmd.words.push(word),
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        self.pending_redirect = None;
        let cmd = std::mem::take(&mut self.cmd);
        if !cmd.words.is_empty() || !cmd.redirects.is_empty() || !cmd.nested.is_empty() {
            self.pipeline.push(cmd);
        }
    }

    fn end_pipeline(&mut self) {
        if !self.pipeline.is_empty() {
            let p = std::mem::take(&mut self.pipeline);
            self.script.pipelines.push(p);
        }
    }

    /// After a newline: the bodies of pending here-documents, given as the
    /// stdin text of the command that asked for them.
    fn read_heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs) in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            loop {
                if self.at >= self.chars.len() {
                    break;
                }
                let start = self.at;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.at += 1;
                }
                let line: String = self.chars[start..self.at].iter().collect();
                self.at = (self.at + 1).min(self.chars.len());
                let cmp = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if cmp == delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            // The last command of the last pipeline asked for it.
            if let Some(cmd) = self.script.pipelines.last_mut().and_then(|p| p.last_mut()) {
                let text = cmd.stdin_text.get_or_insert_with(String::new);
                text.push_str(&body);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<Vec<String>>> {
        parse(line, 0)
            .pipelines
            .iter()
            .map(|p| p.iter().map(|c| c.words.clone()).collect())
            .collect()
    }

    #[test]
    fn lists_pipelines_and_quotes() {
        assert_eq!(
            words("git add -A && git commit -m 'a; b' | tee log; echo \"x y\"z"),
            vec![
                vec![vec!["git", "add", "-A"]],
                vec![vec!["git", "commit", "-m", "a; b"], vec!["tee", "log"]],
                vec![vec!["echo", "x yz"]],
            ]
            .into_iter()
            .map(|p| {
                p.into_iter()
                    .map(|c| c.into_iter().map(String::from).collect())
                    .collect()
            })
            .collect::<Vec<Vec<Vec<String>>>>()
        );
    }

    #[test]
    fn substitutions_and_redirects() {
        let s = parse(
            "bash -c \"$(curl -fsSL https://x.sh/i)\" 2>&1 > /tmp/out",
            0,
        );
        let cmd = &s.pipelines[0][0];
        assert_eq!(cmd.words[0], "bash");
        assert_eq!(cmd.nested[0].pipelines[0][0].words[0], "curl");
        assert_eq!(cmd.redirects.len(), 2);
        assert!(cmd.redirects[1].writes() && cmd.redirects[1].target == "/tmp/out");
        assert!(!cmd.redirects[0].writes());
        let s = parse("cat <<EOF > ~/.bashrc\nrm -rf /\nEOF\necho done", 0);
        assert_eq!(s.pipelines.len(), 2);
        assert_eq!(s.pipelines[0][0].stdin_text.as_deref(), Some("rm -rf /\n"));
        assert_eq!(s.pipelines[1][0].words, vec!["echo", "done"]);
    }

    #[test]
    fn unreadable_lines_say_so() {
        assert!(parse("echo 'open", 0).unreadable.is_some());
        assert!(parse("echo $(ls", 0).unreadable.is_some());
        let deep = "$(".repeat(20) + &")".repeat(20);
        assert!(parse(&deep, 0).unreadable.is_some());
    }
}
