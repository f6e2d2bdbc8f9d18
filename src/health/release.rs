//! Release after recovery: how many checks in a row a node has passed (this run's and the
//! record's, newest first), which decides when an isolated node goes back into service. A
//! check passes at HEALTHY or MONITOR, the verdicts that take no action; the first worse one
//! ends the streak, so the verdict that isolated the node is where its count starts.

use serde_json::Value;

use super::node_check::DCGM_WATCHDOG;
use super::verdict::Verdict;

/// Passing checks in a row: `current` (this run's health) and then `past` (earlier healths of
/// the same machine, newest first, each with its age), stopping at the first that did not pass
/// or could not be read.
pub fn passing_streak(current: &Value, past: &[(f64, Value)]) -> usize {
    if !passes(current) {
        return 0;
    }
    1 + past.iter().take_while(|(_, health)| passes(health)).count()
}

/// HEALTHY or MONITOR, every check having answered: a node whose diagnostic hung was not
/// examined, so it has not passed.
fn passes(health: &Value) -> bool {
    let verdict = health["verdict"].as_str().and_then(Verdict::parse);
    let hung = health["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|f| f["check"] == DCGM_WATCHDOG);
    verdict.is_some_and(|v| v <= Verdict::Monitor) && !hung
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn past(verdicts: &[&str]) -> Vec<(f64, Value)> {
        verdicts
            .iter()
            .enumerate()
            .map(|(i, v)| (i as f64 * 3600.0, json!({ "verdict": v })))
            .collect()
    }

    #[test]
    fn the_streak_counts_back_to_the_verdict_that_isolated() {
        let record = past(&["HEALTHY", "MONITOR", "REBOOT", "HEALTHY", "HEALTHY"]);
        let now = |v: &str| json!({ "verdict": v });
        assert_eq!(passing_streak(&now("HEALTHY"), &record), 3);
        assert_eq!(passing_streak(&now("MONITOR"), &record), 3);
        assert_eq!(passing_streak(&now("RESET"), &record), 0);
        assert_eq!(passing_streak(&now("HEALTHY"), &[]), 1);
        // A record that cannot be read is not a pass.
        assert_eq!(passing_streak(&now("HEALTHY"), &past(&["HEALTHY", "?"])), 2);
        // Nor is a check whose diagnostic hung, MONITOR though it is.
        let hung = json!({ "verdict": "MONITOR", "findings": [{ "check": "dcgm_watchdog", "verdict": "MONITOR" }] });
        assert_eq!(passing_streak(&hung, &record), 0);
    }
}
