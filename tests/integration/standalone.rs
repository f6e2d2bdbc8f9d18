//! The repository tests itself on a fresh clone: no file under `src/` or `tests/` names the
//! project's shared folder beside it (the real captures the tests read are in
//! `tests/fixtures/real/`), and every capture the tests use is there.

use std::path::{Path, PathBuf};

use crate::support::repo_root;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn nothing_under_src_or_tests_names_the_shared_folder_outside_the_repository() {
    // Built, so that this file does not name it itself.
    let outside = format!("../{}", "shared");
    let mut all = Vec::new();
    for dir in ["src", "tests"] {
        files(&repo_root().join(dir), &mut all);
    }
    assert!(all.len() > 100, "{} files", all.len());
    let naming: Vec<String> = all
        .iter()
        .filter(|path| {
            std::fs::read(path)
                .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(&outside))
        })
        .map(|path| {
            path.strip_prefix(repo_root())
                .unwrap_or(path)
                .display()
                .to_string()
        })
        .collect();
    assert!(naming.is_empty(), "these name {outside}: {naming:?}");
}

#[test]
fn every_capture_in_the_fixtures_folder_has_its_source_listed() {
    let mut unlisted = Vec::new();
    for folder in ["tests/fixtures/real", "tests/fixtures/upstream"] {
        let dir = repo_root().join(folder);
        let sources = std::fs::read_to_string(dir.join("SOURCES.md")).expect("SOURCES.md");
        for entry in std::fs::read_dir(&dir)
            .expect("the fixtures folder")
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name != "SOURCES.md" && !sources.contains(&name) {
                unlisted.push(format!("{folder}/{name}"));
            }
        }
    }
    assert!(unlisted.is_empty(), "not in SOURCES.md: {unlisted:?}");
}
