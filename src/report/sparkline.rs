//! A series as a line of block characters (`▁▂▄█`), lowest to highest, for trends in a
//! terminal and in Markdown summaries.

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// One character per value, scaled between the series' lowest and highest; a flat series is
/// a flat line at mid height.
pub fn sparkline(values: &[f64]) -> String {
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let (low, high) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    values
        .iter()
        .map(|v| {
            if !v.is_finite() {
                ' '
            } else if high - low < f64::EPSILON * high.abs().max(1.0) {
                BARS[3]
            } else {
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "a share of 0..=1 times 7, rounded"
                )]
                let step = (((v - low) / (high - low)) * 7.0).round() as usize;
                BARS[step.min(7)]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_to_highest() {
        assert_eq!(sparkline(&[0.5, 0.5, 0.25, 1.0]), "▃▃▁█");
        assert_eq!(sparkline(&[2.0, 2.0]), "▄▄");
        assert_eq!(sparkline(&[]), "");
    }
}
