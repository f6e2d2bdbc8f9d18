//! What a message quotes of an answer that came from the wrong kind of server: its first
//! non-empty line, cut short, so one line can say what answered instead.

/// The first non-empty line of `body`, at most 120 characters, or "an empty body".
pub(crate) fn first_line(body: &str) -> String {
    body.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("an empty body")
        .chars()
        .take(120)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_first_line_with_text_cut_short() {
        assert_eq!(
            super::first_line("\n  <!DOCTYPE html>\n<html>"),
            "<!DOCTYPE html>"
        );
        assert_eq!(super::first_line(""), "an empty body");
        assert_eq!(super::first_line(&"x".repeat(300)).len(), 120);
    }
}
