//! The aws CLI against `runbook lab serve`: EKS, EC2 and IAM as the lab report reads them,
//! node group scaling that adds and removes Kubernetes nodes, and AWS's error codes.

use std::process::Command;

use crate::support::{LabServer, aws_cli_available, kubectl};

struct Aws<'a> {
    lab: &'a LabServer,
}

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Aws<'_> {
    fn run(&self, args: &[&str]) -> Output {
        let output = self.lab.aws(args);
        Output {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs and parses the JSON output; asserts success.
    fn json(&self, args: &[&str]) -> serde_json::Value {
        let out = self.run(&[args, &["--output", "json"]].concat());
        assert_eq!(
            out.code,
            0,
            "aws {}\n{}{}",
            args.join(" "),
            out.stdout,
            out.stderr
        );
        serde_json::from_str(&out.stdout).unwrap_or(serde_json::Value::Null)
    }

    /// Asserts failure with an AWS error code.
    fn fails_with(&self, args: &[&str], code: &str) -> String {
        let out = self.run(args);
        assert_ne!(out.code, 0, "aws {} should fail", args.join(" "));
        assert!(
            out.stderr.contains(&format!("({code})")),
            "aws {}: expected {code} in {}",
            args.join(" "),
            out.stderr
        );
        out.stderr
    }
}

fn lab() -> Option<LabServer> {
    if !aws_cli_available() {
        return None;
    }
    Some(LabServer::start("600"))
}

#[test]
fn eks_describes_the_lab_cluster_node_groups_and_add_ons() {
    let Some(lab) = lab() else { return };
    let aws = Aws { lab: &lab };
    let cluster = aws.json(&["eks", "describe-cluster", "--name", "myeks5w"])["cluster"].clone();
    assert_eq!(
        (
            cluster["status"].as_str(),
            cluster["version"].as_str(),
            cluster["platformVersion"].as_str()
        ),
        (Some("ACTIVE"), Some("1.35"), Some("eks.10"))
    );
    assert_eq!(
        cluster["endpoint"],
        "https://ABCDEF1234567890.gr7.ap-northeast-2.eks.amazonaws.com"
    );
    assert_eq!(
        cluster["identity"]["oidc"]["issuer"],
        "https://oidc.eks.ap-northeast-2.amazonaws.com/id/ABCDEF1234567890"
    );
    assert_eq!(
        cluster["resourcesVpcConfig"]["clusterSecurityGroupId"],
        "sg-0abc5678"
    );
    assert_eq!(
        cluster["logging"]["clusterLogging"][0]["types"],
        serde_json::json!(["api", "scheduler"])
    );
    assert_eq!(
        aws.json(&["eks", "list-nodegroups", "--cluster-name", "myeks5w"])["nodegroups"],
        serde_json::json!(["gpu", "primary"])
    );
    let gpu = aws.json(&[
        "eks",
        "describe-nodegroup",
        "--cluster-name",
        "myeks5w",
        "--nodegroup-name",
        "gpu",
    ])["nodegroup"]
        .clone();
    assert_eq!(
        gpu["scalingConfig"],
        serde_json::json!({"minSize": 0, "maxSize": 2, "desiredSize": 0})
    );
    assert_eq!(
        (gpu["amiType"].as_str(), gpu["instanceTypes"][0].as_str()),
        (Some("AL2023_x86_64_NVIDIA"), Some("g5.xlarge"))
    );
    assert_eq!(
        gpu["labels"],
        serde_json::json!({"tier": "gpu", "nvidia.com/gpu": "true"})
    );
    assert_eq!(
        gpu["taints"],
        serde_json::json!([{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}])
    );
    assert_eq!(gpu["subnets"], serde_json::json!(["subnet-0abc9012"]));
    let addons = aws.json(&["eks", "list-addons", "--cluster-name", "myeks5w"])["addons"].clone();
    assert_eq!(addons.as_array().map(Vec::len), Some(7));
    let vpc_cni = aws.json(&[
        "eks",
        "describe-addon",
        "--cluster-name",
        "myeks5w",
        "--addon-name",
        "vpc-cni",
    ])["addon"]
        .clone();
    assert_eq!(
        (vpc_cni["addonVersion"].as_str(), vpc_cni["status"].as_str()),
        (Some("v1.21.1-eksbuild.7"), Some("ACTIVE"))
    );
    aws.fails_with(
        &["eks", "describe-cluster", "--name", "nope"],
        "ResourceNotFoundException",
    );
    aws.fails_with(
        &[
            "eks",
            "describe-nodegroup",
            "--cluster-name",
            "myeks5w",
            "--nodegroup-name",
            "nope",
        ],
        "ResourceNotFoundException",
    );
    aws.fails_with(
        &[
            "eks",
            "describe-addon",
            "--cluster-name",
            "myeks5w",
            "--addon-name",
            "nope",
        ],
        "ResourceNotFoundException",
    );
}

#[test]
fn the_node_security_group_baseline_and_the_block_experiment_rules() {
    let Some(lab) = lab() else { return };
    let aws = Aws { lab: &lab };
    let groups = aws.json(&[
        "ec2",
        "describe-security-groups",
        "--group-ids",
        "sg-0abc3456",
        "sg-0abc1234",
        "sg-0abc5678",
    ])["SecurityGroups"]
        .clone();
    let node = groups
        .as_array()
        .and_then(|g| g.iter().find(|g| g["GroupId"] == "sg-0abc3456"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        node["IpPermissions"].as_array().map(Vec::len),
        Some(10),
        "10 ingress permissions: {node}"
    );
    assert_eq!(
        node["IpPermissionsEgress"].as_array().map(Vec::len),
        Some(1)
    );
    let aux = groups
        .as_array()
        .and_then(|g| g.iter().find(|g| g["GroupId"] == "sg-0abc1234"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(aux["GroupName"], "myeks5w-node-group-sg");
    assert_eq!(
        aux["IpPermissions"][0]["IpRanges"][0]["CidrIp"],
        "192.168.0.0/16"
    );
    let rules = aws.json(&[
        "ec2",
        "describe-security-group-rules",
        "--filters",
        "Name=group-id,Values=sg-0abc3456",
    ])["SecurityGroupRules"]
        .clone();
    assert_eq!(rules.as_array().map(Vec::len), Some(11));

    let self_rule = [
        "--group-id",
        "sg-0abc3456",
        "--protocol",
        "tcp",
        "--port",
        "1025-65535",
        "--source-group",
        "sg-0abc3456",
    ];
    aws.json(&[&["ec2", "revoke-security-group-ingress"][..], &self_rule].concat());
    aws.fails_with(
        &[&["ec2", "revoke-security-group-ingress"][..], &self_rule].concat(),
        "InvalidPermission.NotFound",
    );
    aws.fails_with(
        &[
            "ec2",
            "revoke-security-group-ingress",
            "--group-id",
            "sg-0abc1234",
            "--security-group-rule-ids",
            "sgr-0doesnotexist",
        ],
        "InvalidSecurityGroupRuleId.NotFound",
    );
    aws.json(&[
        "ec2",
        "revoke-security-group-ingress",
        "--group-id",
        "sg-0abc1234",
        "--security-group-rule-ids",
        "sgr-0a00000000000001",
    ]);
    let aux_now = aws.json(&[
        "ec2",
        "describe-security-groups",
        "--group-ids",
        "sg-0abc1234",
    ])["SecurityGroups"][0]["IpPermissions"]
        .clone();
    assert_eq!(
        aux_now,
        serde_json::json!([]),
        "the auxiliary VPC allow is gone"
    );
    let restored =
        aws.json(&[&["ec2", "authorize-security-group-ingress"][..], &self_rule].concat());
    assert_eq!(restored["SecurityGroupRules"][0]["FromPort"], 1025);
    aws.fails_with(
        &[&["ec2", "authorize-security-group-ingress"][..], &self_rule].concat(),
        "InvalidPermission.Duplicate",
    );
    aws.json(&[
        "ec2",
        "authorize-security-group-ingress",
        "--group-id",
        "sg-0abc1234",
        "--ip-permissions",
        "IpProtocol=-1,IpRanges=[{CidrIp=192.168.0.0/16}]",
    ]);
    let node_rules = aws.json(&[
        "ec2",
        "describe-security-groups",
        "--group-ids",
        "sg-0abc3456",
    ])["SecurityGroups"][0]["IpPermissions"]
        .clone();
    assert_eq!(
        node_rules.as_array().map(Vec::len),
        Some(10),
        "back to the baseline"
    );
    aws.fails_with(
        &[
            "ec2",
            "describe-security-groups",
            "--group-ids",
            "sg-0000dead",
        ],
        "InvalidGroup.NotFound",
    );
}

#[test]
fn iam_has_the_clusters_oidc_provider() {
    let Some(lab) = lab() else { return };
    let aws = Aws { lab: &lab };
    let list =
        aws.json(&["iam", "list-open-id-connect-providers"])["OpenIDConnectProviderList"].clone();
    let arn = list[0]["Arn"].as_str().unwrap_or_default().to_string();
    assert_eq!(
        arn,
        "arn:aws:iam::123456789012:oidc-provider/oidc.eks.ap-northeast-2.amazonaws.com/id/ABCDEF1234567890"
    );
    let provider = aws.json(&[
        "iam",
        "get-open-id-connect-provider",
        "--open-id-connect-provider-arn",
        &arn,
    ]);
    assert_eq!(
        provider["ClientIDList"],
        serde_json::json!(["sts.amazonaws.com"])
    );
    assert_eq!(
        provider["ThumbprintList"],
        serde_json::json!(["06b25927c42a721631c1efd9431e648fa62e1e39"])
    );
    aws.fails_with(
        &[
            "iam",
            "get-open-id-connect-provider",
            "--open-id-connect-provider-arn",
            "arn:aws:iam::123456789012:oidc-provider/nope",
        ],
        "NoSuchEntity",
    );
}

#[test]
fn the_lab_roles_and_the_nat_gateways_elastic_ip_read_and_refuse_as_on_aws() {
    let Some(lab) = lab() else { return };
    let aws = Aws { lab: &lab };
    let role = aws.json(&["iam", "get-role", "--role-name", "myeks5w-cluster-role"]);
    assert_eq!(
        role["Role"]["Arn"],
        "arn:aws:iam::123456789012:role/myeks5w-cluster-role"
    );
    // The CLI decodes the URL-encoded document IAM sends.
    assert_eq!(
        role["Role"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]["Service"],
        "eks.amazonaws.com"
    );
    let attached = aws.json(&[
        "iam",
        "list-attached-role-policies",
        "--role-name",
        "myeks5w-node-role",
    ]);
    assert_eq!(
        attached["AttachedPolicies"].as_array().map(Vec::len),
        Some(4),
        "{attached}"
    );
    aws.fails_with(
        &["iam", "delete-role", "--role-name", "myeks5w-node-role"],
        "DeleteConflict",
    );
    aws.fails_with(
        &[
            "iam",
            "attach-role-policy",
            "--role-name",
            "myeks5w-node-role",
            "--policy-arn",
            "arn:aws:iam::aws:policy/NoSuchPolicy",
        ],
        "NoSuchEntity",
    );
    let addresses = aws.json(&["ec2", "describe-addresses"]);
    assert_eq!(
        addresses["Addresses"][0]["AllocationId"],
        "eipalloc-0abc0000def00001"
    );
    let nat = aws.json(&["ec2", "describe-nat-gateways"]);
    assert_eq!(
        nat["NatGateways"][0]["NatGatewayAddresses"][0]["AllocationId"],
        "eipalloc-0abc0000def00001"
    );
    aws.fails_with(
        &[
            "ec2",
            "release-address",
            "--allocation-id",
            "eipalloc-0abc0000def00001",
        ],
        "InvalidIPAddress.InUse",
    );
    let allocated = aws.json(&["ec2", "allocate-address", "--domain", "vpc"]);
    let id = allocated["AllocationId"].as_str().unwrap_or_default();
    assert!(id.starts_with("eipalloc-"), "{allocated}");
    aws.json(&["ec2", "release-address", "--allocation-id", id]);
}

#[test]
fn scaling_the_gpu_node_group_adds_and_removes_kubernetes_nodes() {
    let Some(lab) = lab() else { return };
    let aws = Aws { lab: &lab };
    let update = aws.json(&[
        "eks",
        "update-nodegroup-config",
        "--cluster-name",
        "myeks5w",
        "--nodegroup-name",
        "gpu",
        "--scaling-config",
        "desiredSize=2",
    ])["update"]
        .clone();
    assert_eq!(
        (update["status"].as_str(), update["type"].as_str()),
        (Some("InProgress"), Some("ConfigUpdate"))
    );
    let id = update["id"].as_str().unwrap_or_default().to_string();
    aws.fails_with(
        &[
            "eks",
            "update-nodegroup-config",
            "--cluster-name",
            "myeks5w",
            "--nodegroup-name",
            "gpu",
            "--scaling-config",
            "desiredSize=3",
        ],
        "InvalidParameterException",
    );
    lab.admin("advance?by=5m");
    let done = aws.json(&[
        "eks",
        "describe-update",
        "--name",
        "myeks5w",
        "--nodegroup-name",
        "gpu",
        "--update-id",
        &id,
    ])["update"]
        .clone();
    assert_eq!(done["status"], "Successful");
    if let Some(binary) = kubectl("1.32") {
        let nodes = Command::new(binary)
            .arg("--kubeconfig")
            .arg(&lab.kubeconfig)
            .args(["get", "nodes", "-l", "tier=gpu", "-o", "jsonpath={range .items[*]}{.metadata.labels.topology\\.kubernetes\\.io/zone} {.spec.taints[0].key}{\"\\n\"}{end}"])
            .output()
            .expect("kubectl runs");
        let text = String::from_utf8_lossy(&nodes.stdout);
        assert_eq!(
            text, "ap-northeast-2a nvidia.com/gpu\nap-northeast-2a nvidia.com/gpu\n",
            "two GPU nodes in the GPU subnet's zone with the taint"
        );
    }
    let instances = aws.json(&[
        "ec2",
        "describe-instances",
        "--query",
        "Reservations[].Instances[?InstanceType=='g5.xlarge'].State.Name[]",
    ]);
    assert_eq!(instances, serde_json::json!(["running", "running"]));
    aws.json(&[
        "eks",
        "update-nodegroup-config",
        "--cluster-name",
        "myeks5w",
        "--nodegroup-name",
        "gpu",
        "--scaling-config",
        "desiredSize=0",
    ]);
    lab.admin("advance?by=5m");
    let gone = aws.json(&[
        "ec2",
        "describe-instances",
        "--query",
        "Reservations[].Instances[?InstanceType=='g5.xlarge'].State.Name[]",
    ]);
    assert_eq!(gone, serde_json::json!(["terminated", "terminated"]));
}
