//! `--allow` patterns: a resource name where `*` stands for any run of characters
//! (`nodegroup/myeks5w/*`, `sg/sg-0abc3456`, `pod/nccl-test/*`).

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePattern(String);

impl FromStr for ResourcePattern {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("an empty pattern allows nothing: name a resource such as nodegroup/myeks5w/gpu or sg/sg-0abc3456 (* matches any run of characters)".into());
        }
        if !text.contains('/') {
            return Err(format!(
                "`{text}` names no kind: patterns are KIND/NAME such as nodegroup/myeks5w/gpu, sg/sg-0abc3456 or pod/default/* (* matches any run of characters)"
            ));
        }
        Ok(Self(text.to_string()))
    }
}

impl fmt::Display for ResourcePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl ResourcePattern {
    pub fn matches(&self, resource: &str) -> bool {
        glob(self.0.as_bytes(), resource.as_bytes())
    }
}

/// `*` matches any run of bytes; everything else matches itself. Iterative with one
/// backtrack point, so no pattern takes more than quadratic time.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(text: &str) -> ResourcePattern {
        text.parse().expect("a pattern")
    }

    #[test]
    fn stars_match_any_run_and_the_rest_matches_itself() {
        for (p, resource, expected) in [
            ("nodegroup/myeks5w/gpu", "nodegroup/myeks5w/gpu", true),
            ("nodegroup/myeks5w/gpu", "nodegroup/myeks5w/gpu2", false),
            ("nodegroup/myeks5w/*", "nodegroup/myeks5w/gpu", true),
            ("nodegroup/*/gpu", "nodegroup/other/gpu", true),
            ("sg/sg-0abc3456", "sg/sg-0abc34567", false),
            ("pod/*", "pod/default/nccl-0", true),
            ("*/default/*", "configmap/default/x", true),
            ("pod/default/*", "pod/kube-system/x", false),
            ("x/a*b*c", "x/aXbYc", true),
            ("x/a*b*c", "x/aXbY", false),
        ] {
            assert_eq!(pattern(p).matches(resource), expected, "{p} ~ {resource}");
        }
    }

    #[test]
    fn a_pattern_names_a_kind() {
        assert!(
            "gpu"
                .parse::<ResourcePattern>()
                .unwrap_err()
                .contains("names no kind")
        );
        assert!(" ".parse::<ResourcePattern>().is_err());
    }
}
