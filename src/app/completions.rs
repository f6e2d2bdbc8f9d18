//! `runbook completions SHELL`: the script that registers runbook's completer with a shell.
//! The shell then asks runbook itself for candidates (`RUNBOOK_COMPLETE=SHELL runbook --
//! WORDS...`), which `main` answers before anything else.

use std::io::Write;

use clap_complete::env::{Bash, EnvCompleter, Fish, Powershell, Zsh};

use super::AppResult;
use crate::cli::{COMPLETE_VAR, CompletionShell, CompletionsArgs};
use crate::error::{Error, Exit};

pub(crate) fn execute(args: &CompletionsArgs) -> AppResult {
    let shell: &dyn EnvCompleter = match args.shell {
        CompletionShell::Bash => &Bash,
        CompletionShell::Zsh => &Zsh,
        CompletionShell::Fish => &Fish,
        CompletionShell::Powershell => &Powershell,
    };
    // The script calls this very binary: completions work before it is on PATH, and match it.
    let completer = std::env::current_exe()
        .ok()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "runbook".into());
    let mut script = Vec::new();
    shell
        .write_registration(COMPLETE_VAR, "runbook", "runbook", &completer, &mut script)
        .map_err(|e| Error::Usage(format!("cannot write the completion script: {e}")))?;
    let _ = std::io::stdout().lock().write_all(&script);
    Ok(Exit::Passed)
}
