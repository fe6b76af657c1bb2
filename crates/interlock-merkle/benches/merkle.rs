//! 1,000,000-leaf tree root and 1,000 inclusion-proof verifications.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use interlock_merkle::{Hash, Tree, leaf_hash, root, root_sequential, verify_inclusion};

const LEAVES: u64 = 1_000_000;
const PROOFS: u64 = 1_000;

fn leaves() -> Vec<Hash> {
    (0..LEAVES).map(|i| leaf_hash(&i.to_le_bytes())).collect()
}

/// 1,000 spread-out (index, proof) pairs against the 1M-leaf tree.
fn proofs(leaves: &[Hash]) -> Vec<(u64, Vec<Hash>)> {
    let tree = Tree::from_leaves(leaves);
    (0..PROOFS)
        .map(|i| {
            let index = (i * 7919 * 131) % LEAVES;
            (index, tree.inclusion_proof(index, LEAVES).unwrap())
        })
        .collect()
}

fn plain_rates(leaves: &[Hash], r: &Hash, ps: &[(u64, Vec<Hash>)]) {
    // The whole build from entries: 1,000,000 leaf hashes plus the root (about two
    // million SHA-256 calls), as the log does when it rebuilds at start.
    let entries: Vec<[u8; 8]> = (0..LEAVES).map(u64::to_le_bytes).collect();
    let t = Instant::now();
    let hashed: Vec<Hash> = entries.iter().map(|e| leaf_hash(e)).collect();
    let got = black_box(root(black_box(&hashed)));
    let dt = t.elapsed();
    assert_eq!(&got, r);
    println!(
        "plain: tree of {LEAVES} entries (leaf hashing + root) in {:.3} s = {:.0} leaves/s",
        dt.as_secs_f64(),
        LEAVES as f64 / dt.as_secs_f64()
    );
    let t = Instant::now();
    let got = black_box(root(black_box(leaves)));
    let dt = t.elapsed();
    assert_eq!(&got, r);
    println!(
        "plain: root over {LEAVES} leaf hashes in {:.3} s = {:.0} leaves/s",
        dt.as_secs_f64(),
        LEAVES as f64 / dt.as_secs_f64()
    );
    let t = Instant::now();
    let got = black_box(root_sequential(black_box(leaves)));
    let dt = t.elapsed();
    assert_eq!(&got, r);
    println!(
        "plain: root_sequential (one thread) over {LEAVES} leaf hashes in {:.3} s = {:.0} leaves/s",
        dt.as_secs_f64(),
        LEAVES as f64 / dt.as_secs_f64()
    );
    let t = Instant::now();
    for (index, p) in ps {
        verify_inclusion(*index, LEAVES, &leaves[*index as usize], p, r).unwrap();
    }
    let dt = t.elapsed();
    println!(
        "plain: {PROOFS} inclusion proofs verified in {:.3} ms = {:.0} proofs/s",
        dt.as_secs_f64() * 1e3,
        PROOFS as f64 / dt.as_secs_f64()
    );
}

fn bench(c: &mut Criterion) {
    let leaves = leaves();
    let r = root(&leaves);
    let ps = proofs(&leaves);
    plain_rates(&leaves, &r, &ps);

    let mut g = c.benchmark_group("merkle");
    g.sample_size(10);
    g.throughput(Throughput::Elements(LEAVES));
    g.bench_function("root_1M_leaves", |b| b.iter(|| root(black_box(&leaves))));
    g.bench_function("root_sequential_1M_leaves", |b| {
        b.iter(|| root_sequential(black_box(&leaves)))
    });
    g.throughput(Throughput::Elements(PROOFS));
    g.bench_function("verify_1000_inclusion_proofs", |b| {
        b.iter(|| {
            for (index, p) in &ps {
                verify_inclusion(*index, LEAVES, &leaves[*index as usize], p, &r).unwrap();
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
