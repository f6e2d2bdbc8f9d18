//! Rhai syntax highlighting: keywords, strings, numbers, comments, module paths.

use nu_ansi_term::{Color, Style};
use reedline::{Highlighter, StyledText};

pub(super) struct RhaiHighlighter;

const KEYWORDS: &[&str] = &[
    "let", "const", "fn", "if", "else", "for", "in", "while", "loop", "do", "until", "return",
    "throw", "try", "catch", "import", "export", "as", "switch", "break", "continue", "private",
    "global", "this",
];
const LITERALS: &[&str] = &["true", "false"];

impl Highlighter for RhaiHighlighter {
    fn highlight(&self, line: &str, _cursor: usize) -> StyledText {
        let mut styled = StyledText::new();
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        let mut i = 0;
        let piece = |from: usize, to: usize| -> String {
            let start = chars[from].0;
            let end = chars.get(to).map_or(line.len(), |(b, _)| *b);
            line[start..end].to_string()
        };
        while i < chars.len() {
            let c = chars[i].1;
            let start = i;
            if c == '/' && chars.get(i + 1).is_some_and(|(_, n)| *n == '/') {
                i = chars.len();
                styled.push((Style::new().fg(Color::DarkGray), piece(start, i)));
            } else if c == '"' || c == '`' || c == '\'' {
                i += 1;
                while i < chars.len() && chars[i].1 != c {
                    if chars[i].1 == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(chars.len());
                styled.push((Style::new().fg(Color::Green), piece(start, i)));
            } else if c.is_ascii_digit() {
                while i < chars.len()
                    && (chars[i].1.is_ascii_alphanumeric()
                        || chars[i].1 == '.'
                        || chars[i].1 == '_')
                {
                    i += 1;
                }
                styled.push((Style::new().fg(Color::Purple), piece(start, i)));
            } else if c.is_alphabetic() || c == '_' {
                while i < chars.len() && (chars[i].1.is_alphanumeric() || chars[i].1 == '_') {
                    i += 1;
                }
                let word = piece(start, i);
                let is_module = chars.get(i).is_some_and(|(_, n)| *n == ':')
                    && chars.get(i + 1).is_some_and(|(_, n)| *n == ':');
                let style = if KEYWORDS.contains(&word.as_str()) {
                    Style::new().fg(Color::Magenta).bold()
                } else if LITERALS.contains(&word.as_str()) {
                    Style::new().fg(Color::Purple)
                } else if is_module {
                    Style::new().fg(Color::Cyan)
                } else if chars.get(i).is_some_and(|(_, n)| *n == '(') {
                    Style::new().fg(Color::Blue)
                } else {
                    Style::new()
                };
                styled.push((style, word));
            } else {
                i += 1;
                styled.push((Style::new(), piece(start, i)));
            }
        }
        styled
    }
}
