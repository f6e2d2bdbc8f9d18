fn main() {
    runbook::app::install_panic_hook();
    std::process::exit(runbook::app::main());
}
