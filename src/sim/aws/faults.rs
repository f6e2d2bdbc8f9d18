//! Faults injected into AWS calls on request: a share of calls throttled, a share failing with
//! a server error, and added latency. Decisions are deterministic (a counter per request
//! through a hash), so a drill that fails under faults fails the same way again, even when
//! its calls go out at the same time and arrive in another order.

use std::collections::HashMap;
use std::time::Duration;

#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct AwsFaults {
    /// Share of calls answered with the service's throttling error, 0.0-1.0.
    pub(crate) throttle_rate: f64,
    /// Share of calls answered with HTTP 500.
    pub(crate) error_rate: f64,
    /// Wall-clock delay added before each answer.
    pub(crate) latency: Duration,
    /// IAM actions (`eks:UpdateNodegroupConfig`) answered with the service's access-denied
    /// error, as for an identity whose policies do not allow them.
    pub(crate) denied: std::collections::BTreeSet<String>,
    /// Every call answered with the service's expired-token error, as for a session that ran
    /// out.
    pub(crate) token_expired: bool,
    /// The account's vCPU quota is used up: new instances are refused (VcpuLimitExceeded).
    pub(crate) vcpu_quota: bool,
    /// The private subnets have no free address: new instances are refused.
    pub(crate) subnet_ips_exhausted: bool,
    /// How many times each request (by its hash) was drawn for.
    calls: HashMap<u64, u64>,
}

/// Why the identity's call is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    Denied,
    TokenExpired,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Injected {
    Throttled,
    ServerError,
}

impl AwsFaults {
    #[cfg(test)]
    pub(crate) fn is_quiet(&self) -> bool {
        self.throttle_rate <= 0.0
            && self.error_rate <= 0.0
            && self.latency.is_zero()
            && self.denied.is_empty()
            && !self.token_expired
    }

    /// How a call of `action` is refused before it is served, if it is.
    pub(crate) fn refusal(&self, action: &str) -> Option<Refusal> {
        if self.token_expired {
            Some(Refusal::TokenExpired)
        } else if self.denied.contains(action) {
            Some(Refusal::Denied)
        } else {
            None
        }
    }

    /// Whether this call fails, and how. `request` identifies the call (operation and
    /// parameters); its n-th attempt always gets the same answer.
    pub(crate) fn draw(&mut self, request: &str) -> Option<Injected> {
        if self.throttle_rate <= 0.0 && self.error_rate <= 0.0 {
            return None;
        }
        let key = request_hash(request);
        let count = self.calls.entry(key).or_insert(0);
        *count += 1;
        // splitmix64: cheap, well spread, and the same sequence every run.
        let mut z = (key ^ *count).wrapping_mul(0x9E37_79B9_7F4A_7C15);
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

/// FNV-1a over the request with what differs between runs left out: idempotency tokens and
/// other UUIDs the SDK makes up.
fn request_hash(request: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let bytes = request.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if is_uuid(&bytes[i..]) {
            i += 36;
            continue;
        }
        hash ^= u64::from(bytes[i]);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash
}

fn is_uuid(text: &[u8]) -> bool {
    text.len() >= 36
        && text[..36].iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
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
        let draws: Vec<Option<Injected>> = (0..10_000)
            .map(|i| faults.draw(&format!("call {}", i % 7)))
            .collect();
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
        let replay: Vec<Option<Injected>> = (0..10_000)
            .map(|i| again.draw(&format!("call {}", i % 7)))
            .collect();
        assert_eq!(draws, replay);
    }

    #[test]
    fn a_request_gets_its_own_sequence_whatever_its_token() {
        let faults = || AwsFaults {
            throttle_rate: 0.5,
            ..AwsFaults::default()
        };
        let (mut a, mut b) = (faults(), faults());
        let token =
            |n: u32| format!("{{\"clientRequestToken\":\"{n:08x}-0000-4000-8000-000000000000\"}}");
        let first: Vec<_> = (0..20).map(|n| a.draw(&token(n))).collect();
        // Another request in between does not move this one's sequence.
        let second: Vec<_> = (0..20)
            .map(|n| {
                b.draw("something else");
                b.draw(&token(n + 100))
            })
            .collect();
        assert_eq!(first, second);
    }

    #[test]
    fn no_rates_no_faults() {
        let mut faults = AwsFaults::default();
        assert!(faults.is_quiet());
        assert!((0..100).all(|_| faults.draw("call").is_none()));
    }
}
