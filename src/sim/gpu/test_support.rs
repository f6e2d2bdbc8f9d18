//! Test helpers shared by the GPU modules: the real tool outputs in `shared/fixtures/real`.

/// A real sample by file name; `None` (after saying so) where the fixtures are not checked out.
pub(crate) fn fixture(name: &str) -> Option<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures/real/");
    match std::fs::read_to_string(format!("{path}{name}")) {
        Ok(text) => Some(text),
        Err(err) => {
            eprintln!("skipping: fixture {name} unavailable ({err})");
            None
        }
    }
}
