//! The `runbook` binary: everything is in the library; this only picks the allocator and sets
//! the exit code.

// The twin and the clients allocate and free many small JSON values on several threads at once;
// glibc's allocator spent a third of a GPU fan-out in its own locks and consolidation. The
// wrapper counts large blocks for the scripts' memory guard.
#[global_allocator]
static ALLOCATOR: runbook::script::CountingAllocator<mimalloc::MiMalloc> =
    runbook::script::CountingAllocator(mimalloc::MiMalloc);

fn main() {
    runbook::app::install_panic_hook();
    std::process::exit(runbook::app::main());
}
