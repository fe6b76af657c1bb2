//! The prompt scan's layers before the judge (issue 42): an 8 KB chat
//! request — a system prompt, a user turn, a tool call and its 7 KB result —
//! read, fingerprinted and run through every layer before the judge
//! (policy, rules, patterns).
//! Goal: ≤ 1 ms at p50 for layers 1–4.
//! Prints p50 and p99 of the whole, and each part, over 2,000 requests.
//!
//! ```text
//! cargo bench -p interlock-llm --bench scan
//! ```

use std::hint::black_box;
use std::time::Instant;

use interlock_llm::{ChatRequest, Layer, PromptPolicy, WireFormat, run_layer};

fn request_8k() -> Vec<u8> {
    let mut page = String::new();
    let mut i = 0;
    while page.len() < 7_200 {
        page.push_str(&format!(
            "Section {i}: the release train leaves every second Tuesday; patches merged by Monday \
             noon ship with it, and the changelog lists each one with its author. "
        ));
        i += 1;
    }
    let body = serde_json::json!({
        "model": "gpt-4o-mini",
        "stream": true,
        "messages": [
            {"role": "system", "content": "You are a release assistant. Answer briefly and cite the section you used."},
            {"role": "user", "content": "When does the next release leave, and what must be merged before it? Summarize the policy page for the team channel."},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "fetch", "arguments": "{\"url\":\"https://wiki.example.com/release-policy\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": page},
        ],
    });
    let bytes = body.to_string().into_bytes();
    assert!((7_500..9_000).contains(&bytes.len()), "{}", bytes.len());
    bytes
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p / 100.0).round() as usize]
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("scan: run with `cargo bench -p interlock-llm --bench scan`; skipped");
        return;
    }
    interlock_inspect::warm_up();
    let body = request_8k();
    let policy = PromptPolicy {
        blocked_keywords: vec!["project falcon".into(), "codename orca".into()],
        blocked_topics: [("weapons".to_owned(), vec!["nerve agent".to_owned()])].into(),
        max_chars: Some(200_000),
    };
    let mut whole = Vec::new();
    let mut parse = Vec::new();
    let mut digest = Vec::new();
    let mut layers = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..2_200 {
        let t0 = Instant::now();
        let req = ChatRequest::parse(WireFormat::OpenAi, black_box(&body)).unwrap();
        let t1 = Instant::now();
        black_box(interlock_llm::fingerprint::fingerprint(&req));
        if round >= 200 {
            digest.push(t1.elapsed().as_secs_f64() * 1e3);
        }
        let mut hit = None;
        for (i, layer) in Layer::ORDER.iter().enumerate() {
            let t = Instant::now();
            hit = run_layer(*layer, &req, &policy);
            if round >= 200 {
                layers[i].push(t.elapsed().as_secs_f64() * 1e3);
            }
            if hit.is_some() {
                break;
            }
        }
        assert!(hit.is_none(), "{hit:?}");
        if round >= 200 {
            whole.push(t0.elapsed().as_secs_f64() * 1e3);
            parse.push((t1 - t0).as_secs_f64() * 1e3);
        }
    }
    println!(
        "8 KB request ({} bytes), 2,000 scans after 200 warm-up:",
        body.len()
    );
    println!("| part | p50 ms | p99 ms |");
    println!("|---|---|---|");
    let [policy_ms, rules_ms, patterns_ms] = layers;
    for (name, mut v) in [
        ("read (parse)", parse),
        ("fingerprint (its digest; the lookup is a map read)", digest),
        ("policy", policy_ms),
        ("rules", rules_ms),
        ("patterns", patterns_ms),
        ("whole (layers 1-4)", whole),
    ] {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "| {name} | {:.3} | {:.3} |",
            percentile(&v, 50.0),
            percentile(&v, 99.0)
        );
    }
}
