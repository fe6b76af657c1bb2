//! Per-key rate limits and monthly quotas on the call path (issue 20 item 4),
//! and the per-key settings the call path reads (cached like keys).
//!
//! - **Rate**: a token bucket per key (GCRA), `rate_per_minute` calls a
//!   minute with a burst of as many: in memory (`governor`) on a gateway's
//!   own SQLite file; in the database on Postgres (team mode), where every
//!   gateway on it draws from the same bucket (`Store::take_rate_token`, one
//!   conditional upsert per call).
//! - **Quota**: `monthly_quota` calls per calendar month (UTC), counted in
//!   the store by an atomic conditional increment, so a restart does not
//!   reset it and two gateways on one database share it.
//!
//! A call over either is refused before it is assessed, forwarded or held,
//! with its own verdict (`rate_limited`, `quota_exceeded`) in its `tool.call`
//! leaf, a JSON-RPC error carrying the retry time, and HTTP 429 with
//! `Retry-After` where the answer is a plain JSON response.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use interlock_store::{KeySettings, StoreError};

/// How long a key's settings are used without asking the store again (an
/// admin's change in this process applies at once: `Gateway::forget_key`).
const SETTINGS_TTL: Duration = Duration::from_secs(5);

type Bucket = RateLimiter<NotKeyed, InMemoryState, DefaultClock>;

/// Which limit refused a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Limit {
    /// `rate_per_minute`.
    Rate { per_minute: i64 },
    /// `monthly_quota` for `month` (`YYYY-MM`).
    Quota { quota: i64, month: String },
    /// `limits.calls_in_flight_per_key`: this many of the key's calls are
    /// forwarded upstream already.
    InFlight { max: usize },
}

/// A call refused by a limit, and when to try again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limited {
    pub limit: Limit,
    /// Whole seconds, at least 1.
    pub retry_after_secs: u64,
}

impl Limited {
    /// The name a leaf records for this refusal (`rate_limited`,
    /// `quota_exceeded`, `in_flight_limited`), a tool call's or a read's.
    pub fn name(&self) -> &'static str {
        match self.limit {
            Limit::Rate { .. } => "rate_limited",
            Limit::Quota { .. } => "quota_exceeded",
            Limit::InFlight { .. } => "in_flight_limited",
        }
    }

    pub fn message(&self) -> String {
        match &self.limit {
            Limit::Rate { per_minute } => format!(
                "rate limit: this key may make {per_minute} tool calls a minute; retry in {} s",
                self.retry_after_secs
            ),
            Limit::Quota { quota, month } => format!(
                "monthly quota: this key has made its {quota} tool calls for {month}; retry in {} s (next month)",
                self.retry_after_secs
            ),
            Limit::InFlight { max } => format!(
                "this key has {max} tool calls in flight already; retry in {} s, when one has ended",
                self.retry_after_secs
            ),
        }
    }
}

/// The gateway's per-key buckets and settings cache.
#[derive(Default)]
pub(crate) struct KeyLimits {
    /// Key hash → (the rate it was made for, its bucket).
    buckets: Mutex<HashMap<String, (i64, Arc<Bucket>)>>,
    settings: Mutex<HashMap<String, (Arc<KeySettings>, Instant)>>,
    clock: DefaultClock,
    /// Key hash → (the cap it was made for, its slots for forwarded calls).
    in_flight: Mutex<HashMap<String, (usize, Arc<tokio::sync::Semaphore>)>>,
}

/// One forwarded call's slot among its key's; freed when dropped.
pub(crate) struct InFlight(#[allow(dead_code)] Option<tokio::sync::OwnedSemaphorePermit>);

impl KeyLimits {
    /// A slot for one more forwarded call of `key`, or the refusal when its
    /// `max` are taken (`0`: no cap). Never waits.
    pub fn enter(&self, key: &str, max: usize) -> Result<InFlight, Limited> {
        if max == 0 {
            return Ok(InFlight(None));
        }
        let slots = {
            let mut m = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            let entry = m
                .entry(key.to_owned())
                .or_insert_with(|| (max, Arc::new(tokio::sync::Semaphore::new(max))));
            if entry.0 != max {
                // The cap changed (a reload): calls in flight keep their
                // slots in the old semaphore; new calls count in the new one.
                *entry = (max, Arc::new(tokio::sync::Semaphore::new(max)));
            }
            Arc::clone(&entry.1)
        };
        slots
            .try_acquire_owned()
            .map(|p| InFlight(Some(p)))
            .map_err(|_| Limited {
                limit: Limit::InFlight { max },
                retry_after_secs: 1,
            })
    }

    /// A key's settings, from the cache or the store.
    pub async fn settings(
        &self,
        store: &interlock_store::Store,
        key_hash: &str,
    ) -> Result<Arc<KeySettings>, StoreError> {
        if let Some((s, at)) = self.settings.lock().expect("settings lock").get(key_hash)
            && at.elapsed() < SETTINGS_TTL
        {
            return Ok(Arc::clone(s));
        }
        let s = Arc::new(store.key_settings(key_hash).await?);
        let mut cache = self.settings.lock().expect("settings lock");
        if cache.len() > 10_000 {
            cache.clear();
        }
        cache.insert(key_hash.to_owned(), (Arc::clone(&s), Instant::now()));
        Ok(s)
    }

    /// Forgets a key's settings and bucket (an admin changed them).
    pub fn forget(&self, key_hash: &str) {
        self.settings
            .lock()
            .expect("settings lock")
            .remove(key_hash);
        self.buckets.lock().expect("buckets lock").remove(key_hash);
    }

    /// Takes one token from the key's bucket of `per_minute`; the wait
    /// until one is free if none is.
    pub fn take(&self, key_hash: &str, per_minute: i64) -> Result<(), Duration> {
        let Some(n) = u32::try_from(per_minute).ok().and_then(NonZeroU32::new) else {
            return Ok(());
        };
        let bucket = {
            let mut buckets = self.buckets.lock().expect("buckets lock");
            match buckets.get(key_hash) {
                Some((rate, b)) if *rate == per_minute => Arc::clone(b),
                _ => {
                    let b = Arc::new(RateLimiter::direct_with_clock(
                        Quota::per_minute(n),
                        self.clock.clone(),
                    ));
                    buckets.insert(key_hash.to_owned(), (per_minute, Arc::clone(&b)));
                    b
                }
            }
        };
        bucket
            .check()
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

/// The month `unix_secs` falls in (`YYYY-MM`, UTC) and the seconds until
/// the next one begins.
pub fn month_of(unix_secs: i64) -> (String, u64) {
    let ts = jiff::Timestamp::from_second(unix_secs).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let date = jiff::tz::Offset::UTC.to_datetime(ts).date();
    let first_next = date
        .first_of_month()
        .checked_add(jiff::Span::new().months(1))
        .unwrap_or(date);
    let next = jiff::tz::Offset::UTC
        .to_timestamp(first_next.to_datetime(jiff::civil::Time::midnight()))
        .map(|t| t.as_second())
        .unwrap_or(unix_secs + 1);
    (
        format!("{:04}-{:02}", date.year(), date.month()),
        u64::try_from(next - unix_secs).unwrap_or(1).max(1),
    )
}

/// Whether `key_hash` may make one more call now under `settings`: the rate
/// first (in memory), then the month's quota (counted in the store).
pub(crate) async fn check(
    limits: &KeyLimits,
    store: &interlock_store::Store,
    key_hash: &str,
    settings: &KeySettings,
    now: i64,
) -> Result<Option<Limited>, StoreError> {
    if let Some(per_minute) = settings.rate_per_minute {
        let wait = match store.backend() {
            interlock_store::Backend::Sqlite => limits.take(key_hash, per_minute).err(),
            interlock_store::Backend::Postgres if per_minute > 0 => {
                let now_ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
                store
                    .take_rate_token(key_hash, per_minute, now_ms)
                    .await?
                    .map(|ms| Duration::from_millis(u64::try_from(ms).unwrap_or(1)))
            }
            interlock_store::Backend::Postgres => None,
        };
        if let Some(wait) = wait {
            return Ok(Some(Limited {
                limit: Limit::Rate { per_minute },
                retry_after_secs: wait.as_secs_f64().ceil().max(1.0) as u64,
            }));
        }
    }
    if let Some(quota) = settings.monthly_quota {
        let (month, until_next) = month_of(now);
        if store.count_call(key_hash, &month, quota).await?.is_none() {
            return Ok(Some(Limited {
                limit: Limit::Quota { quota, month },
                retry_after_secs: until_next,
            }));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keys_calls_in_flight_are_capped_and_freed() {
        let limits = KeyLimits::default();
        let first = limits.enter("k", 2).unwrap();
        let _second = limits.enter("k", 2).unwrap();
        let refused = limits.enter("k", 2).err().unwrap();
        assert_eq!(refused.limit, Limit::InFlight { max: 2 });
        assert!(refused.message().contains("2 tool calls in flight"));
        assert!(limits.enter("another", 2).is_ok(), "per key");
        drop(first);
        assert!(limits.enter("k", 2).is_ok(), "freed when the call ends");
        assert!(limits.enter("k", 0).is_ok(), "0: no cap");
    }

    #[test]
    fn months_and_the_time_to_the_next() {
        // 2026-12-31T23:59:00Z: one minute to January.
        assert_eq!(month_of(1_798_761_540), ("2026-12".into(), 60));
        // 2026-02-01T00:00:00Z: all of February (28 days) ahead.
        assert_eq!(month_of(1_769_904_000), ("2026-02".into(), 28 * 86_400));
    }

    /// A bucket of 3 a minute lets a burst of 3 through, then says how long
    /// to wait (about 20 s for the next token); another key is untouched.
    #[test]
    fn a_bucket_per_key_refuses_beyond_its_rate_with_the_wait() {
        let l = KeyLimits::default();
        for _ in 0..3 {
            assert!(l.take("a", 3).is_ok());
        }
        let wait = l.take("a", 3).unwrap_err();
        assert!(
            wait > Duration::from_secs(15) && wait <= Duration::from_secs(20),
            "{wait:?}"
        );
        assert!(l.take("b", 3).is_ok());
        // A new rate replaces the bucket.
        assert!(l.take("a", 10).is_ok());
    }
}
