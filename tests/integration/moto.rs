//! Our AWS clients against moto_server, an AWS emulator nobody here wrote: the clients are not
//! tuned to the twin. Resources are made with the aws CLI, read and changed through runbook.

use std::process::{Child, Command, Stdio};

use crate::support::{Runbook, free_port, gate};

pub struct Moto {
    child: Child,
    pub url: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// moto_server on a free port, started; None (or a failure in CI) only when it is not
/// installed: once it is, a failure to start fails the test.
pub fn moto() -> Option<Moto> {
    let installed = Command::new("moto_server")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    gate(installed.then_some(()), || {
        "moto_server is not installed (pip install 'moto[server]')".into()
    })?;
    let port = free_port();
    let child = Command::new("moto_server")
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        // AWS's managed policies (AmazonEKSClusterPolicy, ...), which moto leaves out unless
        // asked: attaching one that is not there is NoSuchEntity, as on AWS.
        .env("MOTO_IAM_LOAD_MANAGED_POLICIES", "true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("moto_server starts");
    // Held from here on, so that it is stopped however this ends.
    let moto = Moto {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(moto);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("moto_server did not start on {}", moto.url);
}

fn aws(moto: &Moto, args: &[&str]) -> String {
    let output = Command::new("aws")
        .args(["--endpoint-url", &moto.url, "--output", "text"])
        .args(args)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_DEFAULT_REGION", "ap-northeast-2")
        .output()
        .expect("the aws CLI runs");
    assert!(
        output.status.success(),
        "aws {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

fn eval(moto: &Moto, script: &str) -> String {
    let ran = Runbook::new()
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .args(["eval", "--json", "--aws-endpoint", &moto.url, script])
        .run();
    assert_eq!(ran.code(), 0, "{script}\n{}", ran.stderr());
    ran.stdout()
}

#[test]
fn eks_ec2_and_iam_read_and_change_moto_resources() {
    let Some(moto) = moto() else { return };
    let vpc = aws(
        &moto,
        &[
            "ec2",
            "create-vpc",
            "--cidr-block",
            "10.0.0.0/16",
            "--query",
            "Vpc.VpcId",
        ],
    );
    let subnet = aws(
        &moto,
        &[
            "ec2",
            "create-subnet",
            "--vpc-id",
            &vpc,
            "--cidr-block",
            "10.0.1.0/24",
            "--availability-zone",
            "ap-northeast-2a",
            "--query",
            "Subnet.SubnetId",
        ],
    );
    let group = aws(
        &moto,
        &[
            "ec2",
            "create-security-group",
            "--group-name",
            "drill",
            "--description",
            "drill",
            "--vpc-id",
            &vpc,
            "--query",
            "GroupId",
        ],
    );
    aws(
        &moto,
        &[
            "eks",
            "create-cluster",
            "--name",
            "moto",
            "--role-arn",
            "arn:aws:iam::123456789012:role/eks",
            "--resources-vpc-config",
            &format!("subnetIds={subnet},securityGroupIds={group}"),
        ],
    );
    aws(
        &moto,
        &[
            "eks",
            "create-nodegroup",
            "--cluster-name",
            "moto",
            "--nodegroup-name",
            "gpu",
            "--node-role",
            "arn:aws:iam::123456789012:role/node",
            "--subnets",
            &subnet,
            "--scaling-config",
            "minSize=0,maxSize=2,desiredSize=0",
        ],
    );
    aws(
        &moto,
        &[
            "iam",
            "create-open-id-connect-provider",
            "--url",
            "https://oidc.example.com/id/ABC",
            "--client-id-list",
            "sts.amazonaws.com",
            "--thumbprint-list",
            "0000000000000000000000000000000000000000",
        ],
    );

    let cluster: serde_json::Value = serde_json::from_str(&eval(&moto, r#"let c = eks::cluster("moto"); #{ status: c.status, groups: c.resources_vpc_config.security_group_ids }"#)).expect("json");
    assert_eq!(
        cluster,
        serde_json::json!({"status": "ACTIVE", "groups": [group]})
    );
    let nodegroup: serde_json::Value = serde_json::from_str(&eval(
        &moto,
        r#"eks::nodegroup("moto", "gpu").scaling_config"#,
    ))
    .expect("json");
    assert_eq!(
        nodegroup,
        serde_json::json!({"desired_size": 0, "max_size": 2, "min_size": 0})
    );
    let scaled: serde_json::Value = serde_json::from_str(&eval(
        &moto,
        r#"eks::scale_nodegroup("moto", "gpu", 2, #{ wait: false }).type"#,
    ))
    .expect("json");
    assert_eq!(scaled, "ConfigUpdate");
    assert_eq!(
        aws(
            &moto,
            &[
                "eks",
                "describe-nodegroup",
                "--cluster-name",
                "moto",
                "--nodegroup-name",
                "gpu",
                "--query",
                "nodegroup.scalingConfig.desiredSize"
            ]
        ),
        "2"
    );

    let rule = format!(
        r#"ec2::authorize("{group}", #{{ protocol: "tcp", ports: "1025-65535", source: "self" }}); ec2::rules("{group}").filter(|r| r.direction == "ingress")"#
    );
    let rules: serde_json::Value = serde_json::from_str(&eval(&moto, &rule)).expect("json");
    assert_eq!(
        (
            rules[0]["from_port"].as_i64(),
            rules[0]["to_port"].as_i64(),
            rules[0]["source"].as_str()
        ),
        (Some(1025), Some(65535), Some("self"))
    );
    let revoke = format!(
        r#"ec2::revoke("{group}", #{{ protocol: "tcp", ports: "1025-65535", source: "self" }}); ec2::rules("{group}").filter(|r| r.direction == "ingress").len()"#
    );
    assert_eq!(eval(&moto, &revoke).trim(), "0");

    let provider: serde_json::Value = serde_json::from_str(&eval(
        &moto,
        r#"iam::oidc_provider_for("https://oidc.example.com/id/ABC").client_ids"#,
    ))
    .expect("json");
    assert_eq!(provider, serde_json::json!(["sts.amazonaws.com"]));
    let missing = Runbook::new()
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .args([
            "eval",
            "--aws-endpoint",
            &moto.url,
            r#"eks::cluster("nope")"#,
        ])
        .run()
        .expect_code(1);
    assert!(
        missing.stderr().contains("ResourceNotFoundException"),
        "{}",
        missing.stderr()
    );
}

#[test]
fn the_blueprint_primitives_create_wait_and_delete_on_moto() {
    let Some(moto) = moto() else { return };
    let script =
        std::fs::read_to_string(crate::support::repo_root().join("tests/data/moto-lifecycle.rhai"))
            .expect("the script is in the repository");
    let out: serde_json::Value = serde_json::from_str(&eval(&moto, &script)).expect("JSON");
    assert_eq!(out["cluster"], "ACTIVE", "{out}");
    assert_eq!(out["groups"], 1);
    assert_eq!(out["vpc"], true);
    assert_eq!(out["provider"], serde_json::json!(["sts.amazonaws.com"]));
    assert_eq!(out["ng"][0]["key"], "nvidia.com/gpu");
    assert_eq!(
        out["nat_eip"], true,
        "the NAT gateway holds the Elastic IP: {out}"
    );
    assert_eq!(out["eip_named"], serde_json::json!(["drill-nat-eip"]));
    assert_eq!(out["role_trust"], "eks.amazonaws.com");
    assert_eq!(out["node_policies"], 3);
    assert_eq!(out["key_state"], "Enabled");
    assert_eq!(out["cluster_key"], true, "the cluster's Secrets key: {out}");
    assert_eq!(
        out["delete_attached"], "DeleteConflict",
        "IAM refuses to delete a role with policies attached"
    );
    assert_eq!(
        out["after"],
        serde_json::json!({"clusters": [], "vpcs": 0, "eips": 0, "role": "NoSuchEntity", "key": "PendingDeletion"}),
        "everything made was deleted again"
    );
}

/// Launch templates (EFA interfaces by network card, a placement group) made, read back in one
/// DescribeLaunchTemplateVersions and deleted on moto; and moto's DescribeInstanceTypes, built
/// from AWS's own answers, agrees with the twin's catalog on the GPU types it knows. (moto has
/// no placement groups: CreatePlacementGroup is "not implemented" there.)
#[test]
fn launch_templates_and_instance_types_on_moto_agree_with_the_twin() {
    let Some(moto) = moto() else { return };
    let script = r#"
ec2::create_launch_template(#{ name: "p5-efa", placement_group: "p5-cluster", efa_interfaces: 4, security_groups: [] });
let made = ec2::launch_templates();
ec2::delete_launch_template("p5-efa");
#{ made: made.map(|t| #{ name: t.name, placement_group: t.placement_group, efa: t.efa_interfaces,
        cards: t.interfaces.map(|i| `${i.network_card_index}/${i.device_index}/${i.interface_type}`) }),
   after: ec2::launch_templates().len() }"#;
    let out: serde_json::Value = serde_json::from_str(&eval(&moto, script)).expect("JSON");
    assert_eq!(
        out,
        serde_json::json!({
            "made": [{"name": "p5-efa", "placement_group": "p5-cluster", "efa": 4,
                      "cards": ["0/0/efa", "1/1/efa", "2/1/efa", "3/1/efa"]}],
            "after": 0,
        })
    );

    let types = r#"ec2::instance_types(["p5.48xlarge", "p4d.24xlarge", "g5.xlarge", "g6e.12xlarge"]).map(|t|
    #{ t: t.instance_type, gpus: t.gpu_count, vcpus: t.vcpus, memory: t.memory_mib, gpu_memory: t.total_gpu_memory_mib,
       efa: t.efa_supported, efa_interfaces: t.maximum_efa_interfaces, cards: t.maximum_network_cards })"#;
    let on_moto: serde_json::Value = serde_json::from_str(&eval(&moto, types)).expect("JSON");
    let on_twin = Runbook::new()
        .args(["eval", "--json", types])
        .run()
        .expect_code(0)
        .stdout();
    let on_twin: serde_json::Value = serde_json::from_str(&on_twin).expect("JSON");
    assert_eq!(on_moto.as_array().map(Vec::len), Some(4), "{on_moto}");
    assert_eq!(on_moto, on_twin, "moto's instance types and the catalog's");
}

#[test]
fn a_reboot_goes_through_on_moto_and_an_unknown_instance_is_refused_as_on_the_twin() {
    let Some(moto) = moto() else { return };
    let image = aws(
        &moto,
        &[
            "ec2",
            "describe-images",
            "--owners",
            "amazon",
            "--query",
            "Images[0].ImageId",
        ],
    );
    let instance = aws(
        &moto,
        &[
            "ec2",
            "run-instances",
            "--image-id",
            &image,
            "--instance-type",
            "t3.micro",
            "--query",
            "Instances[0].InstanceId",
        ],
    );
    let unknown = r#"let code = "rebooted"; try { ec2::reboot("i-0123456789abcdef0"); } catch (e) { code = e.code; } code"#;
    let script = format!(r#"ec2::reboot("{instance}"); {unknown}"#);
    // Outside the twin a reboot is a disruption: refused until --disrupt names it.
    let refused = Runbook::new()
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .args(["eval", "--aws-endpoint", &moto.url, &script])
        .run();
    assert_ne!(refused.code(), 0);
    assert!(
        refused
            .stderr()
            .contains(&format!("pass --disrupt instance/{instance}")),
        "{}",
        refused.stderr()
    );
    let ran = Runbook::new()
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .args([
            "eval",
            "--json",
            "--disrupt",
            "instance/*",
            "--aws-endpoint",
            &moto.url,
            &script,
        ])
        .run();
    assert_eq!(ran.code(), 0, "{}", ran.stderr());
    assert_eq!(ran.stdout().trim(), "\"InvalidInstanceID.NotFound\"");
    let state = aws(
        &moto,
        &[
            "ec2",
            "describe-instances",
            "--instance-ids",
            &instance,
            "--query",
            "Reservations[0].Instances[0].State.Name",
        ],
    );
    assert_eq!(state, "running");
    let on_twin = Runbook::new()
        .args(["eval", "--json", unknown])
        .run()
        .expect_code(0)
        .stdout();
    assert_eq!(on_twin.trim(), "\"InvalidInstanceID.NotFound\"");
}
