//! The twin's GPU nodes through real kubectl: `kubectl exec -- nvidia-smi` in every format the
//! parsers read, answered as the real tool does on a g5.xlarge, and read back by `nvml::`.

use crate::support::{LabServer, Runbook, kubectl, kubectl_run};

const POD: &str = r#"{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "smi", "namespace": "default"},
 "spec": {"nodeSelector": {"tier": "gpu"},
          "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
          "containers": [{"name": "cuda", "image": "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04",
                          "command": ["sleep", "infinity"],
                          "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}]}}"#;

#[test]
fn kubectl_exec_nvidia_smi_on_a_gpu_node() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start("600");
    let endpoint = lab.aws_endpoint();
    Runbook::new().lab_env(&lab)
        .args(["eval", "--aws-endpoint", &endpoint, "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .arg(r#"eks::scale_nodegroup("myeks5w", "gpu", 1); k8s::wait_nodes(#{ labels: #{ tier: "gpu" }, count: 1, timeout: "15m" }).len()"#)
        .run()
        .expect_code(0);
    let dir = tempfile::tempdir().expect("temp dir");
    let manifest = dir.path().join("pod.json");
    std::fs::write(&manifest, POD).expect("write");
    let (code, _, err) = kubectl_run(&binary, &lab, &["apply", "-f", &manifest.to_string_lossy()]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = kubectl_run(
        &binary,
        &lab,
        &["wait", "--for=condition=Ready", "pod/smi", "--timeout=60s"],
    );
    assert_eq!(code, 0, "{err}");

    let (code, table, err) = kubectl_run(&binary, &lab, &["exec", "smi", "--", "nvidia-smi"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        table.contains("NVIDIA A10G") && table.contains("Driver Version: 580.95.05"),
        "{table}"
    );
    assert!(table.contains("23028MiB"), "{table}");

    let (_, list, _) = kubectl_run(&binary, &lab, &["exec", "smi", "--", "nvidia-smi", "-L"]);
    assert!(list.starts_with("GPU 0: NVIDIA A10G (UUID: GPU-"), "{list}");

    let (code, csv, err) = kubectl_run(
        &binary,
        &lab,
        &[
            "exec",
            "smi",
            "--",
            "nvidia-smi",
            "--query-gpu=name,memory.total,mig.mode.current",
            "--format=csv",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        csv,
        "name, memory.total [MiB], mig.mode.current\nNVIDIA A10G, 23028 MiB, [N/A]\n"
    );

    let (code, out, _) = kubectl_run(
        &binary,
        &lab,
        &[
            "exec",
            "smi",
            "--",
            "nvidia-smi",
            "--query-gpu=bogus",
            "--format=csv",
        ],
    );
    assert_eq!(code, 2, "an unknown field exits 2, as the real tool does");
    assert!(
        out.contains("Field \"bogus\" is not a valid field to query."),
        "{out}"
    );

    let (code, out, _) = kubectl_run(
        &binary,
        &lab,
        &["exec", "smi", "--", "nvidia-smi", "mig", "-lgip"],
    );
    assert_eq!(code, 6, "an A10G has no MIG: {out}");

    // What kubectl printed, our parsers read: the XML document and the plain table.
    let (_, xml, _) = kubectl_run(
        &binary,
        &lab,
        &["exec", "smi", "--", "nvidia-smi", "-q", "-x"],
    );
    let report = runbook::gpu::nvidia_smi::parse_xml(&xml).expect("the twin's -q -x parses");
    assert_eq!(report.driver_version.as_deref(), Some("580.95.05"));
    assert_eq!(report.gpus[0].product_name.as_deref(), Some("NVIDIA A10G"));
    assert_eq!(report.gpus[0].fb_memory_total_mib, Some(23028));
    let parsed = runbook::gpu::nvidia_smi::parse_table(&table).expect("the twin's table parses");
    assert_eq!(parsed.gpus[0].memory_total_mib, Some(23028));

    // The health parsers read the twin's `-q` text and `topo -m` as they read real ones.
    let (_, query, _) = kubectl_run(&binary, &lab, &["exec", "smi", "--", "nvidia-smi", "-q"]);
    let report =
        runbook::gpu::nvidia_smi::parse_query_text(&query).expect("the twin's -q text parses");
    assert_eq!(report.driver_version.as_deref(), Some("580.95.05"));
    let memory = runbook::gpu::nvidia_smi::memory_errors(&report.gpus[0]);
    assert_eq!(memory.product.as_deref(), Some("NVIDIA A10G"));
    assert_eq!(memory.ecc_mode.as_deref(), Some("Enabled"));
    assert_eq!(memory.volatile.uncorrectable, Some(0));
    assert_eq!(memory.remapped_rows.pending, Some(false));
    let (_, topo, _) = kubectl_run(
        &binary,
        &lab,
        &["exec", "smi", "--", "nvidia-smi", "topo", "-m"],
    );
    let topo = runbook::gpu::nvidia_smi::parse_topology(&topo).expect("the twin's topo -m parses");
    assert_eq!(topo.devices, ["GPU0"]);
    assert_eq!(topo.rows[0].cpu_affinity.as_deref(), Some("0-3"));

    // A container that asked for no GPU has no nvidia-smi, as under the NVIDIA runtime.
    let (code, _, err) = kubectl_run(
        &binary,
        &lab,
        &[
            "-n",
            "kube-system",
            "exec",
            "deploy/coredns",
            "--",
            "nvidia-smi",
        ],
    );
    assert_ne!(code, 0, "{err}");
}

#[test]
fn local_nvml_on_a_machine_without_nvidia_smi_reports_the_node_not_an_error() {
    if std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|p| p.join("nvidia-smi").is_file()))
    {
        eprintln!("skipped: this machine has nvidia-smi");
        return;
    }
    let out = Runbook::new()
        .args(["eval", "--json", "nvml::query(#{ local: true })"])
        .run()
        .expect_code(0)
        .stdout();
    let answers: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(answers[0]["ok"], false);
    assert_eq!(answers[0]["via"], "local");
    assert!(
        answers[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("cannot run nvidia-smi on this machine")),
        "{answers}"
    );
}

/// A privileged pod that sees the GPUs without asking for one, as a health probe does.
const PROBE: &str = r#"{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "probe", "namespace": "default"},
 "spec": {"nodeSelector": {"tier": "gpu"},
          "tolerations": [{"operator": "Exists"}],
          "containers": [{"name": "dcgm", "image": "nvcr.io/nvidia/cloud-native/dcgm:4.2.3-1-ubuntu22.04",
                          "command": ["sleep", "infinity"],
                          "securityContext": {"privileged": true},
                          "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}]}}"#;

/// The node as `kubectl get node -o json` shows what a quarantine touches.
fn service_state(binary: &std::path::Path, lab: &LabServer, node: &str) -> serde_json::Value {
    let (code, out, err) = kubectl_run(binary, lab, &["get", "node", node, "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let node: serde_json::Value = serde_json::from_str(&out).expect("node JSON");
    serde_json::json!({
        "labels": node["metadata"]["labels"],
        "annotations": node["metadata"]["annotations"],
        "taints": node["spec"]["taints"],
        "unschedulable": node["spec"]["unschedulable"],
    })
}

#[test]
fn kubectl_reads_a_sick_gpu_node_and_release_leaves_it_as_it_was() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with(
        "600",
        &[
            "--fault",
            "gpu-ecc-uncorrectable=gpu0:3",
            "--fault",
            "gpu-row-remap-pending=gpu0",
        ],
    );
    let endpoint = lab.aws_endpoint();
    let eval = |code: &str| {
        Runbook::new()
            .lab_env(&lab)
            .args(["eval", "--aws-endpoint", &endpoint, "--kubeconfig"])
            .arg(&lab.kubeconfig)
            .arg(code)
            .run()
            .expect_code(0)
            .stdout()
    };
    let node = eval(
        r#"eks::scale_nodegroup("myeks5w", "gpu", 1); k8s::wait_nodes(#{ labels: #{ tier: "gpu" }, count: 1, timeout: "15m" })[0].name"#,
    );
    let node = node.trim().trim_matches('"');
    let dir = tempfile::tempdir().expect("temp dir");
    let manifest = dir.path().join("probe.json");
    std::fs::write(&manifest, PROBE).expect("write");
    let (code, _, err) = kubectl_run(&binary, &lab, &["apply", "-f", &manifest.to_string_lossy()]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = kubectl_run(
        &binary,
        &lab,
        &[
            "wait",
            "--for=condition=Ready",
            "pod/probe",
            "--timeout=60s",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let exec = |command: &[&str]| {
        let mut args = vec!["exec", "probe", "--"];
        args.extend_from_slice(command);
        let (code, out, err) = kubectl_run(&binary, &lab, &args);
        assert_eq!(code, 0, "{command:?}: {err}");
        out
    };

    // The counters in the two forms health checks read them, parsed as real output is.
    let text = exec(&["nvidia-smi", "-q", "-d", "ECC,ROW_REMAPPER,PAGE_RETIREMENT"]);
    let report = runbook::gpu::nvidia_smi::parse_query_text(&text).expect("-q -d parses");
    let memory = runbook::gpu::nvidia_smi::memory_errors(&report.gpus[0]);
    assert_eq!(memory.volatile.uncorrectable, Some(3), "{text}");
    assert_eq!(memory.remapped_rows.pending, Some(true), "{text}");
    assert_eq!(
        memory.retired_pages.double_bit, None,
        "an A10G retires no pages"
    );
    assert!(
        !text.contains("Product Name"),
        "only the sections asked: {text}"
    );
    let csv = exec(&[
        "nvidia-smi",
        "--query-remapped-rows=gpu_bus_id,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure",
        "--format=csv",
    ]);
    let rows =
        runbook::gpu::nvidia_smi::parse_csv(&csv, None).expect("the remapped rows csv parses");
    let rows_memory = runbook::gpu::nvidia_smi::memory_errors_from_csv(&rows[0]);
    assert_eq!(rows_memory.bus_id.as_deref(), Some("00000000:00:1E.0"));
    assert_eq!(rows_memory.remapped_rows.pending, Some(true), "{csv}");
    assert_eq!(rows_memory.remapped_rows.failure, Some(false), "{csv}");

    // The kernel log's Xids: 48 for the double-bit error, 63 for the remap it waits on.
    let log = runbook::gpu::xid::parse_kernel_log(&exec(&["dmesg"]));
    let codes = log.codes();
    assert!(codes.contains(&48) && codes.contains(&63), "{codes:?}");

    // DCGM's memory test (level 2) fails on the double-bit error, its software test on the remap.
    let diag = runbook::gpu::dcgm_diag::parse_diag_json(&exec(&["dcgmi", "diag", "-r", "2", "-j"]))
        .expect("dcgmi JSON parses");
    assert_eq!(diag.status(), runbook::gpu::dcgm_diag::DiagStatus::Fail);
    let failed: Vec<&str> = diag
        .problems()
        .map(|(test, _)| test.name.as_str())
        .collect();
    assert!(
        failed.contains(&"memory") && failed.contains(&"software"),
        "{failed:?}"
    );

    // Isolated, the node shows it to kubectl; released, it is exactly as it was.
    let before = service_state(&binary, &lab, node);
    // A runbook against the served lab, as a user runs one.
    let run_against_lab = |script: String| {
        let runbook = dir.path().join("quarantine.rhai");
        std::fs::write(&runbook, script).expect("write");
        Runbook::new()
            .lab_env(&lab)
            .args([
                "run",
                "--yes",
                "--aws-endpoint",
                &endpoint,
                "--progress",
                "never",
                "--kubeconfig",
            ])
            .arg(&lab.kubeconfig)
            .arg(&runbook)
            .run()
            .expect_code(0)
    };
    let isolated = run_against_lab(format!(
        "import \"gpu\" as gpu;\nlet q = gpu::isolate(\"{node}\", \"RESET\");\nprint(q.value);\n"
    ));
    assert!(isolated.stdout().contains("RESET"), "{}", isolated.stdout());
    let during = service_state(&binary, &lab, node);
    assert_eq!(during["unschedulable"], true, "{during}");
    assert_eq!(
        during["labels"]["runbook.dev/gpu-health"], "RESET",
        "{during}"
    );
    assert!(
        during["taints"].as_array().is_some_and(|t| t
            .iter()
            .any(|t| t["key"] == "runbook.dev/gpu-health"
                && t["value"] == "RESET"
                && t["effect"] == "NoSchedule")),
        "{during}"
    );
    assert!(
        during["annotations"]["runbook.dev/gpu-health"].is_string(),
        "the evidence: {during}"
    );
    let released = run_against_lab(format!(
        "import \"gpu\" as gpu;\nprint(gpu::release(\"{node}\"));\n"
    ));
    assert!(released.stdout().contains("true"), "{}", released.stdout());
    assert_eq!(service_state(&binary, &lab, node), before);
}
