//! A secret that never prints (its Debug is `<redacted>`), made from the OS's random source and
//! compared in constant time.

use std::fmt;

#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// `prefix` and 32 random bytes in hex: a lab's admin token or secret access key.
    pub fn random(prefix: &str) -> Self {
        let mut bytes = [0u8; 32];
        // Linux's getrandom(2), or /dev/urandom where the kernel lacks it: neither fails on a
        // machine that runs at all, and a lab with a guessable key would be worse than none.
        getrandom::fill(&mut bytes).expect("the OS random source answers");
        Self(format!("{prefix}{}", hex::encode(bytes)))
    }

    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The secret itself, for a file written 0600 or a signature; never for a message.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` is this secret, in time that does not depend on where they differ.
    pub fn matches(&self, candidate: &str) -> bool {
        constant_time_eq(self.0.as_bytes(), candidate.as_bytes())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// Equal bytes, compared without an early exit (signatures and tokens).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_secrets_differ_and_never_print() {
        let (a, b) = (Secret::random("t-"), Secret::random("t-"));
        assert_ne!(a, b);
        assert_eq!(a.expose().len(), 2 + 64);
        assert_eq!(format!("{a:?}"), "Secret(<redacted>)");
        assert!(a.matches(a.expose()));
        assert!(!a.matches(b.expose()));
        assert!(!a.matches("t-"));
    }
}
