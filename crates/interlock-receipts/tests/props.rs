//! Property tests over random bundles.
mod common;

use common::Log;
use interlock_receipts::{Bundle, VerifyOptions, verify_bundle};
use proptest::prelude::*;
use std::sync::OnceLock;

fn fixed() -> &'static (Log, Vec<u8>) {
    static F: OnceLock<(Log, Vec<u8>)> = OnceLock::new();
    F.get_or_init(|| {
        let log = Log::new(24, 5);
        let bytes = log.full_bundle().to_bytes();
        (log, bytes)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Any log size, any exported subset (always with the registration), verifies.
    #[test]
    fn random_bundles_verify(n in 2u64..40, every in 2u64..9, pick in proptest::collection::vec(any::<bool>(), 40), earlier in 1u64..40) {
        let log = Log::new(n, every);
        let indices: Vec<u64> = (0..n).filter(|&i| i == 0 || pick[i as usize]).collect();
        let earlier = earlier.min(n);
        let b = log.bundle(&indices, Some(earlier), None);
        let bytes = b.to_bytes();
        prop_assert_eq!(Bundle::parse(&bytes).unwrap(), b);
        let r = verify_bundle(&bytes, &VerifyOptions::default());
        prop_assert!(r.is_ok(), "{}", r);
        prop_assert_eq!(r.receipts.len(), indices.len());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// One flipped byte anywhere: the bundle fails to parse or fails verification.
    #[test]
    fn any_byte_flip_is_caught(pos in any::<prop::sample::Index>(), x in 1u8..=255) {
        let (_, bytes) = fixed();
        let mut t = bytes.clone();
        let at = pos.index(t.len());
        t[at] ^= x;
        let r = verify_bundle(&t, &VerifyOptions::default());
        prop_assert!(!r.is_ok(), "flip at {} (^{:#x}) passed:\n{}", at, x, r);
    }
}
