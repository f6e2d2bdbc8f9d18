//! Why a request never got an answer, read from an error's source chain the same way for
//! every client: the connection was refused, the host name does not resolve, the TLS handshake
//! failed, or time ran out. The AWS and Kubernetes clients word their messages from it, and
//! the AWS retry classifier decides from it what is not worth another attempt.

use std::error::Error as StdError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    Refused,
    Unresolvable,
    Tls,
    TimedOut,
    Other,
}

/// The texts of an error and its sources, outermost first, without repeats or empty ones.
pub(crate) fn chain(error: &(dyn StdError + 'static)) -> Vec<String> {
    let mut texts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        if !text.is_empty() && !texts.contains(&text) {
            texts.push(text);
        }
        next = e.source();
    }
    texts
}

/// The first error of type `T` in the chain.
pub(crate) fn find<'a, T: StdError + 'static>(
    error: &'a (dyn StdError + 'static),
) -> Option<&'a T> {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        next = e.source();
    }
    None
}

/// What the chain says went wrong. hyper, rustls and the resolver keep their causes in
/// their texts, so those are read too.
pub(crate) fn cause(error: &(dyn StdError + 'static)) -> Cause {
    let all = chain(error).join(" / ").to_lowercase();
    let refused = find::<std::io::Error>(error)
        .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused);
    if refused || all.contains("connection refused") {
        Cause::Refused
    } else if all.contains("dns error")
        || all.contains("failed to lookup address")
        || all.contains("name or service not known")
    {
        Cause::Unresolvable
    } else if all.contains("invalidcontenttype")
        || all.contains("corrupt message")
        || all.contains("certificate")
        || all.contains("tls")
    {
        Cause::Tls
    } else if all.contains("timed out")
        || all.contains("deadline has elapsed")
        || all.contains("timeout")
    {
        Cause::TimedOut
    } else {
        Cause::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<std::io::Error>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl StdError for Layer {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            self.1.as_ref().map(|e| e as &(dyn StdError + 'static))
        }
    }

    #[test]
    fn causes_from_io_kinds_and_texts() {
        let refused = Layer(
            "tcp connect error",
            Some(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
        );
        assert_eq!(cause(&refused), Cause::Refused);
        let dns = Layer("dns error: failed to lookup address information", None);
        assert_eq!(cause(&dns), Cause::Unresolvable);
        let tls = Layer("received corrupt message of type InvalidContentType", None);
        assert_eq!(cause(&tls), Cause::Tls);
        assert_eq!(cause(&Layer("operation timed out", None)), Cause::TimedOut);
        assert_eq!(cause(&Layer("something else", None)), Cause::Other);
        assert_eq!(chain(&refused).len(), 2);
    }
}
