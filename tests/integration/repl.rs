//! `runbook repl` in a real pseudo-terminal: results, multi-line input, errors that keep the
//! session, completion, Ctrl-C during a long wait, and cleanups at Ctrl-D.

use std::time::Duration;

use expectrl::{ControlCode, Expect, Regex};

use crate::support::repo_root;

type Session = expectrl::session::OsSession;

/// Waits for `needle`, answering the editor's cursor-position queries (`ESC[6n`) on the way,
/// as a terminal would.
/// Returns everything read up to the needle. (One read can match several times, and all of
/// it is consumed: wait for the last thing expected, then look at what came before.)
fn wait_for(session: &mut Session, needle: &str) -> String {
    let escaped: String = needle
        .chars()
        .map(|c| {
            if "\\.+*?()|[]{}^$".contains(c) {
                format!("\\{c}")
            } else {
                c.to_string()
            }
        })
        .collect();
    let pattern = format!(r"\x1b\[6n|{escaped}");
    let mut seen_text = String::new();
    loop {
        let found = session
            .expect(Regex(pattern.as_str()))
            .unwrap_or_else(|e| panic!("waiting for {needle:?}: {e}"));
        // One read can hold several matches: answer every query, and stop if the needle was
        // among them.
        seen_text.push_str(&String::from_utf8_lossy(found.as_bytes()));
        let mut seen = false;
        for matched in found.matches() {
            if matched == b"\x1b[6n".as_slice() {
                session.send("\x1b[1;1R").expect("the pty takes input");
            } else {
                seen = true;
            }
        }
        if seen {
            return seen_text;
        }
    }
}

/// Types a line at the next prompt (`runbook> `).
///
/// The editor repaints a line being typed with its prompt, so `> ` also appears before an
/// input is submitted: a line typed then can reach the editor with the previous Enter and be
/// dropped with the rest of that batch. So an input that prints nothing is followed by one
/// that does (`9 * 11`), and the tests wait for that output before typing the next line.
fn type_line(session: &mut Session, line: &str) {
    let _ = wait_for(session, "> ");
    session.send_line(line).expect("the pty takes input");
}

/// Types a continuation line of an unfinished input (prompt `::: `).
fn continue_line(session: &mut Session, line: &str) {
    let _ = wait_for(session, "::: ");
    session.send_line(line).expect("the pty takes input");
}

fn start(extra: &[&str]) -> (Session, tempfile::TempDir) {
    let data = tempfile::tempdir().expect("temp dir");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_runbook"));
    command
        .arg("repl")
        .args(extra)
        .current_dir(repo_root())
        .env("XDG_DATA_HOME", data.path())
        .env("TERM", "xterm")
        .env_remove("RUST_BACKTRACE");
    let mut session = Session::spawn(command).expect("the repl starts in a pty");
    session.set_expect_timeout(Some(Duration::from_secs(30)));
    let _ = wait_for(&mut session, "Ctrl-D quits");
    (session, data)
}

#[test]
fn evaluates_lines_and_multi_line_input_in_one_scope() {
    let (mut p, _data) = start(&[]);
    type_line(&mut p, "let xs = [1,");
    continue_line(&mut p, "2, 3]; 9 * 11");
    let _ = wait_for(&mut p, "99");
    type_line(&mut p, "xs.len() * 1000 + 7");
    let _ = wait_for(&mut p, "3007");
    type_line(&mut p, "fn twice(x) { x * 2 } 9 * 12");
    let _ = wait_for(&mut p, "108");
    type_line(&mut p, "twice(21) + 1000");
    let _ = wait_for(&mut p, "1042");
}

#[test]
fn an_error_shows_a_caret_and_the_session_goes_on() {
    let (mut p, _data) = start(&[]);
    type_line(&mut p, "wait_untl(1)");
    let _ = wait_for(&mut p, "did you mean `wait_until`?");
    type_line(&mut p, "40 + 1002");
    let _ = wait_for(&mut p, "1042");
}

#[test]
fn nodes_print_as_a_table() {
    let (mut p, _data) = start(&[]);
    type_line(&mut p, "k8s::nodes()");
    let table = wait_for(&mut p, "ap-northeast-2c");
    assert!(
        table.contains("NAME ") && table.contains("INSTANCE_TYPE"),
        "a table header: {table}"
    );
    assert!(
        table.contains(
            "ip-192-168-13-45.ap-northeast-2.compute.internal  i-0a1b2c3d4e5f60001  t3.medium"
        ),
        "a row per node: {table}"
    );
}

#[test]
fn tab_completes_functions_and_map_keys() {
    let (mut p, _data) = start(&[]);
    let _ = wait_for(&mut p, "> ");
    p.send("k8s::rollout_st").unwrap();
    p.send("\t").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    p.send_line(r#"("Deployment", "coredns", #{ namespace: "kube-system" }).status.readyReplicas * 1000 + 1"#).unwrap();
    let _ = wait_for(&mut p, "2001");
    type_line(&mut p, "let cfg = #{ warm_ip_target: 1 }; 9 * 11");
    let _ = wait_for(&mut p, "99");
    let _ = wait_for(&mut p, "> ");
    p.send("cfg.warm").unwrap();
    p.send("\t").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    p.send_line(" * 100 + 5").unwrap();
    let _ = wait_for(&mut p, "105");
}

#[test]
fn ctrl_c_stops_a_long_wait_and_stays_in_the_session() {
    let (mut p, _data) = start(&["--clock", "real"]);
    type_line(&mut p, "sleep(30)");
    std::thread::sleep(Duration::from_millis(800));
    p.send(ControlCode::EndOfText).unwrap();
    let _ = wait_for(&mut p, "interrupted");
    type_line(&mut p, "6 * 7 + 1000");
    let _ = wait_for(&mut p, "1042");
}

#[test]
fn the_clock_advances_and_ctrl_d_runs_cleanups() {
    let (mut p, _data) = start(&[]);
    type_line(&mut p, ":advance 5m");
    let _ = wait_for(&mut p, "5m since the session started");
    type_line(
        &mut p,
        r#"defer("say bye", || print("cleanup ran")); 9 * 11"#,
    );
    let _ = wait_for(&mut p, "99");
    let _ = wait_for(&mut p, "> ");
    std::thread::sleep(Duration::from_millis(300));
    p.send(ControlCode::EndOfTransmission).unwrap();
    let _ = wait_for(&mut p, "cleanup ran");
}

#[test]
fn load_runs_a_runbook_into_the_session_and_its_cleanups_when_it_ends() {
    let (mut p, _data) = start(&[]);
    type_line(&mut p, ":load runbooks/core/defer-order.rhai");
    let output = wait_for(&mut p, "loaded runbooks/core/defer-order.rhai");
    assert!(
        output.contains("cleanup: third") && output.contains("cleanup: first"),
        "the load's cleanups ran: {output}"
    );
    type_line(&mut p, "p.outcome + \"-kept\"");
    let _ = wait_for(&mut p, "pass-kept");
    type_line(&mut p, ":help k8s::wait_nodes");
    let _ = wait_for(&mut p, "k8s::wait_nodes(options: Map) -> Array");
}
