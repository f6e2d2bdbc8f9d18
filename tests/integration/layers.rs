//! The architecture as lib.rs states it, held to the code: every `crate::x` a module names is
//! on its own layer or one below, and the binding folders import each other without a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::repo_root;

/// The layers of lib.rs's doc list, top first: each `//! - [`a`], [`b`]: ...` line is one.
fn layers() -> Vec<Vec<String>> {
    let lib = std::fs::read_to_string(repo_root().join("src/lib.rs")).expect("src/lib.rs");
    lib.lines()
        .filter_map(|line| line.strip_prefix("//! - "))
        .map(|entry| {
            let names = entry.split(':').next().unwrap_or_default();
            names
                .split(',')
                .filter_map(|n| {
                    n.trim()
                        .strip_prefix("[`")
                        .and_then(|n| n.strip_suffix("`]"))
                })
                .map(str::to_string)
                .collect()
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `crate::name` paths a file's code (not its comments) names.
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let tail = &rest[at + "crate::".len()..];
            let name: String = tail
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `$crate::` in a macro is the same crate.
            if !name.is_empty() {
                names.insert(name);
            }
            rest = tail;
        }
    }
    names
}

/// The top-level module a file under src/ belongs to (`src/sim/kube/api.rs` -> `sim`).
fn top_module(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).expect("under src");
    let first = relative
        .components()
        .next()
        .expect("a component")
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    first.trim_end_matches(".rs").to_string()
}

#[test]
fn no_module_imports_one_from_a_higher_layer() {
    let layers = layers();
    let layer_of: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, names)| names.iter().map(move |n| (n.as_str(), i)))
        .collect();
    assert!(layer_of.len() >= 15, "lib.rs lists the layers: {layers:?}");
    let src = repo_root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    let mut unlisted = BTreeSet::new();
    for file in &files {
        let top = top_module(&src, file);
        if top == "lib" || top == "main" {
            continue;
        }
        let Some(&own) = layer_of.get(top.as_str()) else {
            unlisted.insert(top);
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a source file");
        for name in crate_paths(&text) {
            if let Some(&theirs) = layer_of.get(name.as_str())
                && theirs < own
            {
                upward.push(format!(
                    "{} ({top}) imports {name}, a higher layer",
                    file.strip_prefix(&src).unwrap_or(file).display()
                ));
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "modules lib.rs does not list: {unlisted:?}"
    );
    assert!(upward.is_empty(), "{}", upward.join("\n"));
}

#[test]
fn the_binding_folders_import_each_other_without_a_cycle() {
    let root = repo_root().join("src/bindings");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    // bindings/aws/eks.rs -> aws; bindings/helm.rs -> helm.
    let part = |file: &Path| top_module(&root, file);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = part(file);
        if from == "mod" {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("a source file");
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            let mut rest = line;
            while let Some(at) = rest.find("crate::bindings::") {
                let tail = &rest[at + "crate::bindings::".len()..];
                let to: String = tail
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if to != from {
                    edges.entry(from.clone()).or_default().insert(to);
                }
                rest = tail;
            }
        }
    }
    // Depth-first search for a way back to where it started.
    fn reaches(
        edges: &BTreeMap<String, BTreeSet<String>>,
        from: &str,
        target: &str,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in edges.get(from).into_iter().flatten() {
            if next == target || (seen.insert(next.clone()) && reaches(edges, next, target, seen)) {
                return true;
            }
        }
        false
    }
    for folder in edges.keys() {
        assert!(
            !reaches(&edges, folder, folder, &mut BTreeSet::new()),
            "bindings/{folder} imports itself back through {edges:?}"
        );
    }
    assert!(
        edges.get("shared").is_none_or(BTreeSet::is_empty),
        "bindings/shared imports a service folder: {edges:?}"
    );
}

#[test]
fn import_cycles_stay_small_and_inside_their_folder() {
    // scripts/module-cycles.py is the measure the house issue quotes (sim/kube: 36 files in one
    // cycle with twin.rs, then 20, now 6: the Kubernetes server's handlers and the server).
    let out = std::process::Command::new("python3")
        .arg(repo_root().join("scripts/module-cycles.py"))
        .args(["--max", "6"])
        .output()
        .expect("python3 runs scripts/module-cycles.py");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("sim: largest import cycle 6 files"), "{text}");
}
