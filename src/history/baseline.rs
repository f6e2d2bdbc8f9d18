//! A metric against its history: the median of the last runs where it passed, and whether
//! this run's value is worse than that by more than the drop allowed.
//!
//! The median, not the mean: one bad night in the window (a run that failed the baseline is
//! left out, but a noisy one that passed is not) moves it little, and it is a value a run
//! really had.

use crate::report::{BaselineResult, BaselineSpec, BaselineVerdict, Better, MIN_BASELINE_RUNS};

/// Judges `value` against `past` (history number and value of earlier passing runs, oldest
/// first; only the last `spec.runs` are used).
pub fn judge(
    value: f64,
    better: Better,
    spec: BaselineSpec,
    past: &[(u64, f64)],
) -> BaselineResult {
    let window = &past[past.len().saturating_sub(spec.runs)..];
    let compared: Vec<u64> = window.iter().map(|(run, _)| *run).collect();
    if window.len() < MIN_BASELINE_RUNS.min(spec.runs.max(1)) {
        return BaselineResult {
            compared,
            median: None,
            limit: None,
            verdict: BaselineVerdict::TooFewRuns,
        };
    }
    let mut values: Vec<f64> = window.iter().map(|(_, v)| *v).collect();
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    let median = if values.len().is_multiple_of(2) {
        (values[middle - 1] + values[middle]) / 2.0
    } else {
        values[middle]
    };
    let margin = median.abs() * spec.drop;
    let (limit, worse) = match better {
        Better::Higher => (median - margin, value < median - margin),
        Better::Lower => (median + margin, value > median + margin),
    };
    BaselineResult {
        compared,
        median: Some(median),
        limit: Some(limit),
        verdict: if worse {
            BaselineVerdict::Worse
        } else {
            BaselineVerdict::Within
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn past(values: &[f64]) -> Vec<(u64, f64)> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| (i as u64 + 1, *v))
            .collect()
    }

    const SPEC: BaselineSpec = BaselineSpec {
        runs: 20,
        drop: 0.2,
    };

    #[test]
    fn a_drop_past_the_margin_is_worse() {
        let history = past(&[0.51, 0.50, 0.52, 0.51, 0.49, 0.51, 0.50]);
        let ok = judge(0.45, Better::Higher, SPEC, &history);
        assert_eq!(ok.verdict, BaselineVerdict::Within);
        assert_eq!(ok.median, Some(0.51));
        let bad = judge(0.26, Better::Higher, SPEC, &history);
        assert_eq!(bad.verdict, BaselineVerdict::Worse);
        assert!((bad.limit.unwrap() - 0.408).abs() < 1e-9);
        assert_eq!(bad.compared, [1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn lower_is_better_turns_the_margin_round() {
        let history = past(&[100.0, 110.0, 90.0]);
        assert_eq!(
            judge(125.0, Better::Lower, SPEC, &history).verdict,
            BaselineVerdict::Worse
        );
        assert_eq!(
            judge(60.0, Better::Lower, SPEC, &history).verdict,
            BaselineVerdict::Within
        );
    }

    #[test]
    fn only_the_last_runs_count_and_a_few_are_not_a_baseline() {
        let history = past(&[9.0, 9.0, 9.0, 1.0, 1.0, 1.0]);
        let spec = BaselineSpec { runs: 3, drop: 0.1 };
        let r = judge(1.0, Better::Higher, spec, &history);
        assert_eq!(
            (r.verdict, r.compared.clone()),
            (BaselineVerdict::Within, vec![4, 5, 6])
        );
        let few = judge(0.0, Better::Higher, SPEC, &past(&[1.0, 1.0]));
        assert_eq!(few.verdict, BaselineVerdict::TooFewRuns);
        assert_eq!(few.median, None);
    }

    #[test]
    fn even_windows_take_the_middle_pair() {
        let r = judge(3.0, Better::Higher, SPEC, &past(&[1.0, 2.0, 4.0, 100.0]));
        assert_eq!(r.median, Some(3.0));
    }
}
