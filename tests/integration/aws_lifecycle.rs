//! Building and tearing down the lab's AWS side on the twin: the blueprint on the seed's
//! timeline, AWS's error codes for bad input, injected faults, the cost meter, and the aws CLI
//! creating a cluster on an empty twin.

use std::time::Instant;

use crate::support::{LabServer, Runbook, aws_cli_available, report_with};
use crate::with_snapshots;

fn child_ms(step: &serde_json::Value, name: &str) -> serde_json::Value {
    step["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name))
        .map(|s| s["virtual_ms"].clone())
        .unwrap_or_else(|| panic!("no step {name} in {step}"))
}

#[test]
fn the_lab_deploys_from_empty_on_the_seeds_timeline() {
    let report = report_with("runbooks/aws/deploy.rhai", &["--scenario", "empty"], 0);
    let deploy = &report["steps"][0];
    assert_eq!(child_ms(deploy, "network"), 0);
    assert_eq!(child_ms(deploy, "control plane"), 564_000, "9 m 24 s");
    assert_eq!(child_ms(deploy, "vpc-cni"), 35_000);
    assert_eq!(
        child_ms(deploy, "node groups"),
        108_000,
        "primary's 1 m 48 s"
    );
    assert_eq!(child_ms(deploy, "add-ons"), 55_000, "metrics-server's 55 s");
    with_snapshots!({ insta::assert_json_snapshot!("aws-deploy", report) });
}

#[test]
fn an_encrypted_lab_deploys_with_its_kms_key_and_destroy_leaves_nothing_but_a_key_pending_deletion()
{
    let out = Runbook::new()
        .args([
            "eval",
            "--scenario",
            "empty",
            "--json",
            r#"import "lab" as lab;
            let p = #{ cluster: "myeks5w", gpu_nodegroup: "gpu", gpu_nodes: 2, encrypt_secrets: true };
            let made = lab::deploy(p).created;
            let key = kms::key("alias/eks/myeks5w");
            let encrypted = eks::cluster("myeks5w").secrets_key == key.arn;
            lab::destroy(p);
            let alias = "";
            try { kms::key("alias/eks/myeks5w"); } catch (e) { alias = e.code; }
            let role = "";
            try { iam::role("myeks5w-node-role"); } catch (e) { role = e.code; }
            #{ made: made.filter(|m| m.starts_with("KMS") || m.starts_with("IAM") || m.starts_with("Elastic")),
               encrypted: encrypted, after: kms::key(key.key_id).state, alias: alias, role: role,
               eips: ec2::addresses().len() }"#,
        ])
        .run()
        .expect_code(0);
    let out: serde_json::Value = serde_json::from_str(&out.stdout()).expect("json");
    assert_eq!(
        out["made"],
        serde_json::json!([
            "IAM role myeks5w-cluster-role",
            "IAM role myeks5w-node-role",
            "Elastic IP myeks5w-nat-eip",
            "KMS key alias/eks/myeks5w",
            "IAM OIDC provider"
        ])
    );
    assert_eq!(out["encrypted"], true);
    assert_eq!(
        out["after"], "PendingDeletion",
        "KMS deletes no key at once"
    );
    assert_eq!(out["alias"], "NotFoundException");
    assert_eq!(out["role"], "NoSuchEntity");
    assert_eq!(out["eips"], 0);
}

#[test]
fn deploying_a_deployed_lab_creates_nothing() {
    let report = report_with("runbooks/aws/deploy.rhai", &[], 0);
    assert_eq!(report["steps"][0]["virtual_ms"], 0, "nothing to wait for");
}

#[test]
fn bad_input_gets_aws_error_codes_that_name_the_resource() {
    let report = report_with("runbooks/aws/errors.rhai", &[], 0);
    with_snapshots!({ insta::assert_json_snapshot!("aws-errors", report) });
}

fn eval_err(script: &str, faults: &[&str]) -> String {
    let mut args = vec!["eval", script];
    for fault in faults {
        args.extend(["--fault", fault]);
    }
    Runbook::new().args(args).run().expect_code(1).stderr()
}

#[test]
fn injected_throttling_and_server_errors_come_back_with_each_services_code() {
    let eks = eval_err(r#"eks::cluster("myeks5w")"#, &["aws-throttle=1.0"]);
    assert!(eks.contains("ThrottlingException"), "{eks}");
    let ec2 = eval_err(r#"ec2::vpcs()"#, &["aws-5xx=1.0"]);
    assert!(ec2.contains("InternalError"), "{ec2}");
    let iam = eval_err(r#"iam::oidc_providers()"#, &["aws-throttle=1.0"]);
    assert!(iam.contains("Throttling"), "{iam}");
}

#[test]
fn a_throttled_share_of_calls_is_retried_by_the_sdk() {
    // One call in ten throttled: the SDK's standard retries absorb them, so the baseline passes.
    let report = report_with(
        "runbooks/aws/lab-baseline.rhai",
        &["--fault", "aws-throttle=0.1"],
        0,
    );
    assert_eq!(report["status"], "passed");
}

#[test]
fn injected_latency_slows_every_call() {
    let started = Instant::now();
    Runbook::new()
        .args(["eval", "ec2::vpcs().len()", "--fault", "aws-latency=400ms"])
        .run()
        .expect_code(0);
    assert!(
        started.elapsed().as_millis() >= 400,
        "one call waited at least the added latency"
    );
}

#[test]
fn injected_kube_latency_slows_every_request_exec_included() {
    let started = Instant::now();
    let out = Runbook::new()
        .args([
            "eval",
            r#"let p = k8s::pods(#{ namespace: "kube-system" })[0]; k8s::exec(p.name, ["hostname"], #{ namespace: "kube-system" }).exit_code"#,
            "--fault",
            "kube-latency=150ms",
        ])
        .run()
        .expect_code(0)
        .stdout();
    assert_eq!(out.trim(), "0");
    // Discovery, the pod list and the exec each wait.
    assert!(
        started.elapsed().as_millis() >= 450,
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_bad_fault_is_a_usage_error() {
    let stderr = Runbook::new()
        .args(["eval", "1", "--fault", "aws-throttle=2"])
        .run()
        .expect_code(2)
        .stderr();
    assert!(stderr.contains("from 0.0 to 1.0"), "{stderr}");
    let stderr = Runbook::new()
        .args(["eval", "1", "--fault", "disk-full=1"])
        .run()
        .expect_code(2)
        .stderr();
    assert!(stderr.contains("unknown fault `disk-full`"), "{stderr}");
}

#[test]
fn the_cost_meter_reproduces_the_labs_six_dollars_a_day() {
    let out = Runbook::new()
        .args([
            "eval",
            "--json",
            "let r = cost::report(); #{ daily: r.daily_rate_usd, kinds: r.lines.map(|l| l.kind), prices: cost::prices().map(|p| p.kind) }",
        ])
        .run()
        .expect_code(0)
        .stdout();
    let value: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(value["daily"], 6.0);
    assert_eq!(
        value["kinds"],
        serde_json::json!(["nat-gateway", "eks-cluster", "t3.medium", "t3.medium"])
    );
    assert_eq!(
        value["prices"],
        serde_json::json!(["eks-cluster", "nat-gateway", "t3.medium", "g5.xlarge"])
    );
}

fn aws_cli(lab: &LabServer, args: &[&str]) -> (bool, String) {
    let output = lab.aws(&[args, &["--output", "json"]].concat());
    let text = String::from_utf8_lossy(if output.status.success() {
        &output.stdout
    } else {
        &output.stderr
    })
    .into_owned();
    (output.status.success(), text)
}

#[test]
fn the_aws_cli_creates_a_cluster_on_an_empty_twin() {
    if !aws_cli_available() {
        return;
    }
    let lab = LabServer::start_with("0.001", &["--scenario", "empty"]);
    let (ok, vpc) = aws_cli(
        &lab,
        &["ec2", "create-vpc", "--cidr-block", "192.168.0.0/16"],
    );
    assert!(ok, "{vpc}");
    let vpc: serde_json::Value = serde_json::from_str(&vpc).expect("JSON");
    let vpc_id = vpc["Vpc"]["VpcId"].as_str().expect("an id").to_string();
    assert_eq!(vpc_id, "vpc-0abc0000", "the seed's id for the seed's CIDR");
    let mut subnets = Vec::new();
    for (cidr, zone) in [
        ("192.168.12.0/22", "ap-northeast-2a"),
        ("192.168.20.0/22", "ap-northeast-2c"),
    ] {
        let (ok, out) = aws_cli(
            &lab,
            &[
                "ec2",
                "create-subnet",
                "--vpc-id",
                &vpc_id,
                "--cidr-block",
                cidr,
                "--availability-zone",
                zone,
            ],
        );
        assert!(ok, "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        subnets.push(v["Subnet"]["SubnetId"].as_str().expect("an id").to_string());
    }
    let (ok, out) = aws_cli(
        &lab,
        &[
            "eks",
            "create-cluster",
            "--name",
            "drill",
            "--role-arn",
            "arn:aws:iam::123456789012:role/eks",
            "--resources-vpc-config",
            &format!("subnetIds={}", subnets.join(",")),
        ],
    );
    assert!(ok, "{out}");
    let created: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(created["cluster"]["status"], "CREATING");
    lab.admin("advance?by=9m23s");
    let (_, out) = aws_cli(&lab, &["eks", "describe-cluster", "--name", "drill"]);
    let described: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        described["cluster"]["status"], "CREATING",
        "not yet at 9 m 23 s"
    );
    lab.admin("advance?by=2s");
    let (_, out) = aws_cli(&lab, &["eks", "describe-cluster", "--name", "drill"]);
    let described: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        described["cluster"]["status"], "ACTIVE",
        "ACTIVE after 9 m 24 s"
    );
    let (ok, out) = aws_cli(&lab, &["ec2", "delete-vpc", "--vpc-id", &vpc_id]);
    assert!(!ok && out.contains("DependencyViolation"), "{out}");
    lab.admin("faults?set=aws-throttle=1.0");
    let (ok, out) = aws_cli(&lab, &["eks", "list-clusters"]);
    assert!(!ok && out.contains("ThrottlingException"), "{out}");
}
