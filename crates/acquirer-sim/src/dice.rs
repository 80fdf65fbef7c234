//! The randomness behind fault rates: a seeded generator, so a run can be replayed.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Rolls against rates from a seeded generator.
#[derive(Debug)]
pub struct Dice {
    rng: StdRng,
}

impl Dice {
    /// Dice that replay the same rolls for the same seed.
    pub fn seeded(seed: u64) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// True with probability `rate` (0 never, 1 always).
    pub fn hit(&mut self, rate: f64) -> bool {
        if rate <= 0.0 {
            return false;
        }
        if rate >= 1.0 {
            return true;
        }
        self.rng.gen::<f64>() < rate
    }
}

/// A seed from the clock and the process id, for runs that did not pick one.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos() as u64)
        .unwrap_or(0);
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_and_one_are_certain() {
        let mut dice = Dice::seeded(1);
        assert!((0..1000).all(|_| !dice.hit(0.0)));
        assert!((0..1000).all(|_| dice.hit(1.0)));
    }

    #[test]
    fn same_seed_same_rolls() {
        let mut a = Dice::seeded(42);
        let mut b = Dice::seeded(42);
        let rolls_a: Vec<bool> = (0..100).map(|_| a.hit(0.5)).collect();
        let rolls_b: Vec<bool> = (0..100).map(|_| b.hit(0.5)).collect();
        assert_eq!(rolls_a, rolls_b);
    }

    #[test]
    fn a_rate_is_roughly_kept() {
        let mut dice = Dice::seeded(7);
        let hits = (0..10_000).filter(|_| dice.hit(0.3)).count();
        assert!((2_500..3_500).contains(&hits), "{hits} hits");
    }
}
