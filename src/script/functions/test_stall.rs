//! `test_stall(seconds)`: a call that blocks the script's thread and hears no signal, standing
//! in for a long builtin in the tests of what a stop signal does then. Compiled only with the
//! `test-hooks` feature: a shipped binary has no such function.

use rhai::Engine;

pub(super) fn register(engine: &mut Engine) {
    engine.register_fn("test_stall", |seconds: rhai::INT| {
        std::thread::sleep(std::time::Duration::from_secs(
            seconds.max(0).unsigned_abs(),
        ));
    });
}
