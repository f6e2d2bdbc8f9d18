//! Resource quantities (`500m`, `16Gi`, `1e3`): their syntax as the API server decodes them,
//! and their value, enough to compare requests with limits and with what a node holds.

/// `^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`, the message the API server decodes a bad
/// quantity with, and the suffixes it knows.
pub(crate) const SYNTAX_ERROR: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const SUFFIXES: [&str; 15] = [
    "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi",
];

/// Whether `text` is a quantity the API server accepts.
pub(crate) fn is_valid(text: &str) -> bool {
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let digits = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (number, suffix) = body.split_at(digits);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return false;
    }
    if SUFFIXES.contains(&suffix) || suffix == "Ei" {
        return true;
    }
    // A decimal exponent: e3, E-2.
    let Some(exponent) = suffix.strip_prefix(['e', 'E']) else {
        return false;
    };
    let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
    !exponent.is_empty() && exponent.chars().all(|c| c.is_ascii_digit())
}

/// Parses a quantity into base units times 1000 (millicores, milli-bytes), enough to compare.
pub(crate) fn milli(text: &str) -> i128 {
    let text = text.trim();
    let suffixes: [(&str, i128); 13] = [
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("Ti", 1 << 40),
        ("Pi", 1 << 50),
        ("Ei", 1 << 60),
        ("k", 1_000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
        ("T", 1_000_000_000_000),
        ("P", 1_000_000_000_000_000),
        ("E", 1_000_000_000_000_000_000),
        ("m", 0),
    ];
    for (suffix, factor) in suffixes {
        if let Some(number) = text.strip_suffix(suffix) {
            let value: f64 = number.parse().unwrap_or(0.0);
            return if factor == 0 {
                value as i128
            } else {
                (value * 1000.0) as i128 * factor
            };
        }
    }
    (text.parse::<f64>().unwrap_or(0.0) * 1000.0) as i128
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_as_the_api_server_decodes_it() {
        for good in ["1", "500m", "16Gi", "1.5", "1e3", "2E-2", "+1k", "0.5Ei"] {
            assert!(is_valid(good), "{good}");
        }
        for bad in ["", "abc", "1x", "Gi", "1..2", "1 Gi", "1e"] {
            assert!(!is_valid(bad), "{bad}");
        }
        assert_eq!(milli("500m"), 500);
        assert_eq!(milli("2"), 2000);
    }
}
