//! Labelled corpus: precision and recall per category, asserted ≥ 0.95.
//!
//! Issue 24 added the `sql-destructive`, `code`, `mining` and `sensitive-file`
//! argument files, paraphrased injection and assignment/public-material secrets
//! for responses (all from `corpus/gen24.py`), with obfuscated variants of attacks
//! (fullwidth, confusables, zero-width, leetspeak, `%XX`, base64) in each file.

use interlock_canon::{Value, parse_json};
use interlock_inspect::{ArgContext, Category, ResponsePolicy, inspect_arguments, scan_response};

pub const ARG_FILES: &[(&str, &str, Category)] = &[
    ("sql", include_str!("corpus/sql.jsonl"), Category::Sql),
    ("shell", include_str!("corpus/shell.jsonl"), Category::Shell),
    (
        "path",
        include_str!("corpus/path.jsonl"),
        Category::PathTraversal,
    ),
    ("ssrf", include_str!("corpus/ssrf.jsonl"), Category::Ssrf),
    (
        "secret (args)",
        include_str!("corpus/secret.jsonl"),
        Category::Secret,
    ),
    (
        "sql-destructive",
        include_str!("corpus/sql_destructive.jsonl"),
        Category::SqlDestructive,
    ),
    (
        "code",
        include_str!("corpus/code.jsonl"),
        Category::CodeExecution,
    ),
    (
        "sensitive-file",
        include_str!("corpus/sensitive_file.jsonl"),
        Category::SensitiveFile,
    ),
    (
        "mining",
        include_str!("corpus/mining.jsonl"),
        Category::Cryptomining,
    ),
];

pub const RESP_FILES: &[(&str, &str, Category)] = &[
    ("pii", include_str!("corpus/pii.jsonl"), Category::Pii),
    (
        "secret (resp)",
        include_str!("corpus/resp_secret.jsonl"),
        Category::Secret,
    ),
    (
        "injection",
        include_str!("corpus/injection.jsonl"),
        Category::PromptInjection,
    ),
    (
        "injection (paraphrase)",
        include_str!("corpus/injection_paraphrase.jsonl"),
        Category::PromptInjection,
    ),
    (
        "secret (assign)",
        include_str!("corpus/resp_secret_assignment.jsonl"),
        Category::Secret,
    ),
];

/// Held-out rows (written after tuning, never tuned against).
pub const HOLDOUT_ARG_FILES: &[(&str, &str, Category)] = &[
    (
        "sql",
        include_str!("corpus/holdout_sql.jsonl"),
        Category::Sql,
    ),
    (
        "shell",
        include_str!("corpus/holdout_shell.jsonl"),
        Category::Shell,
    ),
    (
        "path",
        include_str!("corpus/holdout_path.jsonl"),
        Category::PathTraversal,
    ),
    (
        "ssrf",
        include_str!("corpus/holdout_ssrf.jsonl"),
        Category::Ssrf,
    ),
    (
        "secret (args)",
        include_str!("corpus/holdout_secret.jsonl"),
        Category::Secret,
    ),
    (
        "sql-destructive",
        include_str!("corpus/holdout_sql_destructive.jsonl"),
        Category::SqlDestructive,
    ),
    (
        "code",
        include_str!("corpus/holdout_code.jsonl"),
        Category::CodeExecution,
    ),
    (
        "sensitive-file",
        include_str!("corpus/holdout_sensitive_file.jsonl"),
        Category::SensitiveFile,
    ),
    (
        "mining",
        include_str!("corpus/holdout_mining.jsonl"),
        Category::Cryptomining,
    ),
];

pub const HOLDOUT_RESP_FILES: &[(&str, &str, Category)] = &[
    (
        "pii",
        include_str!("corpus/holdout_pii.jsonl"),
        Category::Pii,
    ),
    (
        "secret (resp)",
        include_str!("corpus/holdout_resp_secret.jsonl"),
        Category::Secret,
    ),
    (
        "injection",
        include_str!("corpus/holdout_injection.jsonl"),
        Category::PromptInjection,
    ),
    (
        "injection (paraphrase)",
        include_str!("corpus/holdout_injection_paraphrase.jsonl"),
        Category::PromptInjection,
    ),
    (
        "secret (assign)",
        include_str!("corpus/holdout_resp_secret_assignment.jsonl"),
        Category::Secret,
    ),
];

#[derive(Default)]
pub struct Counts {
    tp: u32,
    fp: u32,
    fn_: u32,
    tn: u32,
    misses: Vec<String>,
}

impl Counts {
    fn add(&mut self, attack: bool, predicted: bool, what: &str) {
        match (attack, predicted) {
            (true, true) => self.tp += 1,
            (false, true) => {
                self.fp += 1;
                self.misses.push(format!("FP {what}"));
            }
            (true, false) => {
                self.fn_ += 1;
                self.misses.push(format!("FN {what}"));
            }
            (false, false) => self.tn += 1,
        }
    }
    fn precision(&self) -> f64 {
        f64::from(self.tp) / f64::from((self.tp + self.fp).max(1))
    }
    fn recall(&self) -> f64 {
        f64::from(self.tp) / f64::from((self.tp + self.fn_).max(1))
    }
}

fn rows(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| parse_json(l.as_bytes()).expect("corpus line parses"))
}

fn ctx() -> ArgContext {
    ArgContext::with_roots(["/workspace", "/tmp/scratch"])
}

pub type Table = Vec<(&'static str, Counts)>;

pub fn evaluate(
    arg_files: &[(&'static str, &str, Category)],
    resp_files: &[(&'static str, &str, Category)],
) -> Table {
    let mut table = Vec::new();
    for (name, text, cat) in arg_files {
        let mut c = Counts::default();
        for row in rows(text) {
            let attack = row.get("attack").and_then(Value::as_bool).expect("attack");
            let value = row.get("value").expect("value");
            let found = inspect_arguments(value, &ctx());
            let predicted = found.iter().any(|f| f.category == *cat);
            c.add(attack, predicted, &interlock_canon::canonical_string(value));
        }
        table.push((*name, c));
    }
    for (name, text, cat) in resp_files {
        let mut c = Counts::default();
        for row in rows(text) {
            let attack = row.get("attack").and_then(Value::as_bool).expect("attack");
            let t = row.get("text").and_then(Value::as_str).expect("text");
            let scan = scan_response(t, &ResponsePolicy::default());
            let predicted = scan.findings.iter().any(|f| f.category == *cat);
            if predicted {
                assert!(
                    scan.redacted.contains("[REDACTED:"),
                    "redacted in place: {t:?}"
                );
            }
            c.add(attack, predicted, &format!("{t:?}"));
        }
        table.push((*name, c));
    }
    table
}

/// Prints the table; whether every category reaches 0.95 for both figures.
pub fn print(table: &Table) -> bool {
    println!(
        "\n{:<23} {:>4} {:>4} {:>4} {:>4} {:>9} {:>7}",
        "category", "TP", "FP", "FN", "TN", "precision", "recall"
    );
    let mut ok = true;
    for (name, c) in table {
        println!(
            "{:<23} {:>4} {:>4} {:>4} {:>4} {:>9.3} {:>7.3}",
            name,
            c.tp,
            c.fp,
            c.fn_,
            c.tn,
            c.precision(),
            c.recall()
        );
        ok &= c.precision() >= 0.95 && c.recall() >= 0.95;
    }
    for (name, c) in table {
        for m in &c.misses {
            println!("  [{name}] {m}");
        }
    }
    ok
}

#[test]
fn corpus_precision_recall() {
    let table = evaluate(ARG_FILES, RESP_FILES);
    assert!(
        print(&table),
        "every category needs precision and recall >= 0.95"
    );
}

/// Rows written after tuning and never tuned against: printed, not asserted.
#[test]
fn holdout_precision_recall() {
    let table = evaluate(HOLDOUT_ARG_FILES, HOLDOUT_RESP_FILES);
    println!("\nHELD-OUT (written after tuning; never tuned against):");
    print(&table);
    // Held-out floors, set from the first measurement so a regression fails: no
    // benign look-alike may be flagged, and recall may not drop below what the
    // untuned rules reached (secrets miss token formats core has no pattern for yet).
    for (name, c) in &table {
        assert!(
            c.precision() >= 0.95,
            "held-out precision of {name}: {}",
            c.precision()
        );
        assert!(
            c.recall() >= 0.80,
            "held-out recall of {name}: {}",
            c.recall()
        );
    }
}
