//! Property tests: generated proofs verify for exactly what they prove.

use interlock_merkle::*;
use proptest::prelude::*;

fn leaves(n: u64) -> Vec<Hash> {
    (0..n).map(|i| leaf_hash(&i.to_le_bytes())).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn inclusion_verifies_only_its_leaf_and_index(size in 1u64..=300, idx in any::<prop::sample::Index>(),
                                                  other in any::<prop::sample::Index>()) {
        let l = leaves(size);
        let index = idx.index(size as usize) as u64;
        let r = root(&l);
        let p = inclusion_proof(&l, index).unwrap();
        prop_assert_eq!(&p, &Tree::from_leaves(&l).inclusion_proof(index, size).unwrap());
        prop_assert!(verify_inclusion(index, size, &l[index as usize], &p, &r).is_ok());
        let other = other.index(size as usize) as u64;
        if other != index {
            // Another leaf at the same index fails.
            prop_assert!(verify_inclusion(index, size, &l[other as usize], &p, &r).is_err());
            // The same leaf claimed at another index fails.
            prop_assert!(verify_inclusion(other, size, &l[index as usize], &p, &r).is_err());
        }
        prop_assert!(verify_inclusion(index, size, &leaf_hash(b"not a leaf"), &p, &r).is_err());
        // Any flipped bit in the proof fails.
        for i in 0..p.len() {
            let mut bad = p.clone();
            bad[i][i % 32] ^= 0x10;
            prop_assert!(verify_inclusion(index, size, &l[index as usize], &bad, &r).is_err());
        }
    }

    #[test]
    fn consistency_verifies_and_fails_on_flipped_roots(n in 1u64..=300, m_idx in any::<prop::sample::Index>(),
                                                       bit in 0usize..256) {
        let l = leaves(n);
        let m = m_idx.index(n as usize) as u64 + 1; // 1..=n
        let (r1, r2) = (root(&l[..m as usize]), root(&l));
        let p = consistency_proof(&l, m).unwrap();
        let tree = Tree::from_leaves(&l);
        prop_assert_eq!(&p, &tree.consistency_proof(m, n).unwrap());
        prop_assert_eq!(tree.root_at(m).unwrap(), r1);
        prop_assert!(verify_consistency(m, n, &p, &r1, &r2).is_ok());
        let mut f1 = r1;
        f1[bit / 8] ^= 1 << (bit % 8);
        let mut f2 = r2;
        f2[bit / 8] ^= 1 << (bit % 8);
        prop_assert!(verify_consistency(m, n, &p, &f1, &r2).is_err());
        prop_assert!(verify_consistency(m, n, &p, &r1, &f2).is_err());
        if m < n {
            // The proof is specific to its sizes.
            prop_assert!(verify_consistency(m + 1, n, &p, &root(&l[..=m as usize]), &r2).is_err());
        }
    }

    #[test]
    fn tree_push_matches_root(n in 0u64..=300) {
        let l = leaves(n);
        let mut t = Tree::new();
        for (i, h) in l.iter().enumerate() {
            prop_assert_eq!(t.push(*h), i as u64);
        }
        prop_assert_eq!(t.len(), n);
        prop_assert_eq!(t.root(), root(&l));
    }
}

#[test]
fn parallel_root_matches_sequential_and_tree() {
    for n in [
        PARALLEL_ROOT_THRESHOLD as u64,
        PARALLEL_ROOT_THRESHOLD as u64 + 1,
        100_003,
        3 << 16,
        (1 << 17) + 5,
    ] {
        let l = leaves(n);
        let r = root(&l);
        assert_eq!(r, root_sequential(&l), "n={n}");
        assert_eq!(r, Tree::from_leaves(&l).root(), "n={n}");
    }
}
