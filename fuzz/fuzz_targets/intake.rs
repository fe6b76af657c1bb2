//! Feeds arbitrary bytes to both intake parsers. Neither may panic, and any
//! accepted document must survive canonicalization: its canonical bytes parse
//! back (as JSON) to the same value, with the same digest.
#![no_main]

use interlock_canon::{canonical_bytes, digest, parse_json, parse_yaml};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for value in [parse_json(data), parse_yaml(data)].into_iter().flatten() {
        let bytes = canonical_bytes(&value);
        let back = parse_json(&bytes).expect("canonical bytes must parse");
        assert_eq!(back, value);
        assert_eq!(canonical_bytes(&back), bytes);
        assert_eq!(digest(&back), digest(&value));
    }
});
