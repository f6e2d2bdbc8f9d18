//! Bad scripts and bad invocations: each ends with exit 1 or 2 and a message that names the
//! file, line and column where there is one, never with a panic or a backtrace.

use crate::support::{Ran, Runbook, repo_root};
use crate::with_snapshots;

struct Expectation {
    code: i32,
    location: Option<String>,
}

/// Reads `// expect: exit N [at LINE:COL | at PATH:LINE:COL]` from a script's first line.
fn expectation(path: &str, text: &str) -> Expectation {
    let header = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// expect: exit "))
        .unwrap_or_else(|| panic!("{path} must start with `// expect: exit N [at LINE:COL]`"));
    let (code, at) = match header.split_once(" at ") {
        Some((code, at)) => (code, Some(at)),
        None => (header, None),
    };
    let location = at.map(|at| {
        if at.matches(':').count() == 1 {
            format!("{path}:{at}")
        } else {
            at.to_string()
        }
    });
    Expectation {
        code: code.trim().parse().expect("exit code is a number"),
        location,
    }
}

fn assert_no_crash(what: &str, ran: &Ran) {
    let all = ran.stdout() + ran.stderr().as_str();
    for sign in ["panicked", "stack backtrace", "RUST_BACKTRACE"] {
        assert!(!all.contains(sign), "{what}: `{sign}` in output:\n{all}");
    }
}

#[test]
fn every_bad_script_fails_cleanly_with_its_location() {
    let mut scripts: Vec<_> = std::fs::read_dir(repo_root().join("tests/bad"))
        .expect("tests/bad exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rhai"))
        .collect();
    scripts.sort();
    assert!(
        scripts.len() >= 20,
        "the corpus has {} scripts",
        scripts.len()
    );
    for script in scripts {
        let name = script
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let path = format!("tests/bad/{name}.rhai");
        let expected = expectation(&path, &std::fs::read_to_string(&script).expect("readable"));
        let ran = Runbook::new()
            .args(["run", &path, "--progress", "never"])
            .run();
        assert_no_crash(&path, &ran);
        assert_eq!(
            ran.code(),
            expected.code,
            "{path}: exit code\n{}",
            ran.stderr()
        );
        let stderr = ran.stderr();
        if let Some(location) = &expected.location {
            assert!(
                stderr.contains(&format!("--> {location}\n")),
                "{path}: expected `--> {location}` in:\n{stderr}"
            );
        }
        with_snapshots!({ insta::assert_snapshot!(format!("bad-{name}"), stderr) });
    }
}

#[test]
fn bad_invocations_exit_2_with_a_message_that_says_what_to_do() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "runbooks/core/no-such-runbook.rhai"],
            "cannot read the runbook from runbooks/core/no-such-runbook.rhai",
        ),
        (
            &["run", "runbooks/core/params.rhai", "--set", "gpu_nodes"],
            "--set expects KEY=VALUE, got `gpu_nodes`",
        ),
        (
            &["run", "runbooks/core/params.rhai", "--set", "gpu_nodes=two"],
            "--set gpu_nodes=two: expected an integer",
        ),
        (
            &["run", "runbooks/core/params.rhai", "--set", "timeout=soon"],
            "--set timeout=soon: expected a duration",
        ),
        (
            &[
                "run",
                "runbooks/core/params.rhai",
                "--set",
                "zones=ap-northeast-2a",
            ],
            "--set zones=ap-northeast-2a: expected a JSON array",
        ),
        (
            &["run", "runbooks/core/params.rhai", "--set", "clustr=x"],
            "unknown parameter `--set clustr=...`; this runbook knows: budget_per_day, cluster, destroy, gpu_nodes, timeout, zones",
        ),
        (
            &["run", "runbooks/core/steps.rhai", "--set", "cluster=x"],
            "--set cluster given, but runbooks/core/steps.rhai never calls params()",
        ),
        (
            &[
                "run",
                "runbooks/core/params.rhai",
                "--set",
                "cluster=@/no/such/file",
            ],
            "cannot read the value of --set cluster\n  caused by: cannot read /no/such/file: No such file",
        ),
        (
            &[
                "run",
                "runbooks/core/params.rhai",
                "--set",
                "a=1",
                "--set",
                "a=2",
            ],
            "--set a is given twice",
        ),
        (
            &[
                "run",
                "runbooks/core/params.rhai",
                "--progress",
                "sometimes",
            ],
            "invalid value 'sometimes' for '--progress <PROGRESS>'",
        ),
        (
            &["check"],
            "the following required arguments were not provided",
        ),
        (&["frobnicate"], "unrecognized subcommand 'frobnicate'"),
    ];
    for (args, message) in cases {
        let ran = Runbook::new().args(*args).run();
        assert_no_crash(&args.join(" "), &ran);
        assert_eq!(ran.code(), 2, "{args:?}:\n{}", ran.stderr());
        assert!(
            ran.stderr().contains(message),
            "{args:?}: expected `{message}` in:\n{}",
            ran.stderr()
        );
    }
}

#[test]
fn a_bad_set_points_at_the_params_call() {
    let ran = Runbook::new()
        .args(["run", "runbooks/core/params.rhai", "--set", "destroy=maybe"])
        .run()
        .expect_code(2);
    assert!(
        ran.stderr().contains("--> runbooks/core/params.rhai:2:9"),
        "{}",
        ran.stderr()
    );
}
