//! Property tests over random bundles.
mod common;

use common::Log;
use interlock_receipts::{Bundle, VerifyOptions, verify_bundle};
use proptest::prelude::*;
use std::sync::OnceLock;

/// A contiguous bundle, and a filtered one (its proofs in the node table).
fn fixed() -> &'static (Log, Vec<u8>, Vec<u8>) {
    static F: OnceLock<(Log, Vec<u8>, Vec<u8>)> = OnceLock::new();
    F.get_or_init(|| {
        let log = Log::new(24, 5);
        let bytes = log.full_bundle().to_bytes();
        let filtered = log
            .bundle(&[0, 2, 3, 9, 10, 17, 23], Some(8), None)
            .to_bytes();
        (log, bytes, filtered)
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

    /// Any index range of any log, with the registration beside it when the
    /// range does not hold it, verifies; so does its v1 form.
    #[test]
    fn random_index_ranges_verify(n in 2u64..60, a in any::<prop::sample::Index>(), len in any::<prop::sample::Index>()) {
        let log = Log::new(n, 4);
        let from = a.index(n as usize) as u64;
        let to = from + len.index((n - from) as usize) as u64;
        let mut indices: Vec<u64> = (from..=to).collect();
        if from > 0 {
            indices.insert(0, 0);
        }
        let b = log.bundle(&indices, None, Some((from, to)));
        prop_assert_eq!(b.range_proof.len(), interlock_merkle::range_proof_len(from, to + 1, n).unwrap());
        let bytes = b.to_bytes();
        prop_assert_eq!(Bundle::parse(&bytes).unwrap(), b);
        let r = verify_bundle(&bytes, &VerifyOptions::default());
        prop_assert!(r.is_ok(), "{}", r);
        let v1 = log.bundle_v1(&indices, None, None).to_bytes();
        let r = verify_bundle(&v1, &VerifyOptions::default());
        prop_assert!(r.is_ok(), "{}", r);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// One flipped byte anywhere: the bundle fails to parse or fails verification.
    #[test]
    fn any_byte_flip_is_caught(pos in any::<prop::sample::Index>(), x in 1u8..=255, which in any::<bool>()) {
        let (_, contiguous, filtered) = fixed();
        let mut t = if which { contiguous.clone() } else { filtered.clone() };
        let at = pos.index(t.len());
        t[at] ^= x;
        let r = verify_bundle(&t, &VerifyOptions::default());
        prop_assert!(!r.is_ok(), "flip at {} (^{:#x}) passed:\n{}", at, x, r);
    }
}
