//! RFC 8785 §3.2.2.3: every number canonicalizes as ECMAScript serializes it.
//! Checked against Node's own `JSON.stringify` of the very same doubles, run in
//! the same test (issue 15 item 20), so the reference is a real ECMAScript
//! engine rather than expectations written down by hand.

use std::io::Write as _;
use std::process::{Command, Stdio};

use interlock_canon::{Number, Value, canonical_string, parse_json};

/// `JSON.stringify` of each double (given as its IEEE-754 bit pattern), from
/// the `node` on `PATH` (Node is required by the peer tests too).
fn node_stringify(bits: &[u64]) -> Vec<String> {
    const SCRIPT: &str = r#"
        const lines = require('fs').readFileSync(0, 'utf8').split('\n').filter(Boolean);
        const view = new DataView(new ArrayBuffer(8));
        const out = lines.map((hex) => {
            view.setBigUint64(0, BigInt('0x' + hex));
            return JSON.stringify(view.getFloat64(0));
        });
        process.stdout.write(out.join('\n') + '\n');
    "#;
    let mut child = Command::new("node")
        .args(["-e", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawning `node` (Node 20 must be on PATH for this test)");
    let input: String = bits.iter().map(|b| format!("{b:016x}\n")).collect();
    let mut stdin = child.stdin.take().expect("piped stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("node output");
    writer
        .join()
        .expect("writer thread")
        .expect("writing to node");
    assert!(out.status.success(), "node failed: {:?}", out.status);
    let text = String::from_utf8(out.stdout).expect("node prints UTF-8");
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), bits.len(), "node printed one line per double");
    lines
}

/// SplitMix64: a fixed-seed generator, so a failure reproduces exactly.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn generated_doubles() -> Vec<f64> {
    let mut out = Vec::new();
    let mut rng = SplitMix64(0x1e21_2015_8785);
    // Random bit patterns: every exponent, subnormals, both signs.
    for _ in 0..150_000 {
        out.push(f64::from_bits(rng.next()));
    }
    // Random integral doubles in [2^53, 2^70): the range main refused.
    for _ in 0..50_000 {
        let exp = 53 + rng.next() % 17;
        let mantissa = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 + 1.0;
        out.push(mantissa * 2f64.powi(exp as i32) * if rng.next() & 1 == 0 { 1.0 } else { -1.0 });
    }
    // Powers of ten, written as literals (underflow to 0 and overflow to ∞
    // included; the infinities are dropped below).
    for k in -330..=310 {
        let f: f64 = format!("1e{k}").parse().unwrap();
        out.extend([
            f,
            -f,
            f64::from_bits(f.to_bits() + 1),
            f64::from_bits(f.to_bits().saturating_sub(1)),
        ]);
    }
    // The safe-integer and exponent-notation boundaries and their neighbours.
    let edges = [
        9_007_199_254_740_991.0,
        9_007_199_254_740_992.0,
        9_007_199_254_740_994.0,
        1e21,
        1e-6,
        1e-7,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::EPSILON,
    ];
    for e in edges {
        for bits in [e.to_bits() - 1, e.to_bits(), e.to_bits() + 1] {
            out.extend([f64::from_bits(bits), -f64::from_bits(bits)]);
        }
    }
    // Subnormals and the zeros.
    out.extend([0.0, -0.0]);
    for bits in [1u64, 2, 3, 0x000f_ffff_ffff_ffff, 0x0008_0000_0000_0000] {
        out.extend([f64::from_bits(bits), -f64::from_bits(bits)]);
    }
    // NaN and the infinities are not JSON.
    out.retain(|f| f.is_finite());
    out
}

#[test]
fn canonical_numbers_match_node_json_stringify() {
    let doubles = generated_doubles();
    assert!(doubles.len() > 200_000, "{} doubles", doubles.len());
    let bits: Vec<u64> = doubles.iter().map(|f| f.to_bits()).collect();
    let expected = node_stringify(&bits);

    let mut mismatches = Vec::new();
    for (f, js) in doubles.iter().zip(&expected) {
        let n = Number::from_f64(*f).unwrap_or_else(|| panic!("{f:e} is a finite double"));
        let from_model = canonical_string(&Value::Number(n));
        // The same double written as a literal with an exponent (Rust's `{:e}`
        // round-trips exactly) goes through intake too.
        let literal = format!("{f:e}");
        let from_literal = parse_json(literal.as_bytes())
            .map(|v| canonical_string(&v))
            .unwrap_or_else(|e| format!("refused: {e}"));
        // And ECMAScript's own text reads back to the same value (the model
        // stays closed: stored canonical bytes parse again).
        let back = parse_json(js.as_bytes()).map(|v| canonical_string(&v));
        if &from_model != js || &from_literal != js || back.as_deref() != Ok(js.as_str()) {
            mismatches.push(format!(
                "{literal} (bits {:016x}): node {js}, model {from_model}, literal {from_literal}, reread {back:?}",
                f.to_bits()
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} doubles differ from node, e.g.:\n{}",
        mismatches.len(),
        doubles.len(),
        mismatches[..mismatches.len().min(20)].join("\n")
    );
}

#[test]
fn regression_exponent_literals_beyond_2_53_canonicalize_as_ecmascript() {
    let doc = br#"[1e21, -4.25e+20, 1.5e300, 1e16, 9007199254740992.0]"#;
    let v = parse_json(doc).unwrap_or_else(|e| panic!("refused: {e}"));
    let got = canonical_string(&v);
    let bits: Vec<u64> = [1e21, -4.25e+20, 1.5e300, 1e16, 9_007_199_254_740_992.0]
        .iter()
        .map(|f: &f64| f.to_bits())
        .collect();
    let node = format!("[{}]", node_stringify(&bits).join(","));
    assert_eq!(got, node);
    assert_eq!(
        got,
        "[1e+21,-425000000000000000000,1.5e+300,10000000000000000,9007199254740992]"
    );
}

#[test]
fn regression_integer_literals_beyond_2_53_stay_refused() {
    // No fraction, no exponent, and not the canonical text of a double.
    for doc in [
        "9007199254740993",
        "-9007199254740995",
        "12345678901234567891",
    ] {
        let err = parse_json(doc.as_bytes()).unwrap_err();
        assert!(
            matches!(err.kind, interlock_canon::IntakeErrorKind::IntegerOutOfRange(ref l) if l == doc),
            "{doc}: {err}"
        );
    }
}
