//! `runbook repl`: a reedline session over the script host, with Rhai highlighting, completion
//! of modules, functions, variables and map keys, multi-line input, and pretty results.

mod commands;
mod completer;
mod highlighter;
mod pretty;
mod session;
mod validator;

pub use session::{Repl, ReplTarget};
