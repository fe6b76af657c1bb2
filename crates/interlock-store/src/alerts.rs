//! Alert delivery's durable state (issue 21): one cursor per sink and the
//! dead-lettered requests. The delivery loop (`interlock_gateway::alerts`)
//! reads leaves through [`Store::leaves`] and moves the cursor here only after
//! a receiver accepted them, so delivery is at least once across restarts.

use sqlx::Row as _;

use crate::error::SqlxResultExt as _;
use crate::{Store, StoreError, now_secs, to_i64, to_u64};

/// A sink's cursor and health.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AlertCursor {
    pub sink: String,
    /// The next leaf index not yet delivered nor dead-lettered.
    pub next_idx: u64,
    /// Events the receiver accepted, in total.
    pub delivered: u64,
    /// Failed tries of the request now in flight (0 when healthy).
    pub attempts: u32,
    pub last_error: Option<String>,
    pub last_error_at: Option<i64>,
    pub last_delivered_at: Option<i64>,
    /// Dead-lettered requests, in total.
    pub dead_letters: u64,
}

/// A request given up on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadLetter {
    pub id: i64,
    pub sink: String,
    pub first_idx: u64,
    pub last_idx: u64,
    pub attempts: u32,
    pub error: String,
    pub at: i64,
}

/// `SELECT` of a cursor's columns (with its dead-letter count) and `$tail`.
macro_rules! select_cursors {
    ($tail:literal) => {
        concat!(
            "SELECT c.sink, c.next_idx, c.delivered, c.attempts, c.last_error, ",
            "c.last_error_at, c.last_delivered_at, ",
            "(SELECT COUNT(*) FROM alert_dead_letters d WHERE d.sink = c.sink) AS dead ",
            $tail
        )
    };
}

fn cursor_of(row: &crate::DbRow) -> Result<AlertCursor, StoreError> {
    Ok(AlertCursor {
        sink: row.get(0),
        next_idx: to_u64(row.get(1), "alert cursor")?,
        delivered: to_u64(row.get(2), "delivered count")?,
        attempts: u32::try_from(row.get::<i64, _>(3)).unwrap_or(u32::MAX),
        last_error: row.get(4),
        last_error_at: row.get(5),
        last_delivered_at: row.get(6),
        dead_letters: to_u64(row.get(7), "dead letters")?,
    })
}

impl Store {
    /// The cursor of `sink`, created at `start` if the sink is new (a sink
    /// seen before keeps its cursor, whatever `start` says).
    pub async fn alert_cursor_open(
        &self,
        sink: &str,
        start: u64,
    ) -> Result<AlertCursor, StoreError> {
        sqlx::query(
            "INSERT INTO alert_cursors (sink, next_idx, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (sink) DO NOTHING",
        )
        .bind(sink)
        .bind(to_i64(start, "alert cursor")?)
        .bind(now_secs())
        .execute(self.pool())
        .await
        .ctx("alert cursor")?;
        self.alert_cursor(sink)
            .await?
            .ok_or_else(|| StoreError::Malformed(format!("alert cursor {sink} vanished")))
    }

    pub async fn alert_cursor(&self, sink: &str) -> Result<Option<AlertCursor>, StoreError> {
        let row = sqlx::query(select_cursors!("FROM alert_cursors c WHERE c.sink = $1"))
            .bind(sink)
            .fetch_optional(self.pool())
            .await
            .ctx("alert cursor")?;
        row.as_ref().map(cursor_of).transpose()
    }

    /// Every sink's cursor, by name.
    pub async fn alert_cursors(&self) -> Result<Vec<AlertCursor>, StoreError> {
        let rows = sqlx::query(select_cursors!("FROM alert_cursors c ORDER BY c.sink"))
            .fetch_all(self.pool())
            .await
            .ctx("alert cursors")?;
        rows.iter().map(cursor_of).collect()
    }

    /// The receiver accepted `events` events up to leaf `next - 1` (or the
    /// leaves before `next` were filtered out): the cursor moves to `next`
    /// (never back) and the failure count resets.
    pub async fn alert_advance(
        &self,
        sink: &str,
        next: u64,
        events: u64,
    ) -> Result<(), StoreError> {
        let now = now_secs();
        sqlx::query(
            "UPDATE alert_cursors SET next_idx = CASE WHEN next_idx > $1 THEN next_idx ELSE $1 END, delivered = delivered + $2, \
             attempts = 0, updated_at = $3, \
             last_delivered_at = CASE WHEN $4 > 0 THEN $5 ELSE last_delivered_at END \
             WHERE sink = $6",
        )
        .bind(to_i64(next, "alert cursor")?)
        .bind(to_i64(events, "delivered count")?)
        .bind(now)
        .bind(to_i64(events, "delivered count")?)
        .bind(now)
        .bind(sink)
        .execute(self.pool())
        .await
        .ctx("alert cursor")?;
        Ok(())
    }

    /// A try of the request in flight failed: `attempts` so far, and why.
    pub async fn alert_failed(
        &self,
        sink: &str,
        attempts: u32,
        error: &str,
    ) -> Result<(), StoreError> {
        let now = now_secs();
        sqlx::query(
            "UPDATE alert_cursors SET attempts = $1, last_error = $2, last_error_at = $3, \
             updated_at = $4 WHERE sink = $5",
        )
        .bind(i64::from(attempts))
        .bind(error)
        .bind(now)
        .bind(now)
        .bind(sink)
        .execute(self.pool())
        .await
        .ctx("alert cursor")?;
        Ok(())
    }

    /// Gives up on the request carrying leaves `first..=last` after
    /// `attempts` tries: it is recorded with `error`, and the cursor moves
    /// past it, in one transaction.
    pub async fn alert_dead_letter(
        &self,
        sink: &str,
        first: u64,
        last: u64,
        attempts: u32,
        error: &str,
    ) -> Result<(), StoreError> {
        let now = now_secs();
        let mut tx = self.pool().begin().await.ctx("alert dead letter")?;
        sqlx::query(
            "INSERT INTO alert_dead_letters (sink, first_idx, last_idx, attempts, error, at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(sink)
        .bind(to_i64(first, "leaf index")?)
        .bind(to_i64(last, "leaf index")?)
        .bind(i64::from(attempts))
        .bind(error)
        .bind(now)
        .execute(&mut *tx)
        .await
        .ctx("alert dead letter")?;
        sqlx::query(
            "UPDATE alert_cursors SET next_idx = CASE WHEN next_idx > $1 THEN next_idx ELSE $1 END, attempts = 0, \
             last_error = $2, last_error_at = $3, updated_at = $4 WHERE sink = $5",
        )
        .bind(to_i64(last.saturating_add(1), "alert cursor")?)
        .bind(error)
        .bind(now)
        .bind(now)
        .bind(sink)
        .execute(&mut *tx)
        .await
        .ctx("alert cursor")?;
        tx.commit().await.ctx("alert dead letter")?;
        Ok(())
    }

    /// The most recent `limit` dead letters of `sink`, newest first.
    pub async fn alert_dead_letters(
        &self,
        sink: &str,
        limit: u32,
    ) -> Result<Vec<DeadLetter>, StoreError> {
        self.dead_letters_in_order(sink, limit, true).await
    }

    /// The oldest `limit` dead letters of `sink`, oldest first: the order a
    /// redelivery sends them in.
    pub async fn alert_dead_letters_oldest(
        &self,
        sink: &str,
        limit: u32,
    ) -> Result<Vec<DeadLetter>, StoreError> {
        self.dead_letters_in_order(sink, limit, false).await
    }

    async fn dead_letters_in_order(
        &self,
        sink: &str,
        limit: u32,
        newest_first: bool,
    ) -> Result<Vec<DeadLetter>, StoreError> {
        let sql: &'static str = if newest_first {
            "SELECT id, sink, first_idx, last_idx, attempts, error, at FROM alert_dead_letters \
             WHERE sink = $1 ORDER BY id DESC LIMIT $2"
        } else {
            "SELECT id, sink, first_idx, last_idx, attempts, error, at FROM alert_dead_letters \
             WHERE sink = $1 ORDER BY id ASC LIMIT $2"
        };
        let rows = sqlx::query(sql)
            .bind(sink)
            .bind(i64::from(limit))
            .fetch_all(self.pool())
            .await
            .ctx("alert dead letters")?;
        rows.iter().map(dead_letter_of).collect()
    }

    /// A dead letter of `sink` was redelivered: it is removed (the log's
    /// `admin.action` leaf keeps the record). `false` if it was already gone
    /// (settled by another redelivery).
    pub async fn alert_dead_letter_settled(&self, sink: &str, id: i64) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM alert_dead_letters WHERE id = $1 AND sink = $2")
            .bind(id)
            .bind(sink)
            .execute(self.pool())
            .await
            .ctx("alert dead letter")?;
        Ok(done.rows_affected() == 1)
    }
}

fn dead_letter_of(r: &crate::DbRow) -> Result<DeadLetter, StoreError> {
    Ok(DeadLetter {
        id: r.get(0),
        sink: r.get(1),
        first_idx: to_u64(r.get(2), "leaf index")?,
        last_idx: to_u64(r.get(3), "leaf index")?,
        attempts: u32::try_from(r.get::<i64, _>(4)).unwrap_or(u32::MAX),
        error: r.get(5),
        at: r.get(6),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
        (dir, store)
    }

    #[tokio::test]
    async fn a_cursor_survives_reopening_and_never_moves_back() {
        let (dir, store) = store().await;
        let c = store.alert_cursor_open("siem", 5).await.unwrap();
        assert_eq!(c.next_idx, 5);
        store.alert_advance("siem", 9, 3).await.unwrap();
        store.alert_advance("siem", 7, 0).await.unwrap();
        drop(store);
        let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
        // Reopening with another start keeps the stored cursor.
        let c = store.alert_cursor_open("siem", 0).await.unwrap();
        assert_eq!((c.next_idx, c.delivered), (9, 3));
    }

    #[tokio::test]
    async fn a_dead_letter_keeps_its_range_and_error_and_moves_the_cursor() {
        let (_dir, store) = store().await;
        store.alert_cursor_open("hook", 0).await.unwrap();
        store.alert_failed("hook", 2, "HTTP 500").await.unwrap();
        let c = store.alert_cursor("hook").await.unwrap().unwrap();
        assert_eq!((c.attempts, c.last_error.as_deref()), (2, Some("HTTP 500")));
        store
            .alert_dead_letter("hook", 0, 3, 5, "HTTP 500")
            .await
            .unwrap();
        let c = store.alert_cursor("hook").await.unwrap().unwrap();
        assert_eq!((c.next_idx, c.attempts, c.dead_letters), (4, 0, 1));
        let d = store.alert_dead_letters("hook", 10).await.unwrap();
        assert_eq!((d[0].first_idx, d[0].last_idx, d[0].attempts), (0, 3, 5));
        assert_eq!(d[0].error, "HTTP 500");
    }

    #[tokio::test]
    async fn a_dead_letter_is_settled_once() {
        let (_dir, store) = store().await;
        store.alert_cursor_open("hook", 0).await.unwrap();
        store
            .alert_dead_letter("hook", 0, 1, 2, "HTTP 503")
            .await
            .unwrap();
        store
            .alert_dead_letter("hook", 2, 2, 2, "HTTP 503")
            .await
            .unwrap();
        let d = store.alert_dead_letters_oldest("hook", 10).await.unwrap();
        assert_eq!(
            d.iter()
                .map(|d| (d.first_idx, d.last_idx))
                .collect::<Vec<_>>(),
            [(0, 1), (2, 2)]
        );
        // Another sink's name cannot settle it.
        assert!(
            !store
                .alert_dead_letter_settled("other", d[0].id)
                .await
                .unwrap()
        );
        assert!(
            store
                .alert_dead_letter_settled("hook", d[0].id)
                .await
                .unwrap()
        );
        assert!(
            !store
                .alert_dead_letter_settled("hook", d[0].id)
                .await
                .unwrap()
        );
        let c = store.alert_cursor("hook").await.unwrap().unwrap();
        assert_eq!(c.dead_letters, 1);
    }
}
