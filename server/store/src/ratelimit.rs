//! Rate limits (`limits` says which) as a GCRA (generic cell rate
//! algorithm): one number per bucket, the theoretical arrival time (TAT) of
//! the next request.
//! A request at `now` is admitted when `max(tat, now) + interval - now` stays
//! within `interval * burst`, and then moves the TAT by one interval. This is
//! a token bucket of `burst` tokens refilled at `rate` per second, kept in
//! one integer, which makes it a single atomic UPSERT on PostgreSQL.
//! Taking `n` tokens at once (a batch, or a call that costs `n` units)
//! moves the TAT by `n` intervals, all or nothing.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use super::{Pool, Store, StoreError};
use ledger_core::clock::UnixMillis;

/// A limit: `per_second` sustained, `burst` at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateRule {
    pub per_second: f64,
    pub burst: u32,
}

impl RateRule {
    /// `per_minute` sustained (at least one), `burst` at once (at least one).
    pub fn per_minute(per_minute: u32, burst: u32) -> Self {
        Self {
            per_second: f64::from(per_minute.max(1)) / 60.0,
            burst: burst.max(1),
        }
    }

    /// `per_hour` sustained (at least one), `burst` at once (at least one).
    pub fn per_hour(per_hour: u32, burst: u32) -> Self {
        Self {
            per_second: f64::from(per_hour.max(1)) / 3600.0,
            burst: burst.max(1),
        }
    }

    fn interval_ms(self) -> i64 {
        // Positive and finite by configuration validation.
        ((1000.0 / self.per_second).ceil() as i64).max(1)
    }

    fn tolerance_ms(self) -> i64 {
        self.interval_ms() * i64::from(self.burst)
    }
}

/// The outcome of [`Store::take_rate_token`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateDecision {
    Allowed,
    /// Refused; the next request would be admitted after this many ms.
    Limited {
        retry_after_ms: i64,
    },
}

/// The in-process limiter used with SQLite.
#[derive(Clone, Default)]
pub(super) struct LocalLimiter(Arc<Mutex<HashMap<String, i64>>>);

impl LocalLimiter {
    /// The buckets. A panic while holding the lock cannot leave a bucket
    /// half-written (each update is one insert), so a poisoned lock is used.
    fn buckets(&self) -> std::sync::MutexGuard<'_, HashMap<String, i64>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn decide(
    tat: Option<i64>,
    now: UnixMillis,
    rule: RateRule,
    count: u32,
) -> (RateDecision, Option<i64>) {
    let start = tat.map_or(now, |tat| tat.max(now));
    if count > rule.burst {
        let retry_after_ms = start - now;
        return (RateDecision::Limited { retry_after_ms }, None);
    }
    let next = start + rule.interval_ms() * i64::from(count);
    if next - now <= rule.tolerance_ms() {
        (RateDecision::Allowed, Some(next))
    } else {
        let retry_after_ms = next - rule.tolerance_ms() - now;
        (RateDecision::Limited { retry_after_ms }, None)
    }
}

impl Store {
    /// Take one request from `bucket`'s allowance.
    pub async fn take_rate_token(
        &self,
        bucket: &str,
        now: UnixMillis,
        rule: RateRule,
    ) -> Result<RateDecision, StoreError> {
        self.take_rate_tokens(bucket, now, rule, 1).await
    }

    /// Take `count` requests from `bucket`'s allowance at once, or none.
    /// More than `rule.burst` is never admitted; the `retry_after_ms` of
    /// that refusal is when the allowance is full again.
    pub async fn take_rate_tokens(
        &self,
        bucket: &str,
        now: UnixMillis,
        rule: RateRule,
        count: u32,
    ) -> Result<RateDecision, StoreError> {
        match &self.pool {
            Pool::Sqlite(_) => {
                let mut map = self.local_limits.buckets();
                let (decision, next) = decide(map.get(bucket).copied(), now, rule, count);
                if let Some(next) = next {
                    map.insert(bucket.to_owned(), next);
                }
                Ok(decision)
            }
            Pool::Postgres(pool) => {
                // A new bucket's INSERT admits unconditionally, so what no
                // bucket can admit is refused before it.
                let admitted: Option<i64> = if count > rule.burst {
                    None
                } else {
                    sqlx::query_scalar(
                        "INSERT INTO rate_limits (bucket, tat_ms) VALUES ($1, $2 + $3) \
                     ON CONFLICT (bucket) DO UPDATE \
                       SET tat_ms = GREATEST(rate_limits.tat_ms, $2) + $3 \
                       WHERE GREATEST(rate_limits.tat_ms, $2) + $3 - $2 <= $4 \
                     RETURNING tat_ms",
                    )
                    .bind(bucket)
                    .bind(now)
                    .bind(rule.interval_ms() * i64::from(count))
                    .bind(rule.tolerance_ms())
                    .fetch_optional(pool)
                    .await?
                };
                if admitted.is_some() {
                    return Ok(RateDecision::Allowed);
                }
                let tat: Option<i64> =
                    sqlx::query_scalar("SELECT tat_ms FROM rate_limits WHERE bucket = $1")
                        .bind(bucket)
                        .fetch_optional(pool)
                        .await?;
                // The upsert refused: whatever the row says now (purged, or
                // moved by another instance), this request is not admitted.
                Ok(match decide(tat, now, rule, count).0 {
                    RateDecision::Allowed => RateDecision::Limited {
                        retry_after_ms: rule.interval_ms().max(1),
                    },
                    limited => limited,
                })
            }
        }
    }

    /// Give back `count` requests taken from `bucket` by a call that was
    /// then refused elsewhere (another budget it also needs): the TAT moves
    /// back as far as taking them moved it, so the bucket is as if they
    /// had never been taken (a TAT in the past reads as a full bucket).
    pub async fn give_back_rate_tokens(
        &self,
        bucket: &str,
        rule: RateRule,
        count: u32,
    ) -> Result<(), StoreError> {
        let back = rule.interval_ms() * i64::from(count);
        match &self.pool {
            Pool::Sqlite(_) => {
                if let Some(tat) = self.local_limits.buckets().get_mut(bucket) {
                    *tat -= back;
                }
            }
            Pool::Postgres(pool) => {
                sqlx::query("UPDATE rate_limits SET tat_ms = tat_ms - $2 WHERE bucket = $1")
                    .bind(bucket)
                    .bind(back)
                    .execute(pool)
                    .await?;
            }
        }
        Ok(())
    }

    /// Whether `bucket` would admit `count` requests now, taking nothing.
    pub async fn rate_allows(
        &self,
        bucket: &str,
        now: UnixMillis,
        rule: RateRule,
        count: u32,
    ) -> Result<bool, StoreError> {
        let tat = match &self.pool {
            Pool::Sqlite(_) => self.local_limits.buckets().get(bucket).copied(),
            Pool::Postgres(pool) => {
                sqlx::query_scalar("SELECT tat_ms FROM rate_limits WHERE bucket = $1")
                    .bind(bucket)
                    .fetch_optional(pool)
                    .await?
            }
        };
        Ok(decide(tat, now, rule, count).0 == RateDecision::Allowed)
    }

    /// Drop buckets whose allowance is full again (TAT in the past).
    pub async fn purge_rate_limits(&self, now: UnixMillis) -> Result<u64, StoreError> {
        match &self.pool {
            Pool::Sqlite(_) => {
                let mut map = self.local_limits.buckets();
                let before = map.len();
                map.retain(|_, tat| *tat > now);
                Ok((before - map.len()) as u64)
            }
            Pool::Postgres(pool) => Ok(sqlx::query("DELETE FROM rate_limits WHERE tat_ms <= $1")
                .bind(now)
                .execute(pool)
                .await?
                .rows_affected()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: RateRule = RateRule {
        per_second: 3.0,
        burst: 6,
    };

    fn run(times: &[i64]) -> Vec<RateDecision> {
        let mut tat = None;
        times
            .iter()
            .map(|&now| {
                let (d, next) = decide(tat, now, RULE, 1);
                if next.is_some() {
                    tat = next;
                }
                d
            })
            .collect()
    }

    #[test]
    fn burst_of_six_then_refused() {
        let decisions = run(&[0; 7]);
        assert!(decisions[..6].iter().all(|d| *d == RateDecision::Allowed));
        assert_eq!(
            decisions[6],
            RateDecision::Limited {
                retry_after_ms: 334
            }
        );
    }

    #[test]
    fn refills_at_three_per_second() {
        let mut times = vec![0; 6];
        times.extend([334, 400, 668]);
        let d = run(&times);
        assert_eq!(d[6], RateDecision::Allowed);
        assert!(matches!(d[7], RateDecision::Limited { .. }));
        assert_eq!(d[8], RateDecision::Allowed);
    }

    #[test]
    fn several_tokens_are_taken_all_or_none() {
        let (d, tat) = decide(None, 0, RULE, 6);
        assert_eq!(d, RateDecision::Allowed);
        // All six taken: the next token is one interval away.
        let (d, _) = decide(tat, 0, RULE, 1);
        assert_eq!(
            d,
            RateDecision::Limited {
                retry_after_ms: 334
            }
        );
        let (d, _) = decide(tat, 334 * 2, RULE, 3);
        assert_eq!(
            d,
            RateDecision::Limited {
                retry_after_ms: 334
            }
        );
        assert_eq!(decide(tat, 334 * 3, RULE, 3).0, RateDecision::Allowed);
    }

    #[test]
    fn more_than_the_burst_is_never_admitted() {
        assert_eq!(
            decide(None, 0, RULE, 7).0,
            RateDecision::Limited { retry_after_ms: 0 }
        );
        let (_, tat) = decide(None, 0, RULE, 2);
        assert_eq!(
            decide(tat, 0, RULE, 7).0,
            RateDecision::Limited {
                retry_after_ms: 334 * 2
            }
        );
    }

    #[test]
    fn idle_bucket_starts_full() {
        let mut times = vec![0; 6];
        times.extend([10_000; 6]);
        assert!(run(&times).iter().all(|d| *d == RateDecision::Allowed));
    }
}
