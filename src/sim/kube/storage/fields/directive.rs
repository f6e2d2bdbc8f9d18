//! The `fieldValidation` query parameter: what the API server does with unknown and duplicate
//! fields (Strict refuses the request, Warn answers with `Warning` headers, Ignore drops them
//! silently; Warn is the server's default).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Directive {
    Strict,
    Warn,
    Ignore,
}

impl Directive {
    pub(crate) fn from_query(value: Option<&str>) -> Self {
        match value {
            Some("Strict") => Directive::Strict,
            Some("Ignore") => Directive::Ignore,
            _ => Directive::Warn,
        }
    }
}

/// A `Warning` header's value (RFC 7234 warn-code 299, as the API server writes it): the
/// text quoted, its quotes and backslashes escaped.
pub(crate) fn warning_header(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
    format!("299 - \"{escaped}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warn_is_the_default_and_headers_escape_quotes() {
        assert_eq!(Directive::from_query(None), Directive::Warn);
        assert_eq!(Directive::from_query(Some("Strict")), Directive::Strict);
        assert_eq!(
            warning_header(r#"unknown field "spec.foo""#),
            r#"299 - "unknown field \"spec.foo\"""#
        );
    }
}
