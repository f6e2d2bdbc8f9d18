//! Every EKS GPU instance from one catalog: the twin answers DescribeInstanceTypes as AWS does
//! (held to moto_server's copy of real answers), runs a p5 node group with eight H100s as
//! Kubernetes resources, prices it, and the guards count its GPUs.

use crate::support::{LabServer, Runbook, assert_succeeded, aws_cli_available, helm_available};

/// What a runbook reads of the named types, without the placement strategies (moto lists
/// them as the region's, the twin as the type's).
const READ: &str = r#"ec2::instance_types(NAMES).map(|t| { t.remove("placement_strategies"); t })"#;

fn read_types(names: &[&str], extra: &[&str]) -> serde_json::Value {
    let list = format!("{names:?}");
    let out = Runbook::new()
        .args(["eval", "--json"])
        .args(extra)
        .arg(READ.replace("NAMES", &list))
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .run()
        .expect_code(0);
    serde_json::from_str(&out.stdout()).expect("JSON")
}

#[test]
fn the_twins_instance_types_are_what_moto_holds_of_aws_answers() {
    let Some(moto) = crate::moto::moto() else {
        return;
    };
    let names = ["p5.48xlarge", "p4d.24xlarge", "g5.xlarge", "g6e.xlarge"];
    let twin = read_types(&names, &[]);
    let real = read_types(&names, &["--aws-endpoint", &moto.url]);
    assert_eq!(
        twin, real,
        "the twin's catalog against moto's DescribeInstanceTypes"
    );
    assert_eq!(twin[0]["gpu_count"], 8);
    assert_eq!(twin[0]["gpus"][0]["name"], "H100");
    assert_eq!(twin[0]["maximum_efa_interfaces"], 32);
}

#[test]
fn the_aws_cli_reads_describe_instance_types_from_lab_serve() {
    if !aws_cli_available() {
        return;
    }
    let lab = LabServer::start("600");
    let out = lab.aws(&[
        "ec2",
        "describe-instance-types",
        "--instance-types",
        "p5.48xlarge",
        "g6e.12xlarge",
    ]);
    assert_succeeded(&out, "describe-instance-types");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let types = answer["InstanceTypes"].as_array().expect("InstanceTypes");
    assert_eq!(types.len(), 2);
    let p5 = types
        .iter()
        .find(|t| t["InstanceType"] == "p5.48xlarge")
        .expect("p5");
    assert_eq!(p5["GpuInfo"]["Gpus"][0]["Count"], 8);
    assert_eq!(p5["GpuInfo"]["Gpus"][0]["Name"], "H100");
    assert_eq!(p5["GpuInfo"]["TotalGpuMemoryInMiB"], 655360);
    assert_eq!(p5["NetworkInfo"]["EfaSupported"], true);
    assert_eq!(p5["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"], 32);
    assert_eq!(p5["VCpuInfo"]["DefaultVCpus"], 192);
    let unknown = lab.aws(&[
        "ec2",
        "describe-instance-types",
        "--instance-types",
        "p9.mega",
    ]);
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("InvalidInstanceType"),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
}

/// A p5 node group beside the lab's GPU group, with its labels and taints, scaled to 2.
const P5_GROUP: &str = r#"
import "gpu" as gpu;
let g = eks::nodegroup("myeks5w", "gpu");
let labels = g.labels; labels.tier = "p5";
eks::create_nodegroup("myeks5w", #{ name: "p5", instance_type: "p5.48xlarge", ami_type: "AL2023_x86_64_NVIDIA",
    desired: 0, min: 0, max: 4, subnets: g.subnets, node_role: g.node_role, labels: labels, taints: g.taints });
eks::wait_nodegroup_active("myeks5w", "p5");
"#;

#[test]
fn a_p5_node_group_runs_eight_h100s_as_resources_priced_from_the_catalog() {
    if !helm_available() {
        return;
    }
    let script = format!(
        r#"{P5_GROUP}
eks::scale_nodegroup("myeks5w", "p5", 2);
k8s::wait_nodes(#{{ labels: #{{ tier: "p5" }}, count: 2 }});
helm::apply(gpu::render_gpu_operator(#{{ chart: "charts/gpu-operator", chart_version: "" }}, true), #{{ namespace: "gpu-operator", wait: "10m" }});
wait_until(#{{ timeout: "5m", interval: "5s", what: "8 GPUs on each p5 node" }},
    || k8s::nodes(#{{ tier: "p5" }}).all(|n| n.allocatable["nvidia.com/gpu"] == "8"));
let n = k8s::nodes(#{{ tier: "p5" }})[0];
sleep("30m");
let p5 = cost::report().lines.filter(|l| l.kind == "p5.48xlarge");
#{{ cpu: n.capacity.cpu, gpus: n.allocatable["nvidia.com/gpu"], product: n.labels["nvidia.com/gpu.product"],
   memory: n.labels["nvidia.com/gpu.memory"], type: n.instance_type, priced: p5.map(|l| l.usd_per_hour),
   smi: nvml::query(#{{ nodes: #{{ tier: "p5" }} }}).map(|a| a.error) }}"#
    );
    let out = Runbook::new()
        .args(["eval", "--json", &script])
        .run()
        .expect_code(0);
    let seen: serde_json::Value = serde_json::from_str(&out.stdout()).expect("JSON");
    assert_eq!(seen["cpu"], "192");
    assert_eq!(seen["gpus"], "8");
    assert_eq!(seen["product"], "NVIDIA-H100-80GB-HBM3");
    assert_eq!(seen["memory"], "81559");
    assert_eq!(seen["type"], "p5.48xlarge");
    assert_eq!(seen["priced"], serde_json::json!([55.04, 55.04]));
    // nvidia-smi answers on both, through the project's parsers (what it shows: gpu_fabric.rs).
    assert_eq!(seen["smi"], serde_json::json!([null, null]));
}

#[test]
fn max_gpus_counts_the_catalogs_gpus_per_node_before_a_scale_up_is_sent() {
    let script = format!(
        r#"{P5_GROUP}
let refused = "";
try {{ eks::scale_nodegroup("myeks5w", "p5", 2); }} catch (e) {{ refused = e; }}
eks::scale_nodegroup("myeks5w", "p5", 1);
#{{ refused: refused, desired: eks::nodegroup("myeks5w", "p5").scaling_config.desired_size }}"#
    );
    let out = Runbook::new()
        .args(["eval", "--json", "--max-gpus", "8", &script])
        .run()
        .expect_code(0);
    let seen: serde_json::Value = serde_json::from_str(&out.stdout()).expect("JSON");
    let refused = seen["refused"].to_string();
    assert!(
        refused.contains("it asks for 16 GPUs (2 nodes) and --max-gpus is 8"),
        "{refused}"
    );
    assert_eq!(
        seen["desired"], 1,
        "one p5 node (8 GPUs) is within the limit"
    );
}

#[test]
fn a_plan_prices_a_p5_scale_up_and_shows_where_max_gpus_stops_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runbook = dir.path().join("p5.rhai");
    std::fs::write(
        &runbook,
        format!(
            r#"{P5_GROUP}
defer("p5 back to 0", || eks::scale_nodegroup("myeks5w", "p5", 0));
step("p5 up", || {{ eks::scale_nodegroup("myeks5w", "p5", 2); sleep("1h"); }});
"#
        ),
    )
    .expect("write");
    let plan = Runbook::new()
        .arg("plan")
        .arg(&runbook)
        .run()
        .expect_code(0)
        .stdout();
    let p5_lines: Vec<&str> = plan
        .lines()
        .filter(|l| l.contains("p5.48xlarge") && l.contains("(started by the run)"))
        .collect();
    assert_eq!(p5_lines.len(), 2, "{plan}");
    assert!(
        p5_lines.iter().all(|l| l.contains("$57.792")),
        "1.05 h at the catalog's $55.04: {plan}"
    );
    let guarded = Runbook::new()
        .arg("plan")
        .arg(&runbook)
        .args(["--max-gpus", "8"])
        .run()
        .stdout();
    assert!(
        guarded.contains("it asks for 16 GPUs (2 nodes) and --max-gpus is 8"),
        "{guarded}"
    );
}

#[test]
fn a_captured_lab_with_a_p5_group_rehearses_with_its_gpus_and_prices() {
    let lab = LabServer::start("600");
    Runbook::new()
        .lab_env(&lab)
        .args([
            "eval",
            "--aws-endpoint",
            &lab.aws_endpoint(),
            "--kubeconfig",
        ])
        .arg(&lab.kubeconfig)
        .arg(format!("{P5_GROUP}\n1"))
        .run()
        .expect_code(0);
    let dir = tempfile::tempdir().expect("temp dir");
    let captured = dir.path().join("lab-state.json");
    crate::capture::capture(&lab, &captured);
    drop(lab);
    let scenario = format!("@{}", captured.display());
    let script = r#"eks::scale_nodegroup("myeks5w", "p5", 2);
k8s::wait_nodes(#{ labels: #{ tier: "p5" }, count: 2 });
sleep("1h");
let n = k8s::nodes(#{ tier: "p5" });
#{ cpus: n.map(|x| x.capacity.cpu), type: n[0].instance_type,
   priced: cost::report().lines.filter(|l| l.kind == "p5.48xlarge").map(|l| l.usd_per_hour) }"#;
    let out = Runbook::new()
        .args(["eval", "--json", "--scenario", &scenario, script])
        .run()
        .expect_code(0);
    let seen: serde_json::Value = serde_json::from_str(&out.stdout()).expect("JSON");
    assert_eq!(seen["cpus"], serde_json::json!(["192", "192"]));
    assert_eq!(seen["type"], "p5.48xlarge");
    assert_eq!(seen["priced"], serde_json::json!([55.04, 55.04]));
}
