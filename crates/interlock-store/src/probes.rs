//! Effective-permission probes' state (issue 16 item 1): per server, the last
//! run of its probes, its findings, and the runs adopted at approval (the
//! probes' part of the baseline). Opaque JSON bytes here; what they mean is
//! `interlock_surface::probes`' business.

use sqlx::Row as _;

use crate::error::SqlxResultExt as _;
use crate::{Store, StoreError, now_secs};

/// One server's probe state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeState {
    pub server: String,
    /// JSON array of the last runs.
    pub observed: Vec<u8>,
    /// JSON array of the last run's findings.
    pub findings: Vec<u8>,
    pub observed_at: i64,
    /// JSON array of the runs adopted at the last approval, if any.
    pub baseline: Option<Vec<u8>>,
    pub baseline_at: Option<i64>,
}

impl Store {
    /// A server's probe state, if its probes ever ran.
    pub async fn probe_state(&self, server: &str) -> Result<Option<ProbeState>, StoreError> {
        let row = sqlx::query("SELECT * FROM server_probes WHERE server = $1")
            .bind(server)
            .fetch_optional(self.pool())
            .await
            .ctx("server probes")?;
        row.map(|r| {
            Ok(ProbeState {
                server: r.try_get("server").ctx("server probes")?,
                observed: r.try_get("observed").ctx("server probes")?,
                // Releases before the Postgres store wrote `[]` here as TEXT.
                findings: crate::bytes_column(&r, "findings").ctx("server probes")?,
                observed_at: r.try_get("observed_at").ctx("server probes")?,
                baseline: r.try_get("baseline").ctx("server probes")?,
                baseline_at: r.try_get("baseline_at").ctx("server probes")?,
            })
        })
        .transpose()
    }

    /// Records a run of a server's probes and its findings (the baseline
    /// stays as it is).
    pub async fn record_probe_run(
        &self,
        server: &str,
        observed: &[u8],
        findings: &[u8],
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO server_probes (server, observed, findings, observed_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (server) DO UPDATE SET observed = excluded.observed, \
             findings = excluded.findings, observed_at = excluded.observed_at",
        )
        .bind(server)
        .bind(observed)
        .bind(findings)
        .bind(now_secs())
        .execute(self.pool())
        .await
        .ctx("server probes")?;
        Ok(())
    }

    /// At approval: `runs` (the last observed runs, what the reviewer was
    /// shown, recorded in the approval's leaf) become the baseline, and the
    /// findings against the old one are settled. False if the server's
    /// probes never ran. An approval applies it with its row change
    /// ([`crate::StateChange::ServerWithProbeBaseline`]).
    pub async fn adopt_probe_baseline(
        &self,
        server: &str,
        runs: &[u8],
    ) -> Result<bool, StoreError> {
        adopt_probe_baseline_in(self.pool(), server, runs).await
    }
}

/// [`Store::adopt_probe_baseline`] on any executor (the pool, or the
/// transaction of the approval's leaf).
pub(crate) async fn adopt_probe_baseline_in<'c, E>(
    ex: E,
    server: &str,
    runs: &[u8],
) -> Result<bool, StoreError>
where
    E: sqlx::Executor<'c, Database = crate::Db>,
{
    let done = sqlx::query(
        "UPDATE server_probes SET baseline = $1, baseline_at = $2, findings = $3 WHERE server = $4",
    )
    .bind(runs)
    .bind(now_secs())
    // Bound as bytes: a `'[]'` literal is TEXT on SQLite, in a BLOB column.
    .bind(b"[]".as_slice())
    .bind(server)
    .execute(ex)
    .await
    .ctx("server probes")?;
    Ok(done.rows_affected() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn approval_adopts_the_runs_it_names_as_the_baseline() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).await.unwrap();
        assert_eq!(store.probe_state("fs").await.unwrap(), None);
        assert!(!store.adopt_probe_baseline("fs", b"[1]").await.unwrap());
        store
            .record_probe_run("fs", b"[1]", b"[\"f\"]")
            .await
            .unwrap();
        assert!(store.adopt_probe_baseline("fs", b"[1]").await.unwrap());
        // The findings against the old baseline are settled by the approval.
        let s = store.probe_state("fs").await.unwrap().unwrap();
        assert_eq!(s.findings, b"[]".to_vec());
        // A later run replaces what was observed, not the baseline.
        store
            .record_probe_run("fs", b"[2]", b"[\"g\"]")
            .await
            .unwrap();
        let s = store.probe_state("fs").await.unwrap().unwrap();
        assert_eq!(
            (
                s.observed.as_slice(),
                s.baseline.as_deref(),
                s.findings.as_slice()
            ),
            (&b"[2]"[..], Some(&b"[1]"[..]), &b"[\"g\"]"[..])
        );
        assert!(s.baseline_at.is_some());
    }
}
