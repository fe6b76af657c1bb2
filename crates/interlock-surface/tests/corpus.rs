//! The surface classifier scored on labelled corpora of surface changes.
//!
//! Each case is a baseline surface, a changed one, and the class a reviewer
//! expects: `none` (no drift at all), `monitor` (reported, still served),
//! `hold` (waits for a reviewer) or `quarantine`, under the default
//! [`DriftPolicy`]. The class the classifier gives a case is the strongest
//! action over its drifts, or `none` when there are none.
//!
//! - `corpus/tuned.json` is the corpus the rules were tuned on: every risky
//!   change beside a benign look-alike. Precision and recall must be at least
//!   0.95 for every class.
//! - `corpus/heldout.json` was written after tuning stopped and is never
//!   tuned on: its figures are printed, not asserted, so they stay honest.

use std::collections::BTreeMap;

use interlock_canon::from_serde_json;
use interlock_surface::{Action, DriftPolicy, Surface, diff};
use serde_json::Value;

const CLASSES: [&str; 4] = ["none", "monitor", "hold", "quarantine"];

/// A case's surface: its tools and instructions, and the prompts,
/// resources and resource templates it pins (issue 16 item 6), if any.
fn surface(v: &Value, id: &str) -> Surface {
    let stored = from_serde_json(v).unwrap_or_else(|e| panic!("{id}: {e:?}"));
    Surface::from_stored(&stored).unwrap_or_else(|e| panic!("{id}: {e}"))
}

/// The classifier's class for one case, and the drifts behind it.
fn classify(case: &Value) -> (&'static str, Vec<String>) {
    let id = case["id"].as_str().unwrap_or("?");
    let drifts = diff(
        &surface(&case["baseline"], id),
        &surface(&case["observed"], id),
    );
    let policy = DriftPolicy::default();
    let class = match drifts.iter().map(|d| policy.action(d)).max() {
        None => "none",
        Some(Action::Monitor) => "monitor",
        Some(Action::Hold) => "hold",
        Some(Action::Quarantine) => "quarantine",
    };
    (class, drifts.iter().map(ToString::to_string).collect())
}

/// Per-class precision and recall, printed with the confusion matrix and
/// every miss.
struct Score {
    n: usize,
    per_class: BTreeMap<&'static str, (f64, f64)>,
}

fn score(file: &str) -> Score {
    // The runner's manifest directory, not the compiled one: a build cache
    // shared between clones may hand this binary over from another clone.
    let manifest = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    let path = format!("{manifest}/tests/corpus/{file}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let corpus: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let cases = corpus["cases"].as_array().expect("cases");
    // confusion[expected][got]
    let mut confusion: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for case in cases {
        let expected = case["expect"].as_str().expect("expect");
        assert!(
            CLASSES.contains(&expected),
            "{}: unknown class {expected:?}",
            case["id"]
        );
        let (got, drifts) = classify(case);
        *confusion
            .entry(expected)
            .or_default()
            .entry(got)
            .or_insert(0) += 1;
        if got != expected {
            println!(
                "  MISS {} ({}): expected {expected}, got {got}: {drifts:?}",
                case["id"].as_str().unwrap_or("?"),
                case["bullet"].as_str().unwrap_or("")
            );
        }
    }
    let cell = |e: &str, g: &str| {
        confusion
            .get(e)
            .and_then(|r| r.get(g))
            .copied()
            .unwrap_or(0)
    };
    println!("{file}: {} cases", cases.len());
    println!(
        "  {:<12}{}",
        "expected\\got",
        CLASSES.map(|c| format!("{c:>11}")).concat()
    );
    for e in CLASSES {
        println!(
            "  {e:<12}{}",
            CLASSES.map(|g| format!("{:>11}", cell(e, g))).concat()
        );
    }
    let mut per_class = BTreeMap::new();
    for c in CLASSES {
        let tp = cell(c, c) as f64;
        let predicted: usize = CLASSES.iter().map(|e| cell(e, c)).sum();
        let actual: usize = CLASSES.iter().map(|g| cell(c, g)).sum();
        // No case of a class predicted (or present) scores as perfect for
        // that side only when nothing was missed there either.
        let precision = if predicted == 0 {
            1.0
        } else {
            tp / predicted as f64
        };
        let recall = if actual == 0 { 1.0 } else { tp / actual as f64 };
        println!(
            "  {c:<12} precision {precision:.3} ({}/{predicted})  recall {recall:.3} ({}/{actual})",
            tp as usize, tp as usize
        );
        per_class.insert(c, (precision, recall));
    }
    Score {
        n: cases.len(),
        per_class,
    }
}

#[test]
fn surface_classifier_scores_at_least_095_per_class_on_the_tuned_corpus() {
    let s = score("tuned.json");
    assert!(s.n >= 80, "the tuned corpus has {} cases", s.n);
    for (class, (p, r)) in &s.per_class {
        assert!(
            *p >= 0.95 && *r >= 0.95,
            "{class}: precision {p:.3}, recall {r:.3}"
        );
    }
}

#[test]
fn surface_classifier_is_scored_on_the_held_out_set() {
    let s = score("heldout.json");
    assert!(s.n >= 30, "the held-out set has {} cases", s.n);
    // Reported, not asserted: the held-out set measures, it does not gate.
    assert_eq!(s.per_class.len(), CLASSES.len());
    for (class, (p, r)) in &s.per_class {
        assert!(p.is_finite() && r.is_finite(), "{class}");
    }
}
