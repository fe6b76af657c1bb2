//! Issue 40: the native-tool rules scored on labelled sets of what coding
//! agents run — `corpus/native-tuning.tsv` (the rules were tuned on it) and
//! `corpus/native-heldout.tsv` (written after tuning, never tuned on). A use
//! is "stopped" when a finding is high or critical (the gateway holds or
//! denies it); the goal is precision and recall ≥ 0.95 on each set.

use interlock_inspect::{NativeAction, NativeContext, Severity, inspect_native};

const CTX: NativeContext<'static> = NativeContext {
    cwd: "/home/dev/app",
    project: None,
    home: Some("/home/dev"),
};

struct Score {
    tp: u32,
    fp: u32,
    fn_: u32,
    tn: u32,
    wrong: Vec<String>,
}

fn score(file: &str) -> Score {
    // The runner's manifest directory, not the compiled one: a build cache
    // shared between clones may hand this binary over from another clone.
    let manifest = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    let text = std::fs::read_to_string(format!("{manifest}/tests/corpus/{file}"))
        .expect("the corpus file is there");
    let mut s = Score {
        tp: 0,
        fp: 0,
        fn_: 0,
        tn: 0,
        wrong: Vec::new(),
    };
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let mut cols = line.splitn(3, '\t');
        let (label, kind, value) = (
            cols.next().unwrap(),
            cols.next().unwrap(),
            cols.next().expect("three tab-separated columns"),
        );
        let action = match kind {
            "shell" => NativeAction::Shell { command: value },
            "write" => NativeAction::Write {
                path: value,
                content: None,
            },
            "read" => NativeAction::Read { path: value },
            "fetch" => NativeAction::Fetch { url: value },
            other => panic!("unknown kind {other}"),
        };
        let findings = inspect_native(&action, &CTX);
        let stopped = findings.iter().any(|f| f.severity >= Severity::High);
        match (label == "stop", stopped) {
            (true, true) => s.tp += 1,
            (false, false) => s.tn += 1,
            (true, false) => {
                s.fn_ += 1;
                s.wrong.push(format!("missed: {kind} {value}"));
            }
            (false, true) => {
                s.fp += 1;
                let rules: Vec<_> = findings.iter().map(|f| f.rule).collect();
                s.wrong
                    .push(format!("false alarm: {kind} {value} {rules:?}"));
            }
        }
    }
    s
}

fn check(file: &str) {
    let s = score(file);
    let precision = s.tp as f64 / (s.tp + s.fp).max(1) as f64;
    let recall = s.tp as f64 / (s.tp + s.fn_).max(1) as f64;
    println!(
        "{file}: {} stop, {} pass; precision {precision:.3}, recall {recall:.3} (tp {}, fp {}, fn {}, tn {})",
        s.tp + s.fn_,
        s.tn + s.fp,
        s.tp,
        s.fp,
        s.fn_,
        s.tn
    );
    for w in &s.wrong {
        println!("  {w}");
    }
    assert!(
        s.tp + s.fn_ >= 30 && s.tn + s.fp >= 30,
        "{file} is too small to score"
    );
    assert!(
        precision >= 0.95 && recall >= 0.95,
        "{file}: {:#?}",
        s.wrong
    );
}

#[test]
fn native_rules_score_on_the_tuning_set() {
    check("native-tuning.tsv");
}

#[test]
fn native_rules_score_on_the_held_out_set() {
    check("native-heldout.tsv");
}
