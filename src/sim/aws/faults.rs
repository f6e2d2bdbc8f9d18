//! Faults injected into AWS calls on request: a share of calls throttled, a share failing with
//! a server error, and added latency. Decisions are deterministic (a counter through a hash),
//! so a drill that fails under faults fails the same way again.

use std::time::Duration;

#[derive(Debug, Default, Clone, PartialEq)]
pub struct AwsFaults {
    /// Share of calls answered with the service's throttling error, 0.0-1.0.
    pub throttle_rate: f64,
    /// Share of calls answered with HTTP 500.
    pub error_rate: f64,
    /// Wall-clock delay added before each answer.
    pub latency: Duration,
    calls: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Injected {
    Throttled,
    ServerError,
}

impl AwsFaults {
    pub fn is_quiet(&self) -> bool {
        self.throttle_rate <= 0.0 && self.error_rate <= 0.0 && self.latency.is_zero()
    }

    /// Whether this call fails, and how.
    pub fn draw(&mut self) -> Option<Injected> {
        if self.throttle_rate <= 0.0 && self.error_rate <= 0.0 {
            return None;
        }
        self.calls += 1;
        // splitmix64: cheap, well spread, and the same sequence every run.
        let mut z = self.calls.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let roll = (z >> 11) as f64 / (1u64 << 53) as f64;
        if roll < self.throttle_rate {
            Some(Injected::Throttled)
        } else if roll < self.throttle_rate + self.error_rate {
            Some(Injected::ServerError)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_honoured_roughly_and_deterministically() {
        let mut faults = AwsFaults {
            throttle_rate: 0.2,
            error_rate: 0.1,
            ..AwsFaults::default()
        };
        let draws: Vec<Option<Injected>> = (0..10_000).map(|_| faults.draw()).collect();
        let throttled = draws
            .iter()
            .filter(|d| **d == Some(Injected::Throttled))
            .count();
        let errors = draws
            .iter()
            .filter(|d| **d == Some(Injected::ServerError))
            .count();
        assert!((1_800..2_200).contains(&throttled), "{throttled}");
        assert!((800..1_200).contains(&errors), "{errors}");
        let mut again = AwsFaults {
            throttle_rate: 0.2,
            error_rate: 0.1,
            ..AwsFaults::default()
        };
        let replay: Vec<Option<Injected>> = (0..10_000).map(|_| again.draw()).collect();
        assert_eq!(draws, replay);
    }

    #[test]
    fn no_rates_no_faults() {
        let mut faults = AwsFaults::default();
        assert!(faults.is_quiet());
        assert!((0..100).all(|_| faults.draw().is_none()));
    }
}
