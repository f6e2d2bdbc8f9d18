//! `eval`, `check` and `docs`, and the exit codes of the command line.

use crate::support::Runbook;
use crate::with_snapshots;

#[test]
fn eval_prints_values_pretty_or_as_json() {
    assert_eq!(
        Runbook::new()
            .args(["eval", "1 + 1"])
            .run()
            .expect_code(0)
            .stdout(),
        "2\n"
    );
    let yaml = Runbook::new()
        .args(["eval", r#"json::parse(`{"b": [1, 2], "a": "x"}`)"#])
        .run()
        .expect_code(0)
        .stdout();
    assert_eq!(yaml, "a: x\nb:\n- 1\n- 2\n");
    let json = Runbook::new()
        .args(["eval", "#{ nodes: 2, ready: true }", "--json"])
        .run()
        .expect_code(0)
        .stdout();
    assert_eq!(json, "{\n  \"nodes\": 2,\n  \"ready\": true\n}\n");
}

#[test]
fn eval_loads_the_stdlib_and_runs_cleanups() {
    let ran = Runbook::new()
        .args(["eval", r#"import "check" as check; defer("bye", || print("cleaned")); check::count_by([#{z: 1}, #{z: 1}], "z")"#])
        .run()
        .expect_code(0);
    assert_eq!(ran.stdout(), "\"1\": 2\n");
    assert_eq!(ran.stderr(), "cleaned\n");
}

#[test]
fn check_accepts_every_shipped_runbook() {
    let root = crate::support::repo_root();
    let mut files: Vec<String> = Vec::new();
    for folder in ["runbooks/core", "runbooks/k8s", "runbooks/aws", "benches"] {
        for entry in std::fs::read_dir(root.join(folder))
            .expect("the folder exists")
            .filter_map(Result::ok)
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".rhai") {
                files.push(format!("{folder}/{name}"));
            }
        }
    }
    files.sort();
    let ran = Runbook::new()
        .arg("check")
        .args(&files)
        .run()
        .expect_code(0);
    assert_eq!(ran.stdout().lines().count(), files.len());
}

#[test]
fn check_reports_every_broken_file_not_only_the_first() {
    let ran = Runbook::new()
        .args([
            "check",
            "tests/bad/syntax-unclosed-block.rhai",
            "runbooks/core/steps.rhai",
            "tests/bad/missing-import.rhai",
        ])
        .run()
        .expect_code(2);
    let stdout = ran.stdout();
    assert!(
        stdout.contains("error   tests/bad/syntax-unclosed-block.rhai"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ok      runbooks/core/steps.rhai"),
        "{stdout}"
    );
    assert!(
        stdout.contains("error   tests/bad/missing-import.rhai"),
        "{stdout}"
    );
    assert!(
        ran.stderr().contains("2 of 3 runbooks have errors"),
        "{}",
        ran.stderr()
    );
}

#[test]
fn definitions_name_every_documented_function_in_its_modules_file() {
    let docs = Runbook::new().arg("docs").run().expect_code(0).stdout();
    let dir = tempfile::tempdir().expect("temp dir");
    let wrote = Runbook::new()
        .args(["docs", "--definitions"])
        .arg(dir.path())
        .run()
        .expect_code(0);
    assert!(
        wrote.stderr().contains("definition files to"),
        "{}",
        wrote.stderr()
    );
    let read = |name: &str| {
        std::fs::read_to_string(dir.path().join(format!("{name}.d.rhai")))
            .unwrap_or_else(|e| panic!("{name}.d.rhai: {e}"))
    };
    let mut module = String::new();
    let mut checked = 0;
    for line in docs.lines() {
        if let Some(name) = line.strip_prefix("# ") {
            module = name.to_string();
            continue;
        }
        if line.is_empty() || line.starts_with(' ') {
            continue;
        }
        let call = line.split('(').next().unwrap_or_default();
        let (file, function) = match call.rsplit_once("::") {
            Some((m, f)) => (m.to_string(), f),
            None => ("__static__".to_string(), call),
        };
        assert_eq!(module == "core", file == "__static__", "{line}");
        let text = read(&file);
        assert!(
            text.starts_with(&format!("module {file};")) || file == "__static__",
            "{file}.d.rhai has no module header"
        );
        assert!(
            text.contains(&format!("fn {function}(")),
            "{line}: no `fn {function}(` in {file}.d.rhai"
        );
        checked += 1;
    }
    assert!(
        checked > 150,
        "every documented function was looked for ({checked})"
    );
    // Doc comments come along, and closures are not functions of a module.
    assert!(read("gpu").contains("/// The security-group block experiment"));
    assert!(!read("gpu").contains("anon$"));
    assert!(
        read("__builtin__").contains("fn "),
        "Rhai's own functions too"
    );
    // What the language server's parser stops at (rhai-rowan read every file after these).
    for file in std::fs::read_dir(dir.path()).expect("the folder") {
        let path = file.expect("an entry").path();
        let text = std::fs::read_to_string(&path).expect("a file");
        for unreadable in [": range=", ") -> ;", "\nfn exit("] {
            assert!(
                !text.contains(unreadable),
                "{unreadable} in {}",
                path.display()
            );
        }
        for line in text
            .lines()
            .filter(|l| l.starts_with("fn ") && !l.contains("()"))
        {
            assert!(line.contains(": "), "untyped parameters: {line}");
        }
    }
}

#[test]
fn docs_list_every_host_function_with_a_doc_line() {
    let ran = Runbook::new().arg("docs").run().expect_code(0);
    let stdout = ran.stdout();
    for signature in [
        "step(name: &str, body: FnPtr) -> Dynamic",
        "defer(name: &str, body: FnPtr)",
        "wait_until(options: Map, probe: FnPtr) -> Dynamic",
        "retry(options: Map, body: FnPtr) -> Dynamic",
        "snapshot(name: &str, value: Dynamic)",
        "params(defaults: Map) -> Map",
        "json::parse(text: &str) -> Dynamic",
        "yaml::parse_all(text: &str) -> Array",
        "check::count_by(items, field)",
        "metric(name: &str, value: Dynamic, options: Map) -> Map",
        "elapsed() -> f64",
    ] {
        assert!(
            stdout.contains(signature),
            "`{signature}` missing from docs:\n{stdout}"
        );
    }
    with_snapshots!({
        insta::assert_snapshot!(
            "docs-json",
            Runbook::new()
                .args(["docs", "json"])
                .run()
                .expect_code(0)
                .stdout()
        )
    });
}

#[test]
fn docs_of_an_unknown_module_lists_the_known_ones() {
    let ran = Runbook::new().args(["docs", "nosuch"]).run().expect_code(2);
    assert!(
        ran.stderr()
            .contains("no module `nosuch`; modules: check, core, cost, ec2, efa, eks, facts, gpu, helm, hybrid, hybrid_access, hybrid_gpu, hybrid_nodes, hybrid_placement, iam, json, k8s, kms, lab, lab_report, nccl, nvml, repair, twin, yaml"),
        "{}",
        ran.stderr()
    );
}

#[test]
fn help_documents_every_subcommand_and_the_exit_codes() {
    let help = Runbook::new().arg("--help").run().expect_code(0).stdout();
    for word in ["run", "check", "eval", "docs", "Exit codes: 0 passed, 1"] {
        assert!(help.contains(word), "{word} missing from --help:\n{help}");
    }
    let run_help = Runbook::new()
        .args(["run", "--help"])
        .run()
        .expect_code(0)
        .stdout();
    for flag in [
        "--set",
        "--report",
        "--junit",
        "--update-snapshots",
        "--progress",
        "--clock",
    ] {
        assert!(
            run_help.contains(flag),
            "{flag} missing from run --help:\n{run_help}"
        );
    }
}

#[test]
fn check_json_gives_one_object_per_problem_with_its_position() {
    let mut files: Vec<String> = std::fs::read_dir(crate::support::repo_root().join("tests/bad"))
        .expect("the corpus")
        .filter_map(|e| e.ok())
        .map(|e| format!("tests/bad/{}", e.file_name().to_string_lossy()))
        .filter(|f| f.ends_with(".rhai"))
        .collect();
    files.sort();
    let text = Runbook::new()
        .args(["check"])
        .args(&files)
        .run()
        .expect_code(2);
    let failing = text
        .stdout()
        .lines()
        .filter(|l| l.starts_with("error "))
        .count();
    let checked = Runbook::new()
        .args(["check", "--json"])
        .args(&files)
        .run()
        .expect_code(2);
    let problems: serde_json::Value = serde_json::from_str(&checked.stdout()).expect("json");
    let problems = problems.as_array().expect("an array");
    let errors: Vec<&serde_json::Value> = problems
        .iter()
        .filter(|p| p["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), failing, "one error object per failing file");
    for problem in problems {
        assert!(
            problem["file"]
                .as_str()
                .is_some_and(|f| f.ends_with(".rhai"))
                && problem["line"].as_u64().is_some_and(|l| l > 0)
                && problem["column"].as_u64().is_some_and(|c| c > 0)
                && problem["message"].as_str().is_some_and(|m| !m.is_empty())
                && problem["help"].is_array(),
            "{problem}"
        );
    }
    assert!(
        errors
            .iter()
            .any(|e| e["file"] == "tests/bad/missing-import.rhai"
                && e["line"] == 2
                && e["column"] == 8),
        "{errors:?}"
    );
}

#[test]
fn check_warns_of_a_change_before_any_cleanup_and_of_a_step_without_a_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("careless.rhai");
    std::fs::write(
        &file,
        "let p = params(#{ cluster: \"myeks5w\" });\nstep(\"up\", || eks::scale_nodegroup(p.cluster, \"gpu\", 2));\ndefer(\"down\", || eks::scale_nodegroup(p.cluster, \"gpu\", 0));\nstep(\"\", || 1);\n",
    )
    .expect("written");
    let checked = Runbook::new().arg("check").arg(&file).run().expect_code(0);
    assert!(
        checked.stdout().contains("(2 warnings)"),
        "{}",
        checked.stdout()
    );
    let stderr = checked.stderr();
    assert!(
        stderr.contains(
            "warning: `eks::scale_nodegroup` changes the target before any cleanup is registered"
        ) && stderr.contains("careless.rhai:2:")
            && stderr.contains("warning: a step without a name")
            && stderr.contains("careless.rhai:4:1"),
        "{stderr}"
    );
    let json = Runbook::new()
        .args(["check", "--json"])
        .arg(&file)
        .run()
        .expect_code(0);
    let problems: serde_json::Value = serde_json::from_str(&json.stdout()).expect("json");
    let lines: Vec<(u64, &str)> = problems
        .as_array()
        .expect("an array")
        .iter()
        .map(|p| {
            (
                p["line"].as_u64().unwrap_or(0),
                p["severity"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(lines, [(2, "warning"), (4, "warning")]);
}

/// Every subcommand (and theirs) by its words: `run`, `lab serve`, `history check`.
fn subcommands() -> Vec<Vec<String>> {
    let help = Runbook::new().arg("--help").run().expect_code(0).stdout();
    let mut all = Vec::new();
    let commands_of = |help: &str| -> Vec<String> {
        help.split("Commands:")
            .nth(1)
            .unwrap_or_default()
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            // A name starts its line; a wrapped description is indented further.
            .filter(|l| !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .filter(|c| c != "help")
            .collect()
    };
    for command in commands_of(&help) {
        let sub_help = Runbook::new()
            .args([&command, "--help"])
            .run()
            .expect_code(0)
            .stdout();
        for sub in commands_of(&sub_help) {
            all.push(vec![command.clone(), sub]);
        }
        all.push(vec![command]);
    }
    all
}

#[test]
fn every_help_has_an_example_and_the_man_pages_cover_every_subcommand() {
    let commands = subcommands();
    assert!(commands.len() >= 17, "{commands:?}");
    for words in &commands {
        let help = Runbook::new()
            .args(words)
            .arg("--help")
            .run()
            .expect_code(0)
            .stdout();
        assert!(
            help.contains("Example: runbook "),
            "no example in `runbook {} --help`:\n{help}",
            words.join(" ")
        );
    }
    let dir = tempfile::tempdir().expect("temp dir");
    Runbook::new()
        .args(["docs", "--man"])
        .arg(dir.path())
        .run()
        .expect_code(0);
    for words in std::iter::once(Vec::new()).chain(commands) {
        let name = std::iter::once("runbook".to_string())
            .chain(words)
            .collect::<Vec<_>>()
            .join("-");
        let page = std::fs::read_to_string(dir.path().join(format!("{name}.1")))
            .unwrap_or_else(|e| panic!("{name}.1: {e}"));
        assert!(
            page.starts_with(".ie \\n(.g .ds Aq") || page.contains(".TH "),
            "{name}.1 is roff"
        );
        assert!(
            page.contains(&format!(".TH {name} 1")),
            "{name}.1 names itself"
        );
    }
}

#[test]
fn bash_completes_subcommands_runbook_files_and_the_runbooks_set_keys() {
    let script = Runbook::new()
        .args(["completions", "bash"])
        .run()
        .expect_code(0)
        .stdout();
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("runbook.bash");
    std::fs::write(&file, &script).expect("written");
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&file)
        .output()
        .expect("bash runs");
    assert!(
        syntax.status.success(),
        "{}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    // What bash does on TAB: the registered function with the words typed so far.
    let complete = |words: &str| -> Vec<String> {
        let test = format!(
            "source {}\nCOMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMP_TYPE=9\n\
             _clap_complete_runbook runbook \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            file.display()
        );
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(test)
            .current_dir(crate::support::repo_root())
            .env_remove("RUNBOOK_COMPLETE")
            .output()
            .expect("bash runs");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(complete("runbook pl"), ["plan"]);
    let files = complete("runbook run runbooks/gpu-l");
    assert_eq!(files, ["runbooks/gpu-lab.rhai"]);
    let keys = complete("runbook run runbooks/gpu-lab.rhai --set gpu_n");
    assert_eq!(keys, ["gpu_nodegroup=", "gpu_nodes="]);
    let all = complete("runbook plan runbooks/gpu-lab.rhai --set ''");
    assert!(
        all.contains(&"blocked_timeout=".to_string()) && all.len() >= 8,
        "{all:?}"
    );
    for shell in ["zsh", "fish", "powershell"] {
        let script = Runbook::new()
            .args(["completions", shell])
            .run()
            .expect_code(0)
            .stdout();
        assert!(script.contains("RUNBOOK_COMPLETE"), "{shell}: {script}");
    }
}

#[test]
fn new_runbooks_from_every_template_pass_check_and_run_and_are_never_overwritten() {
    let dir = tempfile::tempdir().expect("temp dir");
    let snapshots = dir.path().join("snapshots");
    std::fs::create_dir(&snapshots).expect("a snapshot folder");
    for template in ["verify", "drill", "gpu"] {
        let name = dir.path().join(format!("runbooks/my-{template}"));
        let made = Runbook::new()
            .args(["new", "--template", template])
            .arg(&name)
            .run()
            .expect_code(0);
        let file = name.with_extension("rhai");
        assert!(
            made.stderr().contains(&format!("wrote {}", file.display())),
            "{}",
            made.stderr()
        );
        let text = std::fs::read_to_string(&file).expect("written");
        assert!(
            text.starts_with(&format!("// my-{template}: ")) && text.contains("params(#{"),
            "{text}"
        );
        let checked = Runbook::new().arg("check").arg(&file).run().expect_code(0);
        assert_eq!(
            checked.stdout().trim(),
            format!("ok      {}", file.display()),
            "no warnings"
        );
        for _ in 0..2 {
            // The second run compares with the snapshots the first wrote.
            let ran = Runbook::new()
                .args(["run", "--progress", "never", "--snapshot-dir"])
                .arg(&snapshots)
                .arg(&file)
                .run()
                .expect_code(0);
            assert!(
                ran.stdout().contains("[result] passed:"),
                "{}",
                ran.stdout()
            );
        }
        let again = Runbook::new().arg("new").arg(&name).run().expect_code(2);
        assert!(
            again
                .stderr()
                .contains("exists: runbook new never overwrites a runbook"),
            "{}",
            again.stderr()
        );
        assert_eq!(
            std::fs::read_to_string(&file).expect("kept"),
            text,
            "untouched"
        );
    }
}

#[test]
fn hybrid_node_pricing_reproduces_the_seeds_table() {
    let ran = Runbook::new()
        .args([
            "eval",
            "[10, 50, 100].map(|n| [cost::hybrid(#{ nodes: n, vcpus_per_node: 32 }).total_usd, cost::hybrid(#{ nodes: n, vcpus_per_node: 32, clusters: 1 }).total_usd])",
            "--json",
        ])
        .run()
        .expect_code(0);
    let table: serde_json::Value = serde_json::from_str(&ran.stdout()).expect("json");
    // Seed 004: 32 vCPU nodes, 730 hours a month, 12 months, with and without one cluster.
    assert_eq!(
        table,
        serde_json::json!([
            [56064.0, 56940.0],
            [236928.0, 237804.0],
            [377088.0, 377964.0]
        ])
    );
}
