fn main() {
    std::process::exit(runbook::app::main());
}
