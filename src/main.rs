//! The `runbook` binary: everything is in the library; this only sets the exit code.

fn main() {
    runbook::app::install_panic_hook();
    std::process::exit(runbook::app::main());
}
