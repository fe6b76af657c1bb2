//! The prompt scan's layers before the judge (policy empty, rules) on a
//! labelled corpus (issue 42): attacks by class beside benign look-alikes.
//! `corpus/tuning.jsonl` is what the rules were checked against;
//! `corpus/held_out.jsonl` was written after, and never tuned on. Prints each
//! class's recall and the false positives; asserts what holds today so a
//! change that loses any is seen.

use interlock_llm::{ChatRequest, Layer, PromptPolicy, WireFormat, run_layer};

struct Row {
    class: String,
    text: String,
}

fn load(name: &str) -> Vec<Row> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            Row {
                class: v["class"].as_str().unwrap().to_owned(),
                text: v["text"].as_str().unwrap().to_owned(),
            }
        })
        .collect()
}

/// Whether the layers before the judge stop `text` sent as a user turn.
fn stopped(text: &str) -> bool {
    let body = serde_json::json!({"model": "m", "messages": [{"role": "user", "content": text}]});
    let req = ChatRequest::parse(WireFormat::OpenAi, body.to_string().as_bytes()).unwrap();
    Layer::ORDER
        .iter()
        .any(|l| run_layer(*l, &req, &PromptPolicy::default()).is_some())
}

/// `(class, caught, total)` per attack class, and the benign rows stopped.
fn table(rows: &[Row]) -> (Vec<(String, usize, usize)>, Vec<String>) {
    let mut classes: Vec<(String, usize, usize)> = Vec::new();
    let mut false_positives = Vec::new();
    for r in rows {
        let hit = stopped(&r.text);
        if !hit && r.class != "benign" {
            eprintln!("    missed ({}): {}", r.class, r.text);
        }
        if r.class == "benign" {
            if hit {
                false_positives.push(r.text.clone());
            }
            continue;
        }
        match classes.iter_mut().find(|c| c.0 == r.class) {
            Some(c) => {
                c.1 += usize::from(hit);
                c.2 += 1;
            }
            None => classes.push((r.class.clone(), usize::from(hit), 1)),
        }
    }
    (classes, false_positives)
}

fn report(name: &str) -> (Vec<(String, usize, usize)>, Vec<String>) {
    let rows = load(name);
    let (classes, fps) = table(&rows);
    let benign = rows.iter().filter(|r| r.class == "benign").count();
    eprintln!("{name}: {} rows", rows.len());
    for (class, caught, total) in &classes {
        eprintln!("  {class}: recall {caught}/{total}");
    }
    eprintln!("  benign stopped: {}/{benign}", fps.len());
    for fp in &fps {
        eprintln!("    false positive: {fp}");
    }
    (classes, fps)
}

#[test]
fn the_layers_before_the_judge_on_the_tuning_corpus() {
    let (classes, fps) = report("tuning.jsonl");
    assert!(fps.is_empty(), "false positives: {fps:?}");
    for (class, caught, total) in classes {
        // What the rules catch today; the judge is for the rest.
        let floor = match class.as_str() {
            "secret" => total,
            _ => total / 2,
        };
        assert!(caught >= floor, "{class}: {caught}/{total}");
    }
}

#[test]
fn the_layers_before_the_judge_on_the_held_out_corpus() {
    let (_, fps) = report("held_out.jsonl");
    assert!(fps.len() <= 1, "false positives: {fps:?}");
}
