//! Test helper for the crash and full-disk tests (`tests/crash.rs`,
//! `tests/full_disk.rs`): opens the log in the directory given as the only
//! argument, appends from several tasks in a tight loop, and prints each
//! acknowledged index on its own line, flushed, until killed or an append
//! fails (then it prints the error and exits 1). Whatever it printed was
//! acknowledged — durable, or committed with its fsync deferred (half the
//! tasks append that way, as a tool call's outcome is) — so after a SIGKILL
//! every printed index must still be in the log.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use ed25519_dalek::SigningKey;
use interlock_canon::{Map, Value};
use interlock_log::{CheckpointSigner, Log};
use interlock_store::Store;

/// The origin and key the crash test reopens the log with.
const ORIGIN: &str = "crash.interlock.test/log";
const KEY_SEED: [u8; 32] = [42; 32];
const TASKS: u64 = 8;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: log-crash-writer DIR");
        std::process::exit(2);
    };
    // The database: `$INTERLOCK_DATABASE_URL` (a test on Postgres), else
    // the SQLite file in DIR.
    let location = match std::env::var("INTERLOCK_DATABASE_URL") {
        Ok(url) => match interlock_store::StoreLocation::parse(&url) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("INTERLOCK_DATABASE_URL: {e}");
                std::process::exit(2);
            }
        },
        Err(_) => interlock_store::StoreLocation::File(dir.join("log.sqlite")),
    };
    let store = match Store::connect(&location).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("open store: {e}");
            std::process::exit(1);
        }
    };
    let signer: CheckpointSigner = Arc::new(SigningKey::from_bytes(&KEY_SEED));
    let log = match Log::open(store, signer, ORIGIN).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("open log: {e}");
            std::process::exit(1);
        }
    };
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let log = log.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0u64.. {
                let mut m = Map::new();
                m.insert("type".into(), "crash_test".into());
                m.insert("task".into(), Value::from(format!("t{t}")));
                m.insert("i".into(), Value::from(format!("{i}")));
                // Half the tasks append as a tool call's outcome is appended
                // (committed, its fsync deferred): a SIGKILL must lose none of
                // those either (the durability contract).
                let appended = if t % 2 == 0 {
                    log.append(Value::Object(m)).await
                } else {
                    log.append_committed(Value::Object(m)).await
                };
                match appended {
                    Ok(a) => {
                        let mut out = std::io::stdout().lock();
                        if writeln!(out, "{}", a.index)
                            .and_then(|()| out.flush())
                            .is_err()
                        {
                            return;
                        }
                    }
                    Err(e) => {
                        eprintln!("append: {e}");
                        std::process::exit(1);
                    }
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
}
