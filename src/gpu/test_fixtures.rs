//! Test-only access to the real captures in `../shared/fixtures/real/`, which live outside the repo.

/// The fixture's text, or `None` (with a note on stderr) when the shared folder is absent,
/// so the tests still pass on a checkout without it.
pub(crate) fn fixture(name: &str) -> Option<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/real")
        .join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(_) => {
            eprintln!("skipping: ../shared/fixtures/real/{name} not found");
            None
        }
    }
}

/// A capture kept in the repo (`tests/fixtures/real/`, sources in its SOURCES.md): public
/// outputs that `../shared` does not hold. Always there, so a missing one is a failure.
pub(crate) fn repo_fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/real")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
