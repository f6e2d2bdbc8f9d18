//! Test helpers shared by the GPU modules: the real tool outputs in `tests/fixtures/real`.

/// A real sample by file name; a missing one fails the test that asked for it.
pub(crate) fn fixture(name: &str) -> String {
    crate::gpu::test_fixtures::fixture(name)
}
