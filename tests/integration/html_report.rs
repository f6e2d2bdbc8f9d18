//! `runbook run ... --html`: the drill's page and a failed drill's page opened in a real
//! headless Chromium (Debian's package): no console message, a bar per step on each clock,
//! the failing step marked, every change of the JSON report in the changes table, a
//! screenshot that is not blank, and the essentials with JavaScript off. The failed drill's
//! page is an insta snapshot with its wall-clock parts masked.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Runbook, helm_available, read_report, tool_on_path};
use crate::with_snapshots;

/// The drill from `empty` with `extra` arguments, writing its JSON report and its page into
/// `dir`; returns both.
fn drill(dir: &Path, name: &str, extra: &[&str], code: i32) -> (serde_json::Value, String) {
    let report = dir.join(format!("{name}.json"));
    let html = dir.join(format!("{name}.html"));
    let mut args = vec![
        "run",
        "runbooks/gpu-lab.rhai",
        "--scenario",
        "empty",
        "--progress",
        "never",
    ];
    args.extend_from_slice(extra);
    Runbook::new()
        .args(args)
        .arg("--report")
        .arg(&report)
        .arg("--html")
        .arg(&html)
        .run()
        .expect_code(code);
    (
        read_report(&report),
        std::fs::read_to_string(&html).expect("the page was written"),
    )
}

struct Browser {
    binary: PathBuf,
    profile: tempfile::TempDir,
}

impl Browser {
    fn find() -> Option<Self> {
        let binary = tool_on_path("chromium", "apt-get install chromium")?;
        Some(Self {
            binary,
            profile: tempfile::tempdir().expect("temp dir"),
        })
    }

    /// Chromium headless as this machine's closed network wants it, with `args`; its stdout
    /// and stderr.
    fn run(&self, page: &Path, args: &[&str]) -> (String, String) {
        let out = Command::new(&self.binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--enable-logging=stderr",
                "--v=0",
            ])
            .arg(format!("--user-data-dir={}", self.profile.path().display()))
            .args(args)
            .arg(format!("file://{}", page.display()))
            .output()
            .expect("chromium runs");
        assert!(
            out.status.success(),
            "chromium: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

/// What the browser made of the page, checked against the JSON report of the same run.
fn check_in_browser(browser: &Browser, page: &Path, report: &serde_json::Value, failed: bool) {
    let (dom, log) = browser.run(page, &["--dump-dom"]);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    assert!(dom.contains("data-script=\"ran\""), "the script ran");
    let steps = report_steps(&report["steps"]);
    assert_eq!(
        count(&dom, "<rect class=\"bar step"),
        2 * steps,
        "a bar per step on each clock"
    );
    assert_eq!(
        count(&dom, "class=\"bar step failed failing\"") > 0,
        failed,
        "the failing step is marked where one failed"
    );
    let changes = report["changes"].as_array().map_or(0, Vec::len);
    assert_eq!(
        count(&dom, "<tr class=\"change "),
        changes,
        "every change of the JSON report"
    );
    // Without its script the essentials are there all the same: they are markup. (Headless
    // Chromium runs scripts whatever --disable-javascript says, so the script is taken out.)
    let html = std::fs::read_to_string(page).expect("the page");
    let (head, rest) = html
        .split_once("<script>")
        .expect("the page has its script");
    let tail = rest.split_once("</script>").expect("the script ends").1;
    let without = page.with_extension("noscript.html");
    std::fs::write(&without, format!("{head}{tail}")).expect("write");
    let (plain, _) = browser.run(&without, &["--dump-dom"]);
    assert!(!plain.contains("data-script=\"ran\""), "no script ran");
    assert_eq!(count(&plain, "<rect class=\"bar step"), 2 * steps);
    assert_eq!(count(&plain, "<tr class=\"change "), changes);
    // A picture that is not blank: a blank page of this size is about 14 KB.
    let png = page.with_extension("png");
    browser.run(
        page,
        &[
            "--window-size=1280,2400",
            &format!("--screenshot={}", png.display()),
        ],
    );
    let size = std::fs::metadata(&png).expect("the screenshot").len();
    assert!(
        size > 100_000,
        "a screenshot of {size} bytes is all but blank"
    );
}

fn report_steps(steps: &serde_json::Value) -> usize {
    steps
        .as_array()
        .map_or(0, |s| s.iter().map(|s| 1 + report_steps(&s["steps"])).sum())
}

/// The page with what changes from run to run masked: wall times (the facts line, the wall
/// timeline, the steps' wall column) and the run id.
fn stable(html: &str) -> String {
    let mut out = String::new();
    let mut in_wall_figure = false;
    for line in html.lines() {
        if line.starts_with("<figure class=\"timeline\" data-clock=\"wall\">") {
            in_wall_figure = true;
            out.push_str("[wall timeline]\n");
        }
        if in_wall_figure {
            in_wall_figure = line != "</figure>";
            continue;
        }
        let line = if let Some(rest) = line.split_once("<div class=\"facts\">") {
            let facts = rest.1.split_once(" wall · ").map_or(rest.1, |f| f.1);
            format!("{}<div class=\"facts\">[wall] wall · {facts}", rest.0)
        } else if line.starts_with("<tr><th>run id</th>") {
            "<tr><th>run id</th><td>[run id]</td></tr>".to_string()
        } else if line.starts_with("<tr class=\"")
            && line.ends_with("</td></tr>")
            && !line.contains("change")
            && !line.contains("metric")
        {
            // A steps row: its last cell is the wall time.
            match line.rsplit_once("<td>") {
                Some((head, _)) => format!("{head}<td>[wall]</td></tr>"),
                None => line.to_string(),
            }
        } else {
            line.to_string()
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[test]
fn the_drill_and_a_failed_drill_read_in_a_real_browser() {
    if !helm_available() {
        return;
    }
    let Some(browser) = Browser::find() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (report, html) = drill(dir.path(), "drill", &["--history", "off"], 0);
    assert!(
        html.len() < 500 * 1024,
        "the drill's page is {} bytes",
        html.len()
    );
    // Nothing is fetched: no element loads anything (URLs appear only as text, such as an
    // OIDC issuer), and the page's CSP would refuse it with a console message if one did.
    for loads in [" src=", " href=", "url(", "@import"] {
        assert!(!html.contains(loads), "the page loads something: {loads}");
    }
    check_in_browser(&browser, &dir.path().join("drill.html"), &report, false);
    // Every NCCL run's table, row for row as the JSON report keeps it.
    let nccl_rows: usize = report["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .filter(|e| e["kind"] == "nccl")
        .map(|e| e["data"]["rows"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(nccl_rows > 0, "the drill's all-reduce has rows");
    assert_eq!(count(&html, "<tr class=\"nccl-row\">"), nccl_rows);
    // The versions the evidence names, beside runbook's own.
    let nccl = report["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .find(|e| e["kind"] == "nccl")
        .expect("an all-reduce");
    let versions = format!(
        "<tr><th>versions</th><td>runbook {}, NCCL {}, nccl-tests {}</td></tr>",
        env!("CARGO_PKG_VERSION"),
        nccl["data"]["nccl_version"]
            .as_str()
            .expect("NCCL's version"),
        nccl["data"]["tests_version"]
            .as_str()
            .expect("nccl-tests' version"),
    );
    assert!(html.contains(&versions), "{versions}");
    // What the GPUs the drill started cost, stacked per resource, with its table.
    let resources: std::collections::BTreeSet<&str> = report["spend"]
        .as_array()
        .expect("the drill's spend")
        .iter()
        .filter_map(|r| r["resource"].as_str())
        .collect();
    assert!(resources.contains("nodegroup/myeks5w/gpu"), "{resources:?}");
    assert!(html.contains("id=\"spend-chart\""));
    assert_eq!(count(&html, "<polygon "), resources.len());

    let (report, html) = drill(
        dir.path(),
        "failed",
        &["--history", "off", "--fault", "nodegroup-never-joins=gpu"],
        1,
    );
    check_in_browser(&browser, &dir.path().join("failed.html"), &report, true);
    assert!(
        html.contains("<h2 id=\"what-went-wrong\">"),
        "what went wrong is said"
    );
    // Where: the file, the line and a caret under the column, as the terminal shows it.
    let at = &report["error_at"];
    let line = at["line"].as_u64().expect("a line");
    let column = at["column"].as_u64().expect("a column") as usize;
    let source = at["source"].as_str().expect("its source line");
    let gutter = " ".repeat(line.to_string().len());
    assert!(
        html.contains(&format!(
            "{line} | {}\n{gutter} | {}^</pre>",
            source.replace('"', "&quot;"),
            " ".repeat(column - 1)
        )),
        "the caret sits under column {column} of {source}"
    );
    assert!(
        html.contains("cleanup GPU node group back to 0: eks::scale_nodegroup myeks5w gpu to 0"),
        "the scale-up's change is put back by its cleanup"
    );
    with_snapshots!({ insta::assert_snapshot!("html-report-failed-drill", stable(&html)) });
}

#[test]
fn the_page_charts_each_metric_over_the_last_runs_of_the_history() {
    if !helm_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let history = dir.path().join("history");
    std::fs::create_dir(&history).expect("history folder");
    let history = history.to_str().expect("utf-8").to_string();
    let mut html = String::new();
    for run in 0..3 {
        html = drill(
            dir.path(),
            &format!("run-{run}"),
            &["--history", &history],
            0,
        )
        .1;
    }
    let charts = count(&html, "<svg class=\"trend\"");
    assert!(charts > 0, "a chart per metric with a history");
    // Three runs: three dots in each chart, the last one this run's.
    assert_eq!(count(&html, "<circle "), 3 * charts);
    assert_eq!(count(&html, "(this run)</title>"), charts);
    assert!(
        html.contains("over the last 3 runs"),
        "charts say what they show"
    );

    // A kept run's page: the same sections, its metrics charted over the runs up to it.
    let page = dir.path().join("run-2.html");
    Runbook::new()
        .args(["history", "show", "2", "--history", &history, "--html"])
        .arg(&page)
        .run()
        .expect_code(0);
    let kept = std::fs::read_to_string(&page).expect("the page");
    assert_eq!(count(&kept, "<svg class=\"trend\""), charts);
    assert_eq!(count(&kept, "<circle "), 2 * charts, "runs 1 and 2 only");
    assert_eq!(
        count(&kept, "<rect class=\"bar step"),
        count(&html, "<rect class=\"bar step"),
        "the timeline of the kept report"
    );
    assert!(kept.contains("<tr><th>history run</th><td>2</td></tr>"));
    let json = Runbook::new()
        .args(["history", "show", "3", "--history", &history])
        .run()
        .expect_code(0)
        .stdout();
    let json: serde_json::Value = serde_json::from_str(&json).expect("the kept report");
    assert_eq!(json["runbook"], "runbooks/gpu-lab.rhai");
    let missing = Runbook::new()
        .args(["history", "show", "99", "--history", &history])
        .run()
        .expect_code(2)
        .stderr();
    assert!(missing.contains("no run 99"), "{missing}");
}

#[test]
fn a_health_run_shows_each_nodes_verdict_with_what_did_not_pass() {
    if !helm_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("health.html");
    Runbook::new()
        .args([
            "run",
            "runbooks/gpu-health.rhai",
            "--progress",
            "never",
            "--history",
            "off",
        ])
        .args(["--fault", "gpu-xid=gpu1:79", "--html"])
        .arg(&page)
        .run()
        .expect_code(1);
    let html = std::fs::read_to_string(&page).expect("the page");
    assert_eq!(
        count(&html, "<tr class=\"verdict "),
        4,
        "one row per GPU node"
    );
    assert_eq!(count(&html, "<tr class=\"verdict reboot\">"), 1);
    assert!(
        html.contains("Xid 79"),
        "the finding that did not pass is named"
    );
    // The fleet's driver, once for its four nodes, from the nodes' verdicts.
    let versions = html
        .lines()
        .find(|l| l.starts_with("<tr><th>versions</th>"))
        .expect("a versions row");
    assert_eq!(versions.matches("NVIDIA driver ").count(), 1, "{versions}");
}
