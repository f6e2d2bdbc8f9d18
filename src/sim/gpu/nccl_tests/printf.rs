//! The C number formats nccl-tests prints with: its `getFloatStr` column widths, `%g` and
//! `%e` (whose exponent has a sign and at least two digits, unlike Rust's).

/// `%.{precision}e` as C prints it: `1.2e+07`.
pub(crate) fn c_exp(value: f64, precision: usize) -> String {
    let rust = format!("{value:.precision$e}");
    let (mantissa, exponent) = rust.split_once('e').unwrap_or((&rust, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

/// `%g`: six significant digits, no trailing zeros, exponent form outside `1e-4..1e6`.
pub(crate) fn c_g(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return if value.is_finite() {
            "0".to_owned()
        } else {
            value.to_string()
        };
    }
    let rounded = format!("{value:.5e}");
    let exponent: i32 = rounded
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    if !(-4..6).contains(&exponent) {
        let text = c_exp(value, 5);
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, ""));
        return format!("{}e{exp}", trim_zeros(mantissa));
    }
    let decimals = usize::try_from(5 - exponent).unwrap_or(0);
    trim_zeros(&format!("{value:.decimals$}")).to_owned()
}

fn trim_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// nccl-tests' `getFloatStr`: two decimals while they fit `width`, then one, then none, then
/// exponent form.
pub(crate) fn float_str(value: f64, width: usize) -> String {
    let mut power = 0usize;
    let mut bound = 1.0f64;
    while value >= bound {
        power += 1;
        bound *= 10.0;
    }
    if power + 2 < width {
        format!("{value:>width$.2}")
    } else if power + 1 < width {
        format!("{value:>width$.1}")
    } else if power < width + 1 {
        format!("{value:>width$.0}")
    } else if width >= 7 {
        format!("{:>width$}", c_exp(value, 1))
    } else {
        format!("{:>width$}", c_exp(value, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_str_matches_the_fixture_columns() {
        assert_eq!(float_str(42.76, 7), "  42.76");
        assert_eq!(float_str(1171.55, 7), "1171.55");
        assert_eq!(float_str(18292.8, 7), "18292.8");
        assert_eq!(float_str(37188.0, 7), "37188.0");
        assert_eq!(float_str(123_456.0, 7), " 123456");
        assert_eq!(float_str(0.0, 6), "  0.00");
        assert_eq!(float_str(514.4, 6), "514.40");
        assert_eq!(float_str(12_345_678.0, 7), "1.2e+07");
    }

    #[test]
    fn g_is_c_like() {
        assert_eq!(c_g(2.304_982_1), "2.30498");
        assert_eq!(c_g(97.446_61), "97.4466");
        assert_eq!(c_g(68.404_8), "68.4048");
        assert_eq!(c_g(0.0), "0");
        assert_eq!(c_g(5.0), "5");
        assert_eq!(c_g(0.000_012_345_67), "1.23457e-05");
        assert_eq!(c_g(1_234_567.0), "1.23457e+06");
        assert_eq!(c_g(0.5), "0.5");
    }
}
