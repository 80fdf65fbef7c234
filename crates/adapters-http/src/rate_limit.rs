//! Token buckets per key (a merchant, an operation): `rate` requests per second with bursts of
//! up to `rate`.
//!
//! A bucket that has refilled is no different from a new one, so such buckets are forgotten:
//! whenever the map has doubled since the last sweep, the full ones are dropped. The map then
//! holds about the keys that were used in the last second (the time an emptied bucket takes to
//! refill), however many keys were ever seen, at an amortised constant cost per request.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Fewest buckets before a sweep is considered.
const FIRST_SWEEP: usize = 1024;

/// A request limit per key; `0` requests per second turns it off.
#[derive(Debug)]
pub struct RateLimiter<K> {
    rate: f64,
    buckets: Mutex<Buckets<K>>,
}

#[derive(Debug)]
struct Buckets<K> {
    by_key: HashMap<K, Bucket>,
    /// Sweep when the map reaches this many buckets.
    sweep_at: usize,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

impl Bucket {
    /// The tokens it holds at `now`, refilled at `rate` up to `rate`.
    fn level(&self, now: Instant, rate: f64) -> f64 {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        (self.tokens + elapsed * rate).min(rate)
    }
}

impl<K: Eq + Hash + Clone> RateLimiter<K> {
    /// A limiter allowing `per_sec` requests per second per key (0 = unlimited).
    pub fn new(per_sec: u32) -> Self {
        Self {
            rate: f64::from(per_sec),
            buckets: Mutex::new(Buckets {
                by_key: HashMap::new(),
                sweep_at: FIRST_SWEEP,
            }),
        }
    }

    /// Takes one token for `key`, or says how long to wait before one is free.
    pub fn check(&self, key: &K) -> Result<(), Duration> {
        self.check_at(key, Instant::now())
    }

    fn check_at(&self, key: &K, now: Instant) -> Result<(), Duration> {
        if self.rate <= 0.0 {
            return Ok(());
        }
        // A panic while holding the lock leaves only counters behind: keep using them.
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if !buckets.by_key.contains_key(key) {
            buckets.sweep(now, self.rate);
            let full = Bucket {
                tokens: self.rate,
                last: now,
            };
            buckets.by_key.insert(key.clone(), full);
        }
        let Some(bucket) = buckets.by_key.get_mut(key) else {
            return Ok(());
        };
        bucket.tokens = bucket.level(now, self.rate);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / self.rate))
        }
    }

    /// How many buckets are kept.
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.buckets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .by_key
            .len()
    }

    /// Whether `key` has a bucket.
    #[cfg(test)]
    fn knows(&self, key: &K) -> bool {
        self.buckets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .by_key
            .contains_key(key)
    }
}

impl<K> Buckets<K> {
    /// Forgets the buckets that have refilled, once the map has doubled since the last sweep.
    fn sweep(&mut self, now: Instant, rate: f64) {
        if self.by_key.len() < self.sweep_at {
            return;
        }
        self.by_key
            .retain(|_, bucket| bucket.level(now, rate) < rate);
        self.sweep_at = (self.by_key.len() * 2).max(FIRST_SWEEP);
    }
}

/// Whole seconds for `Retry-After`: the wait rounded up, at least 1.
pub fn retry_after_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

#[cfg(test)]
mod tests {
    use domain::MerchantId;

    use super::*;

    fn id(text: &str) -> MerchantId {
        MerchantId::parse(text).expect("valid id")
    }

    #[test]
    fn zero_means_unlimited() {
        let limiter = RateLimiter::new(0);
        for _ in 0..10_000 {
            assert!(limiter.check(&id("m")).is_ok());
        }
        assert_eq!(limiter.kept(), 0);
    }

    #[test]
    fn allows_a_burst_of_rate_then_refills_over_time() {
        let limiter = RateLimiter::new(5);
        let start = Instant::now();
        for _ in 0..5 {
            assert!(limiter.check_at(&id("m"), start).is_ok());
        }
        let wait = limiter.check_at(&id("m"), start).expect_err("limited");
        assert!(wait <= Duration::from_millis(200), "{wait:?}");
        assert_eq!(retry_after_secs(wait), 1);
        let later = start + Duration::from_millis(200);
        assert!(limiter.check_at(&id("m"), later).is_ok());
        assert!(limiter.check_at(&id("m"), later).is_err());
    }

    #[test]
    fn merchants_have_separate_buckets() {
        let limiter = RateLimiter::new(1);
        let now = Instant::now();
        assert!(limiter.check_at(&id("a"), now).is_ok());
        assert!(limiter.check_at(&id("a"), now).is_err());
        assert!(limiter.check_at(&id("b"), now).is_ok());
    }

    #[test]
    fn ten_a_second_per_key_of_any_type() {
        let limiter = RateLimiter::<u128>::new(10);
        let now = Instant::now();
        for _ in 0..10 {
            assert!(limiter.check_at(&7, now).is_ok());
        }
        assert!(limiter.check_at(&7, now).is_err(), "the 11th in a second");
        assert!(limiter.check_at(&8, now).is_ok());
        assert!(limiter
            .check_at(&7, now + Duration::from_millis(100))
            .is_ok());
    }

    #[test]
    fn buckets_that_have_refilled_are_forgotten_so_the_map_stays_bounded() {
        let limiter = RateLimiter::<u32>::new(10);
        let start = Instant::now();
        // A new key every millisecond: a used bucket refills in 0.1 s, so about 100 are not
        // full at any time, whatever the number of keys seen.
        for key in 0..100_000 {
            let at = start + Duration::from_millis(u64::from(key));
            assert!(limiter.check_at(&key, at).is_ok());
        }
        assert!(limiter.kept() <= FIRST_SWEEP, "{} kept", limiter.kept());
    }

    #[test]
    fn a_bucket_still_refilling_survives_a_sweep_and_a_forgotten_one_starts_full() {
        let limiter = RateLimiter::<u32>::new(10);
        let start = Instant::now();
        for _ in 0..10 {
            assert!(limiter.check_at(&0, start).is_ok());
        }
        // Enough new keys at the same moment to sweep several times.
        for key in 1..=5_000 {
            assert!(limiter.check_at(&key, start).is_ok());
        }
        assert!(limiter.check_at(&0, start).is_err(), "still limited");
        assert!(limiter.knows(&0) && limiter.knows(&1));
        // A second later every bucket is full: the next sweep forgets them all.
        let later = start + Duration::from_secs(1);
        for key in 5_001..=15_000 {
            assert!(limiter.check_at(&key, later).is_ok());
        }
        assert!(!limiter.knows(&0) && !limiter.knows(&1) && !limiter.knows(&5_000));
        assert!(limiter.knows(&15_000));
        for _ in 0..10 {
            assert!(limiter.check_at(&0, later).is_ok(), "a full bucket again");
        }
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(retry_after_secs(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after_secs(Duration::from_secs(2)), 2);
    }
}
