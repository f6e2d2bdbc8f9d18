//! Embeds `stdlib/*.rhai` in the binary, so an installed `runbook` imports them from anywhere.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=stdlib");
    // Read when the script runs, not when it was compiled: a build script built for one
    // checkout must not embed another's stdlib.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest).join("stdlib");
    let mut modules: Vec<(String, String)> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "rhai"))
                .filter_map(|p| {
                    Some((
                        p.file_stem()?.to_str()?.to_string(),
                        p.to_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    // A binary without its stdlib fails every runbook that imports one: never build one.
    assert!(!modules.is_empty(), "no .rhai modules in {}", dir.display());
    modules.sort();
    let mut code = String::from(
        "/// `(name, source)` of every embedded stdlib module.\npub(crate) static MODULES: &[(&str, &str)] = &[\n",
    );
    for (name, path) in &modules {
        println!("cargo:rerun-if-changed={path}");
        writeln!(code, "    ({name:?}, include_str!({path:?})),").expect("writing to a String");
    }
    code.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("stdlib.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}
