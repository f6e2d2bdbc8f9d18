//! Safety limits on taking GPU nodes out of service: a circuit breaker that stops isolating
//! once a share of the GPU nodes was isolated within a window (NVSentinel's default: 50% in
//! the last minutes), and a cap per run. A fleet-wide symptom (a bad driver rollout, a DCGM
//! outage) then costs a few nodes, not the fleet.
//! Source: NVIDIA NVSentinel, docs/configuration (the quarantine circuit breaker); EKS node
//! auto repair's NodeRepairConfig caps concurrent repairs the same way.

use serde::Serialize;

/// The limits; `share` of the GPU nodes within `window_seconds`, `per_run` by one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub share: f64,
    pub window_seconds: i64,
    pub per_run: Option<usize>,
}

impl Default for Limits {
    /// 50% in 10 minutes, as NVSentinel's breaker; no cap per run unless asked.
    fn default() -> Self {
        Self {
            share: 0.5,
            window_seconds: 600,
            per_run: None,
        }
    }
}

/// Whether one more node may be isolated, and the counts it was judged on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub ok: bool,
    /// GPU nodes isolated (under the key) within the window, before this one.
    pub recent: usize,
    pub total: usize,
    /// How many the share allows within the window.
    pub allowed: usize,
    pub this_run: usize,
    /// Why not, naming the limit; empty when ok.
    pub reason: String,
}

/// One more isolation, given `recent` of `total` GPU nodes isolated within the window and
/// `this_run` by this run so far.
pub fn decide(total: usize, recent: usize, this_run: usize, limits: Limits) -> Decision {
    // The share of the fleet, rounded down; at least one node may always go.
    let allowed = ((total as f64 * limits.share).floor() as usize).max(1);
    let window = limits.window_seconds / 60;
    let reason = if recent + 1 > allowed {
        format!(
            "circuit breaker: {recent} of {total} GPU nodes were isolated in the last {window} min, and one more would pass {:.0}% ({allowed} nodes); isolate by hand if this is real, or raise `share`",
            limits.share * 100.0
        )
    } else if limits.per_run.is_some_and(|cap| this_run + 1 > cap) {
        format!(
            "this run already isolated {this_run} node(s), its cap (`per_run`: {})",
            limits.per_run.unwrap_or_default()
        )
    } else {
        String::new()
    };
    Decision {
        ok: reason.is_empty(),
        recent,
        total,
        allowed,
        this_run,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_of_four_may_go_then_the_breaker_opens() {
        let limits = Limits::default();
        assert!(decide(4, 0, 0, limits).ok);
        assert!(decide(4, 1, 1, limits).ok);
        let third = decide(4, 2, 2, limits);
        assert!(!third.ok);
        assert!(
            third.reason.contains("2 of 4 GPU nodes"),
            "{}",
            third.reason
        );
        assert!(third.reason.contains("50% (2 nodes)"), "{}", third.reason);
        assert!(third.reason.contains("last 10 min"), "{}", third.reason);
    }

    #[test]
    fn one_node_may_always_go_and_the_cap_per_run_is_its_own_limit() {
        assert!(decide(1, 0, 0, Limits::default()).ok);
        let capped = Limits {
            per_run: Some(1),
            ..Limits::default()
        };
        let second = decide(64, 1, 1, capped);
        assert!(!second.ok);
        assert!(second.reason.contains("`per_run`: 1"), "{}", second.reason);
    }
}
