//! The run history and what scheduled drills read: metrics with baselines judged against
//! earlier runs, `runbook history`, and the Prometheus textfile.

use std::path::Path;

use crate::support::{Runbook, redact_wall_text};
use crate::with_snapshots;

fn drill(history: &Path, extra: &[&str]) -> crate::support::Ran {
    Runbook::new()
        .args([
            "run",
            "runbooks/gpu-lab.rhai",
            "--scenario",
            "empty",
            "--progress",
            "never",
            "--history",
        ])
        .arg(history)
        .args(extra)
        .run()
}

fn history_json(history: &Path) -> Vec<serde_json::Value> {
    let out = Runbook::new()
        .args(["history", "--json", "--history"])
        .arg(history)
        .run()
        .expect_code(0)
        .stdout();
    serde_json::from_str(&out).expect("history --json is JSON")
}

/// The drill's average bus bandwidth in a run, as the history keeps it.
fn avg_busbw(run: &serde_json::Value) -> &serde_json::Value {
    run["metrics"]
        .as_array()
        .and_then(|m| {
            m.iter()
                .find(|m| m["name"] == "nccl_avg_busbw" && m["step"][0] == "NCCL all-reduce")
        })
        .unwrap_or_else(|| panic!("no nccl_avg_busbw in {run}"))
}

#[test]
fn a_network_that_slows_from_run_8_fails_the_baseline_from_run_8() {
    let dir = tempfile::tempdir().expect("temp dir");
    for run in 1..=10 {
        let faults: &[&str] = if run >= 8 {
            &["--fault", "nccl-busbw=0.5"]
        } else {
            &[]
        };
        let ran = drill(dir.path(), faults);
        if run < 8 {
            ran.expect_code(0);
            continue;
        }
        let stderr = ran.stderr();
        assert_eq!(ran.code(), 1, "run {run}: {stderr}");
        // Run 8 and those after it compare with runs 1-7: a run that failed its baseline is
        // no baseline for the next.
        assert!(
            stderr.contains("metric `nccl_avg_busbw` = 0.275 GB/s is worse than its baseline: the median of runs 1-7 is 0.506 GB/s"),
            "run {run}: {stderr}"
        );
    }
    let runs = history_json(dir.path());
    assert_eq!(runs.len(), 10);
    assert_eq!(runs[0]["run"], 10, "newest first");
    for run in &runs {
        let number = run["run"].as_u64().unwrap_or_default();
        let busbw = avg_busbw(run);
        if number >= 8 {
            assert_eq!(run["status"], "failed", "{run}");
            assert_eq!(run["failed_step"], "NCCL all-reduce");
            assert_eq!(busbw["ok"], false);
            assert_eq!(busbw["baseline"]["verdict"], "worse");
            assert_eq!(
                busbw["baseline"]["compared"],
                serde_json::json!([1, 2, 3, 4, 5, 6, 7])
            );
        } else {
            assert_eq!(run["status"], "passed", "{run}");
            assert_eq!(busbw["ok"], true);
            let verdict = if number <= 3 {
                "too_few_runs"
            } else {
                "within"
            };
            assert_eq!(busbw["baseline"]["verdict"], verdict, "run {number}");
        }
    }
    let table = Runbook::new()
        .args([
            "history",
            "runbooks/gpu-lab.rhai",
            "--limit",
            "4",
            "--history",
        ])
        .arg(dir.path())
        .run()
        .expect_code(0)
        .stdout();
    let lines: Vec<&str> = table.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 5, "a header and 4 runs:\n{table}");
    // One commit, one target, a step that passed and failed: by the history's lights that is
    // flaky (it does not know the twin's faults changed).
    assert!(
        table.contains("\nflaky (passed and failed on the same commit and target):\n"),
        "{table}"
    );
    assert!(lines[0].starts_with("RUN  FINISHED (UTC)"), "{table}");
    for (line, number) in lines[1..].iter().zip([10, 9, 8, 7]) {
        assert!(line.starts_with(&format!("{number:<3}")), "{table}");
        if number >= 8 {
            assert!(
                line.contains("failed") && line.contains("NCCL all-reduce"),
                "{table}"
            );
            assert!(line.contains("!nccl_avg_busbw=0.275 GB/s"), "{table}");
        } else {
            assert!(
                line.contains("passed") && line.contains("nccl_avg_busbw=0.506 GB/s"),
                "{table}"
            );
        }
    }
    // What changed from the last good run to the first bad one.
    let diff = Runbook::new()
        .args(["history", "diff", "7", "8", "--history"])
        .arg(dir.path())
        .run()
        .expect_code(0)
        .stdout();
    assert!(
        diff.starts_with("run 7 (passed) -> run 8 (failed)\nparameters: the same\n"),
        "{diff}"
    );
    assert!(
        diff.contains(
            "\n  NCCL all-reduce: passed -> failed: metric `nccl_avg_busbw` = 0.275 GB/s is worse"
        ),
        "{diff}"
    );
    assert!(diff.contains("\n  teardown: passed -> not run\n"), "{diff}");
    assert!(
        diff.contains("\n  nccl_avg_busbw{instance_type=g5.xlarge,nccl=2.27.3,ofi=none} [NCCL all-reduce]: 0.506 GB/s -> 0.275 GB/s (-4"),
        "{diff}"
    );
    // The series, run by run (no sparkline: this is not a terminal).
    let trend = Runbook::new()
        .args([
            "history",
            "trend",
            "nccl_avg_busbw",
            "runbooks/gpu-lab.rhai",
            "--history",
        ])
        .arg(dir.path())
        .run()
        .expect_code(0)
        .stdout();
    let series = trend
        .split("nccl_avg_busbw {instance_type=g5.xlarge,nccl=2.27.3,ofi=none} (GB/s) in ")
        .find(|s| s.starts_with("runbooks/gpu-lab.rhai, step NCCL all-reduce\n"))
        .unwrap_or_else(|| panic!("the NCCL step's series in:\n{trend}"));
    assert_eq!(series.lines().count(), 11, "{series}");
    assert!(
        series.contains("\n      8 !      0.275  worse than the median 0.506 of runs 1-7\n"),
        "{series}"
    );
    assert!(
        series.contains("\n      5        0.506  within the median 0.506\n"),
        "{series}"
    );
    let none = Runbook::new()
        .args(["history", "runbooks/verify.rhai", "--history"])
        .arg(dir.path())
        .run()
        .expect_code(0)
        .stdout();
    assert!(
        none.starts_with("no runs of runbooks/verify.rhai in "),
        "{none}"
    );
}

#[test]
fn the_metrics_textfile_holds_the_run_its_steps_and_its_metrics() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("runbook.prom");
    let junit = dir.path().join("junit.xml");
    drill(
        dir.path(),
        &[
            "--metrics-file",
            file.to_str().expect("utf-8 path"),
            "--junit",
            junit.to_str().expect("utf-8 path"),
        ],
    )
    .expect_code(0);
    // JUnit carries each step's metrics as properties of its test case.
    let xml = std::fs::read_to_string(&junit).expect("the JUnit file was written");
    let case = xml
        .find("<testcase name=\"NCCL all-reduce\"")
        .expect("the NCCL step's test case");
    let case = &xml[case..case + xml[case..].find("</testcase>").expect("closed")];
    assert!(
        case.contains("<property name=\"nccl_avg_busbw{instance_type=g5.xlarge,nccl=2.27.3,ofi=none}\" value=\"0.506 GB/s\"/>"),
        "{case}"
    );
    let text = std::fs::read_to_string(&file).expect("the textfile was written");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("readable")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "no temporary file stays: {leftovers:?}"
    );
    // Times and wall durations differ from run to run; names, labels and virtual times do not.
    let stable: String = text
        .lines()
        .map(|line| {
            let volatile = [
                "runbook_run_duration_seconds",
                "runbook_step_duration_seconds",
                "_timestamp_seconds",
            ];
            match line.rsplit_once(' ') {
                Some((series, _))
                    if !line.starts_with('#') && volatile.iter().any(|v| series.contains(v)) =>
                {
                    format!("{series} [wall]")
                }
                _ => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    with_snapshots!({
        insta::assert_snapshot!("gpu-lab-metrics-textfile", redact_wall_text(&stable))
    });
    if let Some(promtool) = crate::support::promtool() {
        let checked = std::process::Command::new(promtool)
            .args(["check", "metrics"])
            .stdin(std::fs::File::open(&file).expect("readable"))
            .output()
            .expect("promtool runs");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&checked.stdout),
            String::from_utf8_lossy(&checked.stderr)
        );
        assert!(checked.status.success(), "promtool check metrics: {said}");
    }
}

#[test]
fn history_off_keeps_nothing_and_a_history_that_cannot_open_stops_the_run_first() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runbook = dir.path().join("one.rhai");
    std::fs::write(&runbook, "step(\"one\", || metric(\"one\", 1));\n").expect("write");
    let ran = Runbook::new()
        .args(["run", "--progress", "never", "--history", "off"])
        .arg(&runbook)
        .env("XDG_STATE_HOME", dir.path())
        .run()
        .expect_code(0);
    assert!(!ran.stderr().contains("history"), "{}", ran.stderr());
    assert!(
        !dir.path().join("runbook").join("history.sqlite3").exists(),
        "off keeps nothing"
    );
    let blocked = dir.path().join("file");
    std::fs::write(&blocked, "not a folder").expect("write");
    let ran = Runbook::new()
        .args(["run", "--progress", "never", "--history"])
        .arg(blocked.join("history"))
        .arg(&runbook)
        .run();
    assert_eq!(ran.code(), 2, "{}", ran.stderr());
    assert!(ran.stdout().is_empty(), "nothing ran: {}", ran.stdout());
    assert!(
        ran.stderr().starts_with(&format!(
            "error: the run history {}",
            blocked.join("history").join("history.sqlite3").display()
        )),
        "{}",
        ran.stderr()
    );
}

/// The summary with what changes from run to run masked: wall times, the run id.
fn stable_summary(markdown: &str) -> String {
    markdown
        .lines()
        .map(|line| {
            if line.contains(" wall · ") {
                return line
                    .split(" · ")
                    .map(|fact| {
                        if fact.ends_with(" wall") {
                            "[wall] wall".to_string()
                        } else if fact.starts_with("run `") {
                            "run [run id]".to_string()
                        } else {
                            fact.to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" · ");
            }
            let cells: Vec<&str> = line.split(" | ").collect();
            // A step row: | step | status | wall | on its clock |
            if line.starts_with("| ") && cells.len() == 4 && !line.starts_with("| step ") {
                return format!("{} | {} | [wall] | {}", cells[0], cells[1], cells[3]);
            }
            line.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_summary_names_the_drop_with_its_baseline_and_trend() {
    let dir = tempfile::tempdir().expect("temp dir");
    for _ in 0..3 {
        drill(dir.path(), &[]).expect_code(0);
    }
    let step_summary = dir.path().join("step-summary.md");
    std::fs::write(&step_summary, "earlier step's summary\n").expect("write");
    let summary = dir.path().join("summary.md");
    let ran = Runbook::new()
        .args([
            "run",
            "runbooks/gpu-lab.rhai",
            "--scenario",
            "empty",
            "--progress",
            "never",
            "--fault",
            "nccl-busbw=0.5",
            "--history",
        ])
        .arg(dir.path())
        .arg("--summary")
        .arg(&summary)
        .env("GITHUB_STEP_SUMMARY", &step_summary)
        .run();
    assert_eq!(ran.code(), 1, "{}", ran.stderr());
    let markdown = std::fs::read_to_string(&summary).expect("the summary was written");
    assert!(markdown.len() < 1024 * 1024);
    let appended = std::fs::read_to_string(&step_summary).expect("readable");
    assert_eq!(
        appended,
        format!("earlier step's summary\n{markdown}"),
        "appended, not replaced"
    );
    assert!(
        markdown.contains("| nccl_avg_busbw `{instance_type=g5.xlarge,nccl=2.27.3,ofi=none}` | NCCL all-reduce | 0.275 GB/s ❌ |  | median 0.506 of runs 1-3, limit 0.405, -46% | ███▁ |"),
        "{markdown}"
    );
    with_snapshots!({
        insta::assert_snapshot!("gpu-lab-summary-busbw-drop", stable_summary(&markdown))
    });
}

#[test]
fn history_check_fails_a_drill_that_has_not_passed_recently_enough() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = dir.path().join("history");
    let check = |args: &[&str]| {
        Runbook::new()
            .args(["history", "check", "--history"])
            .arg(&history)
            .args(args)
            .run()
    };
    let empty = check(&["--max-age", "26h"]);
    assert_eq!(
        empty.code(),
        1,
        "no run at all is not fresh: {}",
        empty.stdout()
    );
    assert!(
        empty.stdout().starts_with("stale: no runs in "),
        "{}",
        empty.stdout()
    );

    let passing = dir.path().join("nightly.rhai");
    std::fs::write(&passing, "step(\"one\", || 1);\n").expect("write");
    let failing = dir.path().join("broken.rhai");
    std::fs::write(&failing, "step(\"one\", || assert(false, \"no\"));\n").expect("write");
    for file in [&passing, &failing] {
        Runbook::new()
            .args(["run", "--progress", "never", "--history"])
            .arg(&history)
            .arg(file)
            .run();
    }
    let runs = history_json(&history);
    let finished = runs
        .iter()
        .find(|r| r["status"] == "passed")
        .and_then(|r| r["finished"].as_f64())
        .expect("the passing run's end");
    let at = |hours: f64| format!("{}", (finished + hours * 3600.0).floor());

    let nightly = passing.to_str().expect("utf-8");
    let fresh = check(&["--max-age", "26h", "--now", &at(25.0), nightly]);
    assert_eq!(fresh.code(), 0, "{}", fresh.stdout());
    assert!(fresh.stdout().starts_with("fresh: "), "{}", fresh.stdout());
    assert!(
        fresh.stdout().contains("last passed in run 1 at "),
        "{}",
        fresh.stdout()
    );
    let stale = check(&["--max-age", "26h", "--now", &at(27.0), nightly]);
    assert_eq!(stale.code(), 1, "{}", stale.stdout());
    assert!(stale.stdout().starts_with("stale: "), "{}", stale.stdout());

    // Every runbook in the history: the one that never passed makes the check fail.
    let all = check(&["--max-age", "26h", "--now", &at(1.0)]);
    assert_eq!(all.code(), 1, "{}", all.stdout());
    assert!(
        all.stdout()
            .contains(&format!("stale: {} has never passed", failing.display())),
        "{}",
        all.stdout()
    );
    assert!(all.stdout().contains("fresh: "), "{}", all.stdout());

    let bad = check(&["--max-age", "soon"]);
    assert_eq!(bad.code(), 2, "{}", bad.stderr());
    assert!(bad.stderr().contains("--max-age soon"), "{}", bad.stderr());
    let bad = check(&["--max-age", "1h", "--now", "tomorrow"]);
    assert_eq!(bad.code(), 2);
    assert!(
        bad.stderr()
            .contains("--now tomorrow: expected an RFC 3339 UTC time"),
        "{}",
        bad.stderr()
    );
}

/// A child process killed when the test ends, however it ends.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The value of the first series `query` answers in Prometheus' HTTP API, once it has one.
fn query_value(port: u16, query: &str) -> Option<f64> {
    let encoded: String = query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let body = crate::support::http_get(port, &format!("/api/v1/query?query={encoded}"))?;
    let json: serde_json::Value = serde_json::from_str(&body).ok()?;
    json["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

/// Polls until `query` answers `wanted` (what Prometheus scraped last), for up to 60 s.
fn wait_for(port: u16, query: &str, wanted: impl Fn(f64) -> bool) -> f64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(value) = query_value(port, query).filter(|v| wanted(*v)) {
            return value;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Prometheus never answered `{query}` as wanted (last: {:?})",
            query_value(port, query)
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn pushed_metrics_reach_prometheus_and_a_failed_run_keeps_the_last_success() {
    let Some((prometheus, pushgateway)) = crate::support::prometheus_and_pushgateway() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (push_port, prom_port) = (crate::support::free_port(), crate::support::free_port());
    let _gateway = Server(
        std::process::Command::new(pushgateway)
            .arg(format!("--web.listen-address=127.0.0.1:{push_port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the Pushgateway starts"),
    );
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: pushgateway\n    honor_labels: true\n    static_configs:\n      - targets: ['127.0.0.1:{push_port}']\n"
        ),
    )
    .expect("write");
    let _prometheus = Server(
        std::process::Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("Prometheus starts"),
    );
    let runbook = dir.path().join("nightly.rhai");
    let run = |body: &str| {
        std::fs::write(&runbook, body).expect("write");
        Runbook::new()
            .args([
                "run",
                "--progress",
                "never",
                "--pushgateway",
                &format!("http://127.0.0.1:{push_port}"),
                "--history",
            ])
            .arg(dir.path().join("history"))
            .arg(&runbook)
            .run()
    };
    // The Pushgateway may take a moment to listen.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while crate::support::http_get(push_port, "/-/ready").is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the Pushgateway never became ready"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let passed =
        run("step(\"measure\", || metric(\"gpu_count\", 2, #{ labels: #{ zone: \"a\" } }));\n");
    assert_eq!(passed.code(), 0, "{}", passed.stderr());
    assert!(!passed.stderr().contains("warning"), "{}", passed.stderr());
    let name = runbook.display().to_string();
    let selector = format!("{{job=\"runbook\",runbook=\"{name}\"}}");
    wait_for(prom_port, &format!("runbook_run_success{selector}"), |v| {
        v == 1.0
    });
    let gpus = wait_for(
        prom_port,
        &format!("runbook_metric{{name=\"gpu_count\",zone=\"a\",runbook=\"{name}\"}}"),
        |_| true,
    );
    assert_eq!(gpus, 2.0);
    let last_success = wait_for(
        prom_port,
        &format!("runbook_last_success_timestamp_seconds{selector}"),
        |_| true,
    );

    let failed = run(
        "step(\"measure\", || metric(\"gpu_count\", 1, #{ min: 2, labels: #{ zone: \"a\" } }));\n",
    );
    assert_eq!(failed.code(), 1, "{}", failed.stderr());
    wait_for(prom_port, &format!("runbook_run_success{selector}"), |v| {
        v == 0.0
    });
    wait_for(
        prom_port,
        &format!("runbook_metric_ok{{name=\"gpu_count\",runbook=\"{name}\"}}"),
        |v| v == 0.0,
    );
    // The failed run replaced its own group, not the last success's.
    let still = wait_for(
        prom_port,
        &format!("runbook_last_success_timestamp_seconds{selector}"),
        |_| true,
    );
    assert_eq!(
        still, last_success,
        "a failed run leaves the last success as it was"
    );

    let refused = Runbook::new()
        .args([
            "run",
            "--progress",
            "never",
            "--pushgateway",
            "https://pushgateway.example:9091",
        ])
        .arg(&runbook)
        .run();
    assert_eq!(refused.code(), 2, "{}", refused.stderr());
    assert!(refused.stdout().is_empty(), "nothing ran");
    assert!(
        refused.stderr().contains("only http:// is supported"),
        "{}",
        refused.stderr()
    );
}

#[test]
fn a_step_that_passes_and_fails_on_one_commit_and_target_is_marked_flaky() {
    let dir = tempfile::tempdir().expect("temp dir");
    let history = dir.path().join("history");
    let runbook = dir.path().join("flaky.rhai");
    std::fs::write(
        &runbook,
        "step(\"check\", || {\n    step(\"flip\", || assert(read_text(\"flip.txt\") == \"pass\", \"it flipped\"));\n    step(\"steady\", || 1);\n});\n",
    )
    .expect("write");
    for (outcome, commit) in [
        ("pass", "abc1234"),
        ("fail", "abc1234"),
        ("pass", "abc1234"),
        ("fail", "def5678"),
    ] {
        std::fs::write(dir.path().join("flip.txt"), outcome).expect("write");
        let ran = Runbook::new()
            .args(["run", "--progress", "never", "--history"])
            .arg(&history)
            .arg(&runbook)
            .env("GITHUB_SHA", commit)
            .run();
        assert_eq!(
            ran.code(),
            if outcome == "pass" { 0 } else { 1 },
            "{}",
            ran.stderr()
        );
    }
    let table = Runbook::new()
        .args(["history", "--history"])
        .arg(&history)
        .run()
        .expect_code(0)
        .stdout();
    let flaky: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("flaky"))
        .collect();
    assert_eq!(flaky.len(), 2, "one flaky step, the innermost:\n{table}");
    assert!(
        flaky[1].ends_with("flaky.rhai > check > flip: passed 2, failed 1 on commit abc1234 against the embedded lab twin (deployed scenario) (runs 3, 2, 1)"),
        "{table}"
    );
    let runs = history_json(&history);
    assert_eq!(runs[0]["commit"], "def5678");
    assert_eq!(
        runs[0]["flaky_steps"],
        serde_json::json!([]),
        "one failure on its own commit is not flaky"
    );
    assert_eq!(runs[1]["flaky_steps"], serde_json::json!(["check > flip"]));
}

/// A bandwidth metric kept by the NCCL release it was measured with, as gpu::all_reduce_ok
/// keeps it; what was measured comes from a file beside it, so that every run has one key.
const BUSBW_BY_VERSION: &str = r#"
let m = parse_json(read_text("measured.json"));
step("NCCL all-reduce", || {
    metric("nccl_avg_busbw", m.busbw, #{ unit: "GB/s", better: "higher",
        labels: #{ instance_type: "g5.xlarge", nccl: m.nccl, ofi: "none" }, baseline: #{ runs: 20, drop: 0.2 } });
});
"#;

#[test]
fn the_bandwidth_baseline_is_kept_by_instance_type_nccl_and_aws_ofi_nccl() {
    let dir = tempfile::tempdir().expect("temp dir");
    drill(dir.path(), &[]).expect_code(0);
    let runs = history_json(dir.path());
    let labels = &avg_busbw(&runs[0])["labels"];
    assert_eq!(labels["instance_type"], "g5.xlarge", "{labels}");
    assert_eq!(
        labels["nccl"], "2.27.3",
        "read from NCCL's own version line: {labels}"
    );
    assert!(labels["ofi"].is_string(), "{labels}");

    // Three runs on one release make its baseline; half the bandwidth on it fails, the same
    // figure on the next release starts that release's baseline.
    let script = dir.path().join("busbw.rhai");
    std::fs::write(&script, BUSBW_BY_VERSION).expect("write");
    let history = dir.path().join("versions");
    let run = |busbw: f64, nccl: &str| {
        let measured = serde_json::json!({ "busbw": busbw, "nccl": nccl });
        std::fs::write(dir.path().join("measured.json"), measured.to_string()).expect("write");
        Runbook::new()
            .arg("run")
            .arg(&script)
            .args(["--progress", "never", "--history"])
            .arg(&history)
            .run()
    };
    for _ in 0..3 {
        run(0.5, "2.27.3").expect_code(0);
    }
    let slower = run(0.25, "2.27.3").expect_code(1).stderr();
    assert!(slower.contains("is worse than its baseline"), "{slower}");
    run(0.25, "2.28.3").expect_code(0);
}
