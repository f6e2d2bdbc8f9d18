//! Readable differences between two values, for `assert_eq` and snapshots.

use similar::TextDiff;

/// A unified diff of two texts, `-` for expected and `+` for actual.
pub(crate) fn unified(
    expected: &str,
    actual: &str,
    expected_label: &str,
    actual_label: &str,
) -> String {
    TextDiff::from_lines(expected, actual)
        .unified_diff()
        .context_radius(3)
        .header(expected_label, actual_label)
        .to_string()
}
