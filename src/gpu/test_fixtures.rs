//! Test-only access to the real captures in `tests/fixtures/real/` (each with its source in its
//! SOURCES.md). They are part of the repository, so a missing one fails its test.

/// The fixture's text; a missing or unreadable one fails the test that asked for it.
pub(crate) fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/real")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
