//! What a run has cost so far in the resources it started (`--max-cost-usd`): each change
//! that sizes a billed resource (a node group's instances, a control plane) says how many run
//! after it and how many ran before the run touched it; the difference, times the price table,
//! times the time on the run's clock, is the run's own spend. What ran before the run is not
//! the run's.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use serde::Serialize;

use crate::lab::cost::price;

/// How many of a billed kind a resource runs after a change, and ran before it. A deletion
/// leaves `kind` empty: whatever the resource ran, none runs after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Runs {
    /// A price table kind: an instance type, `eks-cluster`, `nat-gateway`.
    pub kind: String,
    pub count: i64,
    pub before: i64,
}

#[derive(Debug, Clone)]
struct Track {
    kind: String,
    /// What ran before the run first changed it.
    baseline: i64,
    count: i64,
    since: Duration,
    /// Spent up to `since`.
    spent_usd: f64,
}

impl Track {
    fn usd_per_hour(&self) -> f64 {
        let caused = (self.count - self.baseline).max(0) as f64;
        caused * price(&self.kind).map_or(0.0, |p| p.usd_per_hour)
    }

    fn spent(&self, now: Duration) -> f64 {
        let hours = now.saturating_sub(self.since).as_secs_f64() / 3600.0;
        self.spent_usd + self.usd_per_hour() * hours
    }
}

/// From when a resource the run started costs what per hour (the rate after a change): the
/// steps of the run's spend, for a chart of it over the run.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SpendRate {
    pub resource: String,
    /// The price table's kind (`g5.xlarge`, `eks-cluster`).
    pub kind: String,
    /// On the run's clock, from its start.
    pub from_ms: u64,
    pub usd_per_hour: f64,
}

/// The run's spend by resource.
#[derive(Debug, Clone, Default)]
pub struct Spend {
    resources: BTreeMap<String, Track>,
    rates: Vec<SpendRate>,
}

impl Spend {
    /// Whether the price table prices `kind` (a budget cannot hold what it cannot price).
    pub fn prices(kind: &str) -> bool {
        price(kind).is_some()
    }

    /// Each change of a resource's rate, in order (`from` is the run's start on its clock).
    pub fn rates(&self, from: Duration) -> Vec<SpendRate> {
        self.rates
            .iter()
            .map(|r| SpendRate {
                from_ms: r
                    .from_ms
                    .saturating_sub(u64::try_from(from.as_millis()).unwrap_or(0)),
                ..r.clone()
            })
            .collect()
    }

    /// `resource` runs `runs.count` from `now` on.
    pub fn record(&mut self, resource: &str, runs: &Runs, now: Duration) {
        self.record_track(resource, runs, now);
        if let Some(track) = self.resources.get(resource) {
            let usd_per_hour = track.usd_per_hour();
            // Only changes are steps of the chart: a rate said again, or a first rate of
            // nothing, adds no step.
            let before = self.rates.iter().rev().find(|r| r.resource == resource);
            let unchanged = match before {
                Some(r) => r.usd_per_hour == usd_per_hour && r.kind == track.kind,
                None => usd_per_hour == 0.0,
            };
            if unchanged {
                return;
            }
            self.rates.push(SpendRate {
                resource: resource.to_string(),
                kind: track.kind.clone(),
                from_ms: u64::try_from(now.as_millis()).unwrap_or(u64::MAX),
                usd_per_hour,
            });
        }
    }

    fn record_track(&mut self, resource: &str, runs: &Runs, now: Duration) {
        match self.resources.get_mut(resource) {
            Some(track) => {
                track.spent_usd = track.spent(now);
                if !runs.kind.is_empty() {
                    track.kind = runs.kind.clone();
                }
                track.count = runs.count;
                track.since = now;
            }
            None => {
                self.resources.insert(
                    resource.to_string(),
                    Track {
                        kind: runs.kind.clone(),
                        baseline: runs.before,
                        count: runs.count,
                        since: now,
                        spent_usd: 0.0,
                    },
                );
            }
        }
    }

    /// Dollars spent so far.
    pub fn spent(&self, now: Duration) -> f64 {
        self.resources.values().map(|t| t.spent(now)).sum()
    }

    /// What the run has started that is billed now, in words: `2 x g5.xlarge of
    /// nodegroup/myeks5w/gpu ($2.01/h)`.
    pub fn running(&self) -> String {
        let mut out = String::new();
        for (resource, track) in &self.resources {
            let caused = track.count - track.baseline;
            if caused <= 0 {
                continue;
            }
            if !out.is_empty() {
                out.push_str(", ");
            }
            let _ = write!(
                out,
                "{caused} x {} of {resource} (${:.2}/h)",
                track.kind,
                track.usd_per_hour()
            );
        }
        if out.is_empty() {
            out.push_str("nothing it started runs now");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(count: i64, before: i64) -> Runs {
        Runs {
            kind: "g5.xlarge".into(),
            count,
            before,
        }
    }

    #[test]
    fn only_what_the_run_started_is_its_spend() {
        let mut spend = Spend::default();
        let hour = Duration::from_secs(3600);
        spend.record("nodegroup/c/gpu", &runs(3, 1), Duration::ZERO);
        // Two more than before, for an hour.
        assert!((spend.spent(hour) - 2.0 * 1.006).abs() < 1e-9);
        spend.record("nodegroup/c/gpu", &runs(0, 3), hour);
        // Back below where it was: nothing more accrues.
        assert!((spend.spent(hour * 5) - 2.0 * 1.006).abs() < 1e-9);
        assert_eq!(spend.running(), "nothing it started runs now");
    }

    #[test]
    fn the_running_resources_are_named_with_their_rate() {
        let mut spend = Spend::default();
        spend.record("nodegroup/c/gpu", &runs(2, 0), Duration::ZERO);
        assert_eq!(
            spend.running(),
            "2 x g5.xlarge of nodegroup/c/gpu ($2.01/h)"
        );
        assert!(Spend::prices("g5.xlarge") && Spend::prices("p5.48xlarge"));
        assert!(!Spend::prices("p5e.48xlarge") && !Spend::prices("trn1.32xlarge"));
    }

    #[test]
    fn the_rates_are_the_changes_on_the_runs_clock() {
        let mut spend = Spend::default();
        let minute = Duration::from_secs(60);
        // Nothing started yet, then two, then the same two said again, then none.
        spend.record("nodegroup/c/gpu", &runs(0, 0), minute);
        spend.record("nodegroup/c/gpu", &runs(2, 0), minute * 2);
        spend.record("nodegroup/c/gpu", &runs(2, 0), minute * 3);
        spend.record("nodegroup/c/gpu", &runs(0, 2), minute * 4);
        spend.record("nodegroup/c/gpu", &runs(0, 0), minute * 5);
        let rates = spend.rates(minute);
        let steps: Vec<(u64, f64)> = rates.iter().map(|r| (r.from_ms, r.usd_per_hour)).collect();
        assert_eq!(steps, vec![(60_000, 2.012), (180_000, 0.0)]);
    }
}
