//! A per-merchant token bucket: `rate` requests per second with bursts of up to `rate`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use domain::MerchantId;

/// Per-merchant request limit; `0` requests per second turns it off.
#[derive(Debug)]
pub struct RateLimiter {
    rate: f64,
    buckets: Mutex<HashMap<MerchantId, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

impl RateLimiter {
    /// A limiter allowing `per_sec` requests per second per merchant (0 = unlimited).
    pub fn new(per_sec: u32) -> Self {
        Self {
            rate: f64::from(per_sec),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token for `merchant`, or says how long to wait before one is free.
    pub fn check(&self, merchant: &MerchantId) -> Result<(), Duration> {
        self.check_at(merchant, Instant::now())
    }

    fn check_at(&self, merchant: &MerchantId, now: Instant) -> Result<(), Duration> {
        if self.rate <= 0.0 {
            return Ok(());
        }
        // A panic while holding the lock leaves only counters behind: keep using them.
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if !buckets.contains_key(merchant) {
            let full = Bucket {
                tokens: self.rate,
                last: now,
            };
            buckets.insert(merchant.clone(), full);
        }
        let Some(bucket) = buckets.get_mut(merchant) else {
            return Ok(());
        };
        let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.rate).min(self.rate);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / self.rate))
        }
    }
}

/// Whole seconds for `Retry-After`: the wait rounded up, at least 1.
pub fn retry_after_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

#[cfg(test)]
mod tests {
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
    fn retry_after_rounds_up() {
        assert_eq!(retry_after_secs(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after_secs(Duration::from_secs(2)), 2);
    }
}
