//! What commands print for a pipe: `runbook eval --json ... | head -5` closes the pipe early,
//! which is the reader's choice, not an error (`println!` would panic on it).

use std::io::Write;

/// Writes `text` to standard output; a closed pipe ends the output quietly.
pub(crate) fn write(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// `println!` for command output: formatted, with a newline, and quiet on a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::app::stdout::write(&format!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use out;
