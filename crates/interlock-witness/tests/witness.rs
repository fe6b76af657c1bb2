//! The witness's rules (C2SP tlog-witness `add-checkpoint`) on a real store:
//! SQLite here, Postgres when the test run has one.

use std::sync::Arc;

use ed25519_dalek::SigningKey;
use interlock_merkle::{
    AddCheckpoint, Checkpoint, NoteSigner, Tree, WitnessVerdict, leaf_hash,
    parse_cosignature_lines, sign_checkpoint_with, witness_report,
};
use interlock_witness::{Refusal, RefusalKind, TrustedLog, Witness};

const ORIGIN: &str = "interlock.local/log/0123456789abcdef";

struct Log {
    key: SigningKey,
    tree: Tree,
}

impl Log {
    fn new(seed: u8, leaves: u64, fork_at: Option<u64>) -> Self {
        let mut tree = Tree::new();
        for i in 0..leaves {
            let forked = fork_at.is_some_and(|f| i >= f);
            tree.push(leaf_hash(format!("entry {i} {forked}").as_bytes()));
        }
        Log {
            key: SigningKey::from_bytes(&[seed; 32]),
            tree,
        }
    }

    fn checkpoint(&self, size: u64) -> String {
        let cp = Checkpoint {
            origin: ORIGIN.into(),
            size,
            root: self.tree.root_at(size).unwrap(),
            extensions: vec![],
        };
        let signer = NoteSigner::new(ORIGIN, self.key.verifying_key(), &self.key).unwrap();
        sign_checkpoint_with(&cp, &signer).unwrap().to_string()
    }

    fn request(&self, old: u64, size: u64) -> String {
        let proof = if old == 0 {
            vec![]
        } else {
            self.tree.consistency_proof(old, size).unwrap()
        };
        AddCheckpoint {
            old_size: old,
            proof,
            checkpoint: self.checkpoint(size),
        }
        .to_body()
    }

    fn vkey(&self) -> String {
        NoteSigner::new(ORIGIN, self.key.verifying_key(), &self.key)
            .unwrap()
            .verifier()
            .to_vkey()
    }
}

async fn witness(dir: &std::path::Path, log: &Log) -> Witness {
    let store = interlock_store::testing::open_fresh(&dir.join("witness.db")).await;
    Witness::new(
        "witness.example/w1",
        Arc::new(SigningKey::from_bytes(&[42; 32])),
        vec![TrustedLog::from_vkey(&log.vkey()).unwrap()],
        store,
    )
    .unwrap()
}

#[tokio::test]
async fn a_growing_log_is_cosigned_and_each_cosignature_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::new(1, 40, None);
    let w = witness(dir.path(), &log).await;
    let verifier = interlock_merkle::CosignatureVerifier::from_vkey(&w.vkey()).unwrap();
    for (old, size) in [(0, 5), (5, 17), (17, 17), (17, 40)] {
        let line = w.add_checkpoint(&log.request(old, size)).await.unwrap();
        let cosig = parse_cosignature_lines(&line).unwrap().remove(0);
        let mut note = interlock_merkle::SignedNote::parse(&log.checkpoint(size)).unwrap();
        note.foreign.push(cosig.to_foreign());
        let (v, _) = witness_report(&note, std::slice::from_ref(&verifier));
        assert!(
            matches!(v[0].1, WitnessVerdict::Cosigned { .. }),
            "{old}->{size}: {v:?}"
        );
    }
    assert_eq!(w.store().witnessed(ORIGIN).await.unwrap().unwrap().size, 40);
}

#[tokio::test]
async fn a_stale_old_size_is_told_the_latest_and_a_rollback_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::new(1, 30, None);
    let w = witness(dir.path(), &log).await;
    w.add_checkpoint(&log.request(0, 20)).await.unwrap();
    let stale = w.add_checkpoint(&log.request(0, 25)).await.unwrap_err();
    assert_eq!(stale.kind(), RefusalKind::Conflict);
    assert_eq!(stale.latest_size(), Some(20));
    // An older checkpoint (a rollback) is refused as a bad request.
    let rollback = AddCheckpoint {
        old_size: 20,
        proof: vec![],
        checkpoint: log.checkpoint(10),
    };
    let back = w.add_checkpoint(&rollback.to_body()).await.unwrap_err();
    assert_eq!(back.kind(), RefusalKind::BadRequest, "{back}");
    assert_eq!(w.store().witnessed(ORIGIN).await.unwrap().unwrap().size, 20);
}

#[tokio::test]
async fn regression_issue_43_a_fork_under_the_same_key_is_never_cosigned_and_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let honest = Log::new(1, 30, None);
    // The same key signs a second history that differs from entry 12 on.
    let forked = Log::new(1, 30, Some(12));
    let w = witness(dir.path(), &honest).await;
    w.add_checkpoint(&honest.request(0, 20)).await.unwrap();

    // Same size, other root.
    let same = w.add_checkpoint(&forked.request(20, 20)).await.unwrap_err();
    assert!(matches!(same, Refusal::Fork { size: 20 }), "{same}");
    assert_eq!(same.latest_size(), None);
    assert_eq!(same.kind(), RefusalKind::Conflict);
    // Larger, with the forked tree's own proof (from its own root at 20).
    let grown = w.add_checkpoint(&forked.request(20, 30)).await.unwrap_err();
    assert_eq!(grown.kind(), RefusalKind::Unprocessable, "{grown}");
    // A forger who starts again from zero is told the size it must prove from.
    let fresh = w.add_checkpoint(&forked.request(0, 30)).await.unwrap_err();
    assert_eq!(fresh.latest_size(), Some(20));

    let kept = w.store().witness_refusals(ORIGIN).await.unwrap();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(kept[0].reason.contains("forked"), "{}", kept[0].reason);
    // The honest log goes on being cosigned.
    w.add_checkpoint(&honest.request(20, 30)).await.unwrap();
}

#[tokio::test]
async fn unknown_logs_foreign_keys_and_malformed_bodies_get_the_specs_answers() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::new(1, 10, None);
    let w = witness(dir.path(), &log).await;
    let impostor = Log::new(2, 10, None);
    let e = w.add_checkpoint(&impostor.request(0, 5)).await.unwrap_err();
    assert_eq!(e.kind(), RefusalKind::Forbidden, "{e}");
    let other = log.request(0, 5).replace(ORIGIN, "example.com/other");
    let e = w.add_checkpoint(&other).await.unwrap_err();
    assert!(
        matches!(e.kind(), RefusalKind::NotFound | RefusalKind::Forbidden),
        "{e}"
    );
    for body in ["", "old 1\n", "old x\n\ncp\n", "old 0\n\nnot a note\n"] {
        let e = w.add_checkpoint(body).await.unwrap_err();
        assert_eq!(e.kind(), RefusalKind::BadRequest, "{body:?}: {e}");
    }
    let mut proof_from_zero = log.request(0, 5);
    proof_from_zero = proof_from_zero.replacen(
        "old 0\n",
        "old 0\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n",
        1,
    );
    let e = w.add_checkpoint(&proof_from_zero).await.unwrap_err();
    assert_eq!(e.kind(), RefusalKind::Unprocessable, "{e}");
    assert!(w.store().witnessed(ORIGIN).await.unwrap().is_none());
}

#[tokio::test]
async fn two_submissions_at_once_cannot_roll_the_witness_back() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::new(1, 64, None);
    let w = Arc::new(witness(dir.path(), &log).await);
    w.add_checkpoint(&log.request(0, 8)).await.unwrap();
    // Many submissions from the same old size race; at most one may win,
    // and the state never moves back.
    let mut tasks = Vec::new();
    for size in 9..=40 {
        let (w, body) = (w.clone(), log.request(8, size));
        tasks.push(tokio::spawn(async move { w.add_checkpoint(&body).await }));
    }
    let mut won = Vec::new();
    for (size, t) in (9..=40).zip(tasks) {
        match t.await.unwrap() {
            Ok(_) => won.push(size),
            Err(e) => assert_eq!(e.kind(), RefusalKind::Conflict, "{e}"),
        }
    }
    assert_eq!(won.len(), 1, "{won:?}");
    let latest = w.store().witnessed(ORIGIN).await.unwrap().unwrap();
    assert_eq!(latest.size, won[0]);
}
