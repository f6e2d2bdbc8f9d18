//! `runbook state capture` against `lab serve` reached as a real account is (its kubeconfig
//! and AWS endpoint): read-only calls only, Secrets by name without their data, and a twin
//! started from the file (`lab serve --scenario @FILE`) captures back to the same lab.

use std::path::Path;

use serde_json::Value;

use crate::support::{LabServer, Runbook};

pub fn capture(lab: &LabServer, output: &Path) {
    Runbook::new()
        .lab_env(lab)
        .args(["state", "capture", "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint(), "-o"])
        .arg(output)
        .run()
        .expect_code(0);
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the lab-state file")).expect("json")
}

/// The AWS actions and Kubernetes verbs the lab has answered since its audits were reset.
fn calls(lab: &LabServer) -> (Vec<String>, Vec<String>) {
    let aws: Value = serde_json::from_str(&lab.get(&format!("{}/twin/audit", lab.aws_endpoint())))
        .expect("json");
    let kube: Value =
        serde_json::from_str(&lab.get(&format!("{}/twin/audit", lab.url))).expect("json");
    let strings = |list: &Value, field: &str| -> Vec<String> {
        let mut all: Vec<String> = list
            .as_array()
            .expect("an array")
            .iter()
            .filter_map(|entry| entry[field].as_str().map(str::to_string))
            .collect();
        all.sort();
        all.dedup();
        all
    };
    (strings(&aws, "action"), strings(&kube, "verb"))
}

#[test]
fn a_capture_reads_only_and_a_twin_of_it_captures_back_the_same() {
    let lab = LabServer::start("60");
    let dir = tempfile::tempdir().expect("temp dir");
    // A Secret whose data must never reach the file.
    Runbook::new()
        .lab_env(&lab)
        .args(["eval", r#"k8s::apply(#{apiVersion: "v1", kind: "Secret", metadata: #{name: "registry", namespace: "kube-system"}, stringData: #{password: "s3cr3t-value"}})"#, "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint()])
        .run()
        .expect_code(0);
    lab.reset_audits();
    let first = dir.path().join("lab-state.json");
    capture(&lab, &first);

    let (aws, verbs) = calls(&lab);
    assert!(!aws.is_empty() && !verbs.is_empty(), "{aws:?} {verbs:?}");
    for action in &aws {
        let operation = action.split(':').nth(1).unwrap_or_default();
        assert!(
            ["Describe", "List", "Get"]
                .iter()
                .any(|read| operation.starts_with(read)),
            "{action} is not a read ({aws:?})"
        );
    }
    for verb in &verbs {
        assert!(
            ["get", "list"].contains(&verb.as_str()),
            "{verb} ({verbs:?})"
        );
    }

    let text = std::fs::read_to_string(&first).expect("written");
    assert!(
        !text.contains("s3cr3t") && !text.contains("czNjcjN0"),
        "no Secret data"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&first)
        .expect("exists")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let state = json(&first);
    assert_eq!(state["format"], "runbook.lab-state");
    assert_eq!(state["version"], 1);
    assert!(
        state["kubernetes"]["secrets"]
            .as_array()
            .expect("secrets")
            .contains(&serde_json::json!({"namespace": "kube-system", "name": "registry"})),
        "{}",
        state["kubernetes"]["secrets"]
    );
    let aws_state = &state["aws"];
    assert_eq!(aws_state["cluster"]["name"], "myeks5w");
    assert_eq!(aws_state["nodegroups"].as_array().map(Vec::len), Some(2));
    let rules: usize = aws_state["security_groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| g["rules"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(rules >= 10, "the groups' rules are read: {rules}");
    let kinds: std::collections::BTreeSet<&str> = state["kubernetes"]["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .filter_map(|o| o["kind"].as_str())
        .collect();
    for kind in [
        "Namespace",
        "Node",
        "DaemonSet",
        "Deployment",
        "Service",
        "ConfigMap",
        "Pod",
    ] {
        assert!(kinds.contains(kind), "{kind} in {kinds:?}");
    }
    drop(lab);

    // eval (and run, repl) start the embedded twin from the file too.
    let read = Runbook::new()
        .args(["eval", "[k8s::nodes().len(), eks::nodegroup(\"myeks5w\", \"gpu\").scaling_config.desired_size]", "--json", "--scenario"])
        .arg(format!("@{}", first.display()))
        .run()
        .expect_code(0);
    let read: Value = serde_json::from_str(&read.stdout()).expect("json");
    assert_eq!(read, serde_json::json!([2, 0]));

    let twin = LabServer::start_with("60", &["--scenario", &format!("@{}", first.display())]);
    let second = dir.path().join("again.json");
    capture(&twin, &second);
    let again = json(&second);
    assert_eq!(again["aws"], state["aws"], "the AWS side is the same");
    assert_eq!(
        again["kubernetes"], state["kubernetes"],
        "the Kubernetes side is the same"
    );
}

#[test]
fn a_lab_state_file_that_is_not_one_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("state.json");
    std::fs::write(&file, r#"{"format": "runbook.lab-state", "version": 9}"#).expect("written");
    let refused = Runbook::new()
        .args(["eval", "1", "--scenario"])
        .arg(format!("@{}", file.display()))
        .run()
        .expect_code(2);
    let text = refused.stderr();
    assert!(
        text.contains("state.json: lab-state version 9 is newer than this runbook reads (1)"),
        "{text}"
    );
    std::fs::write(&file, "{}").expect("written");
    let refused = Runbook::new()
        .args(["eval", "1", "--scenario"])
        .arg(format!("@{}", file.display()))
        .run()
        .expect_code(2);
    assert!(
        refused
            .stderr()
            .contains("is ``, not `runbook.lab-state`: write one with `runbook state capture`"),
        "{}",
        refused.stderr()
    );
}
