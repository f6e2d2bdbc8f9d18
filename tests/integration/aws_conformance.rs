//! The aws CLI against `runbook lab serve` where an independent probe (#54) found the twin
//! answering otherwise than AWS, EC2 and IAM here (EKS in aws_conformance_eks): instance ids,
//! TerminateInstances, DescribeInstances' page size, ICMP's all-types rule, IAM role names and
//! ListRoles. Each refusal in the service's words (sources in the twin's modules under
//! src/sim/aws), each valid call answered as AWS does.

use std::process::Output;

use crate::support::{LabServer, aws_cli_available};

/// A lab on a clock that moves only when told (`advance`), so an update is still in flight on
/// the next call.
pub(crate) fn lab() -> Option<LabServer> {
    aws_cli_available().then(|| LabServer::start("1"))
}

pub(crate) fn refused(out: &Output, code: &str, message: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let expected = format!("({code})");
    assert!(
        !out.status.success() && stderr.contains(&expected) && stderr.contains(message),
        "expected ({code}) {message}\ngot {stderr}"
    );
}

pub(crate) fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null)
}

pub(crate) const CLUSTER: &str = "myeks5w";

#[test]
fn ec2_answers_instance_ids_terminations_and_page_sizes_in_ec2_words() {
    let Some(lab) = lab() else { return };
    let ec2 = |args: &[&str]| lab.aws(&[&["ec2"][..], args].concat());
    for action in [
        "describe-instances",
        "reboot-instances",
        "terminate-instances",
    ] {
        refused(
            &ec2(&[action, "--instance-ids", "not-an-instance"]),
            "InvalidInstanceID.Malformed",
            "Invalid id: \"not-an-instance\"",
        );
        refused(
            &ec2(&[action, "--instance-ids", "i-0123456789abcdef0"]),
            "InvalidInstanceID.NotFound",
            "The instance ID 'i-0123456789abcdef0' does not exist",
        );
    }
    refused(
        &ec2(&[
            "describe-instances",
            "--instance-ids",
            "i-0123456789abcdef0",
            "i-0123456789abcdef1",
        ]),
        "InvalidInstanceID.NotFound",
        "The instance IDs 'i-0123456789abcdef0, i-0123456789abcdef1' do not exist",
    );
    refused(
        &ec2(&["describe-instances", "--max-results", "3", "--no-paginate"]),
        "InvalidParameterValue",
        "Value ( 3 ) for parameter maxResults is invalid. Expecting a value greater than 5.",
    );
    let seed = "i-0a1b2c3d4e5f60001";
    refused(
        &ec2(&[
            "describe-instances",
            "--instance-ids",
            seed,
            "--max-results",
            "10",
            "--no-paginate",
        ]),
        "InvalidParameterCombination",
        "The parameter instancesSet cannot be used with the parameter maxResults",
    );
    let all = json(&ec2(&[
        "describe-instances",
        "--query",
        "Reservations[].Instances[].InstanceId",
    ]));
    let page = json(&ec2(&[
        "describe-instances",
        "--max-results",
        "5",
        "--no-paginate",
    ]));
    let shown = page["Reservations"].as_array().map_or(0, Vec::len);
    assert_eq!(shown, all.as_array().map_or(0, Vec::len).min(5));
    refused(
        &ec2(&[
            "authorize-security-group-ingress",
            "--group-id",
            runbook::lab::NODE_SG,
            "--ip-permissions",
            "IpProtocol=icmp,FromPort=-1,ToPort=0,IpRanges=[{CidrIp=203.0.113.0/24}]",
        ]),
        "InvalidParameterValue",
        "ICMP code (0) must be -1 when the ICMP type is -1",
    );

    // A node group's instance terminated: it shuts down, and its Auto Scaling group replaces it.
    let primary = |state: &str| {
        let query = format!(
            "Reservations[].Instances[?Tags[?Key=='eks:nodegroup-name' && Value=='primary'] && State.Name=='{state}'].InstanceId[]"
        );
        json(&ec2(&["describe-instances", "--query", &query]))
            .as_array()
            .map_or(0, Vec::len)
    };
    let running = primary("running");
    let terminated = json(&ec2(&["terminate-instances", "--instance-ids", seed]));
    assert_eq!(
        terminated["TerminatingInstances"][0],
        serde_json::json!({
            "InstanceId": seed,
            "CurrentState": {"Code": 32, "Name": "shutting-down"},
            "PreviousState": {"Code": 16, "Name": "running"},
        })
    );
    lab.admin("advance?by=5m");
    assert_eq!(
        primary("running"),
        running,
        "the Auto Scaling group replaced it"
    );
    let gone = json(&ec2(&[
        "describe-instances",
        "--instance-ids",
        seed,
        "--query",
        "Reservations[0].Instances[0].State.Name",
    ]));
    assert_eq!(gone, "terminated");
}

#[test]
fn iam_holds_every_role_name_to_its_pattern_and_lists_roles() {
    let Some(lab) = lab() else { return };
    refused(
        &lab.aws(&["iam", "get-role", "--role-name", "bad name!"]),
        "ValidationError",
        r"1 validation error detected: Value 'bad name!' at 'roleName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\w+=,.@-]+",
    );
    let long = "r".repeat(65);
    refused(
        &lab.aws(&["iam", "delete-role", "--role-name", &long]),
        "ValidationError",
        &format!(
            "1 validation error detected: Value '{long}' at 'roleName' failed to satisfy constraint: Member must have length less than or equal to 64"
        ),
    );
    let policy = r#"{"Version":"2012-10-17","Statement":[]}"#;
    for name in ["lister-a", "lister-b"] {
        json(&lab.aws(&[
            "iam",
            "create-role",
            "--role-name",
            name,
            "--path",
            "/probe/",
            "--assume-role-policy-document",
            policy,
        ]));
    }
    let all = json(&lab.aws(&["iam", "list-roles"]));
    assert!(
        all["Roles"].as_array().is_some_and(|r| r.len() > 2),
        "{all}"
    );
    let under = json(&lab.aws(&[
        "iam",
        "list-roles",
        "--path-prefix",
        "/probe/",
        "--query",
        "Roles[].RoleName",
    ]));
    assert_eq!(under, serde_json::json!(["lister-a", "lister-b"]));
    let first = json(&lab.aws(&[
        "iam",
        "list-roles",
        "--path-prefix",
        "/probe/",
        "--max-items",
        "1",
    ]));
    assert_eq!(first["Roles"][0]["RoleName"], "lister-a");
    let token = first["NextToken"].as_str().unwrap_or_default();
    let second = json(&lab.aws(&[
        "iam",
        "list-roles",
        "--path-prefix",
        "/probe/",
        "--max-items",
        "1",
        "--starting-token",
        token,
    ]));
    assert_eq!(second["Roles"][0]["RoleName"], "lister-b");
}

/// moto_server copies EC2's words for several unknown instances (its TerminateInstances and
/// RebootInstances name them all; its DescribeInstances names one at a time, where EC2 and the
/// twin name all): the twin answers the same.
#[test]
fn moto_and_the_twin_name_unknown_instances_alike() {
    let Some(moto) = crate::moto::moto() else {
        return;
    };
    let Some(lab) = lab() else { return };
    let words = "The instance IDs 'i-0123456789abcdef0, i-0123456789abcdef1' do not exist";
    for action in ["terminate-instances", "reboot-instances"] {
        let args = [
            "ec2",
            action,
            "--instance-ids",
            "i-0123456789abcdef0",
            "i-0123456789abcdef1",
        ];
        let on_moto = std::process::Command::new("aws")
            .args(["--endpoint-url", &moto.url])
            .args(args)
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_DEFAULT_REGION", "ap-northeast-2")
            .output()
            .expect("the aws CLI runs");
        refused(&on_moto, "InvalidInstanceID.NotFound", words);
        refused(&lab.aws(&args), "InvalidInstanceID.NotFound", words);
    }
}
