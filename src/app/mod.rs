//! The command line's subcommands, and the run-time plumbing they share; here, `main` (which
//! picks the subcommand and turns its result into the exit code) and the panic hook.
//!
//! A subcommand each, which wires a clock, the script host and the reporters: `run`, `check`,
//! `eval`, `docs`, `lab_serve` (`lab serve`), `repl`, `recover`, `history`, `doctor`,
//! `completions`, `new_runbook` (`new`), `plan` and `state_capture` (`state capture`).
//!
//! Parts of one subcommand: for `run`, `run_outputs` (where it writes its reports), `confirm`
//! (a yes at the terminal), `preflight` (outputs checked before it starts) and `test_hooks`
//! (the crash-safety tests' environment); for `doctor`, `doctor_access` (its access reviews);
//! for `lab serve`, `lab_files` (the files it writes; `state capture` writes through it too).
//!
//! What several share: `runtime` (the async runtime), `signals` (stop signals, for `run` and
//! `repl`), `rehearsal` (a run on a twin of the target first, for `run` and `plan`),
//! `journal_undo` (undoing from a journal, for `recover` and `signals`), `target_lock` (the
//! locks on a target, for `run` and `recover`), `run_history` (the
//! history's outputs, for `run` and `history`), `stdout` (printing to a pipe).

mod check;
mod completions;
mod confirm;
mod docs;
mod doctor;
mod doctor_access;
mod eval;
mod history;
mod journal_undo;
mod lab_files;
mod lab_serve;
mod new_runbook;
mod plan;
mod preflight;
mod recover;
mod rehearsal;
mod repl;
mod run;
mod run_history;
mod run_outputs;
mod runtime;
mod shared_store;
mod signals;
mod state_capture;
mod stdout;
mod target_lock;
mod test_hooks;

use clap::Parser;

use crate::cli::{Cli, Command, LabCommand, StateCommand};
use crate::error::{Error, Exit};

/// A bug in runbook itself ends with one clear line and a request to report it, not a backtrace
/// (set RUNBOOK_BACKTRACE=1 to see one).
pub fn install_panic_hook() {
    if std::env::var_os("RUNBOOK_BACKTRACE").is_some() {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        if crate::script::caught_at_run_boundary() {
            // The run reports it, runs its cleanups and asks for the report itself.
            eprintln!("internal error: {message}{location}");
            return;
        }
        eprintln!("internal error: {message}{location}
  this is a bug in runbook; please report it with the command that caused it (RUNBOOK_BACKTRACE=1 for details)");
    }));
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    // rustls is built with both ring (ours, kube's) and aws-lc (the AWS SDK's, which names its
    // own), so it picks no process default by itself; the Kubernetes client takes this one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    // A shell asking for completions (the script `runbook completions` writes) is answered
    // here, and the process ends.
    clap_complete::CompleteEnv::with_factory(<Cli as clap::CommandFactory>::command)
        .var(crate::cli::COMPLETE_VAR)
        .complete();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::execute(*args),
        Command::Check(args) => check::execute(&args),
        Command::Eval(args) => eval::execute(&args),
        Command::Docs(args) => docs::execute(&args),
        Command::Lab(LabCommand::Serve(args)) => lab_serve::execute(&args),
        Command::Repl(args) => repl::execute(&args),
        Command::Recover(args) => recover::execute(&args),
        Command::History(args) => history::execute(&args),
        Command::Doctor(args) => doctor::execute(&args),
        Command::Completions(args) => completions::execute(&args),
        Command::New(args) => new_runbook::execute(&args),
        Command::Plan(args) => plan::execute(&args),
        Command::State(StateCommand::Capture(args)) => state_capture::execute(&args),
    };
    match result {
        Ok(exit) => exit.code(),
        Err(error) => {
            eprint!("{}", error.render());
            error.exit().code()
        }
    }
}

pub(crate) type AppResult = Result<Exit, Error>;
