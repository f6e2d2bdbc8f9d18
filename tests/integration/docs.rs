//! The documentation keeps up with the code: every command and flag clap defines is in docs/,
//! and every link in the README and docs/ leads to a file that is there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::CommandFactory;

use crate::support::repo_root;

fn markdown_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Every subcommand as it is typed (`runbook history diff`) and every long flag (`--html`),
/// hidden ones left out.
fn commands_and_flags() -> (BTreeSet<String>, BTreeSet<String>) {
    fn walk(
        command: &clap::Command,
        path: &str,
        commands: &mut BTreeSet<String>,
        flags: &mut BTreeSet<String>,
    ) {
        for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = arg.get_long() {
                flags.insert(format!("--{long}"));
            }
        }
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_name() == "help" {
                continue;
            }
            let typed = format!("{path} {}", sub.get_name());
            commands.insert(typed.clone());
            walk(sub, &typed, commands, flags);
        }
    }
    let (mut commands, mut flags) = (BTreeSet::new(), BTreeSet::new());
    walk(
        &runbook::cli::Cli::command(),
        "runbook",
        &mut commands,
        &mut flags,
    );
    flags.remove("--help");
    flags.remove("--version");
    (commands, flags)
}

#[test]
fn every_command_and_flag_the_cli_defines_is_in_docs() {
    let reference =
        std::fs::read_to_string(repo_root().join("docs/commands.md")).expect("docs/commands.md");
    let (commands, flags) = commands_and_flags();
    assert!(
        commands.len() > 10 && flags.len() > 30,
        "{commands:?} {flags:?}"
    );
    let missing_commands: Vec<&String> = commands
        .iter()
        .filter(|c| !reference.contains(c.as_str()))
        .collect();
    assert!(
        missing_commands.is_empty(),
        "commands not in docs/commands.md: {missing_commands:?}"
    );
    let missing_flags: Vec<&String> = flags
        .iter()
        .filter(|f| {
            // A flag is there when it stands alone, not as the start of a longer one.
            !reference.match_indices(f.as_str()).any(|(at, _)| {
                !reference[at + f.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            })
        })
        .collect();
    assert!(
        missing_flags.is_empty(),
        "flags not in docs/commands.md: {missing_flags:?}"
    );
}

/// `[text](target)` links of a Markdown text, outside code.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn every_link_in_the_readme_and_docs_resolves() {
    let mut broken = Vec::new();
    let mut seen = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).expect("readable");
        let folder = file.parent().unwrap_or(Path::new("."));
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") || link.starts_with('#')
            {
                continue;
            }
            seen += 1;
            let path = link.split('#').next().unwrap_or_default();
            if !folder.join(path).exists() {
                broken.push(format!("{}: {link}", file.display()));
            }
        }
    }
    assert!(seen > 20, "the README links into docs/: {seen} links");
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_readme_is_a_guide_with_the_two_set_up_commands() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(lines < 400, "the README has {lines} lines");
    assert!(readme.contains(
        "scripts/install-tools.sh && cargo run --release -- run runbooks/gpu-lab.rhai --scenario empty"
    ));
    assert!(readme.contains("\ncargo test --locked\n"));
}
