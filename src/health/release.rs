//! Release after recovery: how many checks in a row a node has passed (this run's and the
//! record's, newest first), which decides when an isolated node goes back into service. A
//! check passes at HEALTHY or MONITOR, the verdicts that take no action; the first worse one
//! ends the streak, so the verdict that isolated the node is where its count starts.

use serde_json::Value;

use super::verdict::Verdict;

/// Passing checks in a row: `current` (this run's verdict) and then `past` (earlier healths of
/// the same machine, newest first, each with its age), stopping at the first that did not pass
/// or could not be read.
pub fn passing_streak(current: Verdict, past: &[(f64, Value)]) -> usize {
    let passes = |v: Option<Verdict>| v.is_some_and(|v| v <= Verdict::Monitor);
    if !passes(Some(current)) {
        return 0;
    }
    1 + past
        .iter()
        .take_while(|(_, health)| passes(health["verdict"].as_str().and_then(Verdict::parse)))
        .count()
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
        assert_eq!(passing_streak(Verdict::Healthy, &record), 3);
        assert_eq!(passing_streak(Verdict::Monitor, &record), 3);
        assert_eq!(passing_streak(Verdict::Reset, &record), 0);
        assert_eq!(passing_streak(Verdict::Healthy, &[]), 1);
        // A record that cannot be read is not a pass.
        assert_eq!(
            passing_streak(Verdict::Healthy, &past(&["HEALTHY", "?"])),
            2
        );
    }
}
