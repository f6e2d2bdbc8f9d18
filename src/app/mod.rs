//! One file per subcommand: each wires a clock, the script host and the reporters.

mod check;
mod docs;
mod eval;
mod lab_serve;
mod run;
mod runtime;
mod signals;

use clap::Parser;

use crate::cli::{Cli, Command, LabCommand};
use crate::error::{Error, Exit};

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::execute(args),
        Command::Check(args) => check::execute(&args),
        Command::Eval(args) => eval::execute(&args),
        Command::Docs(args) => docs::execute(&args),
        Command::Lab(LabCommand::Serve(args)) => lab_serve::execute(&args),
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
