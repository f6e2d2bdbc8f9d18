//! Before a run may change a target outside this process, someone says so: `--yes`, or a yes
//! at the terminal. `--read-only` needs no one: its guard stops every change.

use std::io::{BufRead, IsTerminal, Write};

use crate::error::Error;

/// Ok when the run may go on; the refusal says which flag to pass. At a terminal, `plan`
/// rehearses the run first, and its summary is shown before the question.
pub(super) fn changes_confirmed(
    runbook: &str,
    target: &str,
    yes: bool,
    read_only: bool,
    plan: impl FnOnce() -> Result<String, Error>,
) -> Result<(), Error> {
    if yes || read_only {
        return Ok(());
    }
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !terminal {
        return Err(Error::Usage(format!(
            "{runbook} would run against {target}, outside this process, and there is no terminal to confirm on: pass --yes to let it make changes there, or --read-only to stop every change before it is sent (nothing has run)"
        )));
    }
    eprintln!("rehearsing {runbook} on a twin of {target} (read-only calls there)...");
    match plan() {
        Ok(summary) => eprint!("{summary}"),
        // The question is still the user's: without a plan it is asked as before.
        Err(error) => eprint!("no plan: {}", error.render()),
    }
    eprint!(
        "{runbook} may change {target} (node group sizes, security-group rules, Kubernetes objects) as it runs. Go on? [y/N] "
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        Err(Error::Usage(
            "not confirmed: nothing has run (--read-only runs what only reads)".into(),
        ))
    }
}
