//! Short-lived in-memory copies of what every request reads (routes, merchants).
//!
//! A reader takes a [`Ticket`] before it reads the database and stores what it read with it; a
//! `clear` in between (an admin change in this process) makes that store a no-op, so a read
//! that raced a change never outlives it.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// When a read of the database started, and which cache generation it belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    at: Instant,
    generation: u64,
}

/// Values by key, each fresh for `ttl`; at most `capacity` entries are kept.
#[derive(Debug)]
pub(crate) struct TtlMap<K, V> {
    ttl: Duration,
    capacity: usize,
    generation: AtomicU64,
    map: RwLock<HashMap<K, (Instant, V)>>,
}

impl<K: Eq + Hash, V: Clone> TtlMap<K, V> {
    pub(crate) fn new(ttl: Duration, capacity: usize) -> Self {
        Self {
            ttl,
            capacity: capacity.max(1),
            generation: AtomicU64::new(0),
            map: RwLock::new(HashMap::new()),
        }
    }

    /// The value for `key`, if it is still fresh.
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        let map = self.map.read().unwrap_or_else(|p| p.into_inner());
        match map.get(key) {
            Some((at, value)) if at.elapsed() < self.ttl => Some(value.clone()),
            _ => None,
        }
    }

    /// Taken before reading the database for a later [`TtlMap::put`].
    pub(crate) fn ticket(&self) -> Ticket {
        Ticket {
            at: Instant::now(),
            generation: self.generation.load(Ordering::Acquire),
        }
    }

    /// Stores what was read under `ticket`, unless the cache was cleared since.
    pub(crate) fn put(&self, key: K, ticket: Ticket, value: V) {
        if self.ttl.is_zero() {
            return;
        }
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        if self.generation.load(Ordering::Acquire) != ticket.generation {
            return;
        }
        if map.len() >= self.capacity && !map.contains_key(&key) {
            let ttl = self.ttl;
            map.retain(|_, (at, _)| at.elapsed() < ttl);
            if map.len() >= self.capacity {
                map.clear();
            }
        }
        map.insert(key, (ticket.at, value));
    }

    /// Forgets everything, including reads under way.
    pub(crate) fn clear(&self) {
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        self.generation.fetch_add(1, Ordering::AcqRel);
        map.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_expire() {
        let map = TtlMap::new(Duration::from_millis(50), 8);
        assert_eq!(map.get(&1), None::<u8>);
        map.put(1, map.ticket(), 7);
        assert_eq!(map.get(&1), Some(7));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(map.get(&1), None);
    }

    #[test]
    fn a_read_that_raced_a_clear_is_not_stored() {
        let map = TtlMap::new(Duration::from_secs(5), 8);
        let ticket = map.ticket();
        map.clear();
        map.put((), ticket, "stale");
        assert_eq!(map.get(&()), None);
        map.put((), map.ticket(), "fresh");
        assert_eq!(map.get(&()), Some("fresh"));
    }

    #[test]
    fn stays_within_capacity_and_zero_ttl_keeps_nothing() {
        let map = TtlMap::new(Duration::from_secs(5), 2);
        for key in 0..5 {
            map.put(key, map.ticket(), key);
        }
        assert_eq!(map.get(&4), Some(4));
        assert!(map.map.read().map(|m| m.len() <= 2).unwrap_or(false));
        let off = TtlMap::new(Duration::ZERO, 2);
        off.put(1, off.ticket(), 1);
        assert_eq!(off.get(&1), None);
    }
}
