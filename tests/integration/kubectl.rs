//! Real kubectl (1.32 from the machine image, 1.35 from scripts/install-tools.sh) against
//! `runbook lab serve`: the twin's fidelity, proven by a client nobody here wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::{LabServer, kubectl, repo_root};

struct Kubectl {
    binary: PathBuf,
    kubeconfig: PathBuf,
}

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Kubectl {
    fn new(binary: PathBuf, lab: &LabServer) -> Self {
        Self {
            binary,
            kubeconfig: lab.kubeconfig.clone(),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .current_dir(repo_root());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        let output = self.command(args).output().expect("kubectl runs");
        Output {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs and asserts success; returns stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.code,
            0,
            "kubectl {}\n--- stdout\n{}--- stderr\n{}",
            args.join(" "),
            out.stdout,
            out.stderr
        );
        out.stdout
    }
}

fn row<'a>(table: &'a str, first_column: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(first_column))
        .unwrap_or_else(|| panic!("no row `{first_column}` in:\n{table}"))
}

fn columns(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

fn data(name: &str) -> String {
    Path::new("tests/data").join(name).display().to_string()
}

fn nodes_and_system_workloads(k: &Kubectl) {
    let nodes = k.ok(&["get", "nodes", "-o", "wide", "--show-labels"]);
    let header = columns(nodes.lines().next().unwrap_or_default());
    assert_eq!(
        &header[..6],
        ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP"],
        "{nodes}"
    );
    for (ip, zone) in [
        ("192-168-13-45", "ap-northeast-2a"),
        ("192-168-21-118", "ap-northeast-2c"),
    ] {
        let line = row(&nodes, &format!("ip-{ip}.ap-northeast-2.compute.internal"));
        let cells = columns(line);
        assert_eq!(
            (cells[1], cells[4]),
            ("Ready", "v1.35.3-eks-bbe087e"),
            "{line}"
        );
        for label in [
            "tier=primary",
            &format!("topology.kubernetes.io/zone={zone}"),
            "node.kubernetes.io/instance-type=t3.medium",
            "eks.amazonaws.com/capacityType=ON_DEMAND",
        ] {
            assert!(line.contains(label), "{label} missing: {line}");
        }
    }
    let workloads = k.ok(&["-n", "kube-system", "get", "ds,deploy", "-o", "wide"]);
    for (name, version) in [
        ("daemonset.apps/aws-node", "v1.21.1-eksbuild.7"),
        ("daemonset.apps/kube-proxy", "v1.35.3-eksbuild.2"),
        ("daemonset.apps/eks-pod-identity-agent", "v0.1.37"),
    ] {
        let cells = columns(row(&workloads, name));
        assert_eq!(
            &cells[1..6],
            ["2", "2", "2", "2", "2"],
            "{name}: {workloads}"
        );
        assert!(
            row(&workloads, name).contains(version),
            "{name} should run {version}"
        );
    }
    for (name, version) in [
        ("deployment.apps/coredns", "v1.13.2-eksbuild.4"),
        ("deployment.apps/metrics-server", "v0.8.1-eksbuild.6"),
    ] {
        assert_eq!(columns(row(&workloads, name))[1], "2/2", "{workloads}");
        assert!(row(&workloads, name).contains(version));
    }
    let coredns = k.ok(&[
        "-n",
        "kube-system",
        "get",
        "pods",
        "-l",
        "k8s-app=kube-dns",
        "-o",
        "jsonpath={.items[*].spec.nodeName}",
    ]);
    assert!(
        coredns.contains("192-168-13-45") && coredns.contains("192-168-21-118"),
        "CoreDNS spreads over 2a and 2c: {coredns}"
    );
    let cni = k.ok(&[
        "-n",
        "kube-system",
        "get",
        "cm",
        "amazon-vpc-cni",
        "-o",
        "jsonpath={.data.warm-ip-target}/{.data.minimum-ip-target}",
    ]);
    assert_eq!(cni, "1/3");
}

fn health_and_faults(k: &Kubectl, lab: &LabServer) {
    let readyz = k.ok(&["get", "--raw=/readyz?verbose"]);
    assert!(
        readyz.contains("[+]etcd ok\n") && readyz.contains("[+]kms-providers ok\n"),
        "{readyz}"
    );
    assert!(readyz.ends_with("readyz check passed\n"), "{readyz}");
    assert_eq!(readyz.lines().filter(|l| l.starts_with("[+]")).count(), 36);
    lab.admin("faults?fail=etcd");
    let failing = k.run(&["get", "--raw=/readyz?verbose"]);
    assert_ne!(failing.code, 0);
    assert!(
        failing.stdout.contains("[-]etcd failed: reason withheld")
            || failing.stderr.contains("[-]etcd failed: reason withheld"),
        "{}{}",
        failing.stdout,
        failing.stderr
    );
    let excluded = k.ok(&["get", "--raw=/readyz?exclude=etcd"]);
    assert_eq!(excluded, "ok");
    lab.admin("faults?heal=etcd");
    assert_eq!(k.ok(&["get", "--raw=/livez"]), "ok");
}

fn workloads(k: &Kubectl) {
    let applied = k.ok(&["apply", "-f", &data("workloads.yaml")]);
    assert!(
        applied.contains("deployment.apps/web created")
            && applied.contains("job.batch/hello created"),
        "{applied}"
    );
    k.ok(&[
        "wait",
        "--for=condition=available",
        "deploy/web",
        "--timeout=60s",
    ]);
    k.ok(&[
        "wait",
        "--for=condition=complete",
        "job/hello",
        "--timeout=60s",
    ]);
    assert_eq!(k.ok(&["logs", "job/hello"]), "hello from the twin\ndone\n");
    assert!(
        k.ok(&["apply", "-f", &data("workloads.yaml")])
            .contains("deployment.apps/web unchanged")
    );
    let pod = k.ok(&[
        "get",
        "pods",
        "-l",
        "app=web",
        "-o",
        "jsonpath={.items[0].metadata.name}",
    ]);
    assert_eq!(k.ok(&["exec", &pod, "--", "echo", "hi"]), "hi\n");
    let failed = k.run(&["exec", &pod, "--", "sh", "-c", "exit 3"]);
    assert_eq!(
        failed.code, 3,
        "kubectl passes the exit code on: {}",
        failed.stderr
    );
    let node = "ip-192-168-13-45.ap-northeast-2.compute.internal";
    k.ok(&["label", "node", node, "drill=nccl"]);
    k.ok(&["taint", "node", node, "dedicated=gpu:NoSchedule"]);
    let taints = k.ok(&["get", "node", node, "-o", "jsonpath={.spec.taints[0].key}={.spec.taints[0].value}:{.spec.taints[0].effect} {.metadata.labels.drill}"]);
    assert_eq!(taints, "dedicated=gpu:NoSchedule nccl");
    // The agent's pod already on the tainted node stays (NoSchedule) but is no longer one of
    // the desired: the rollout still reads complete, as the DaemonSet controller counts it.
    k.ok(&["taint", "node", node, "dedicated=gpu:NoSchedule-"]);
    k.ok(&["apply", "-f", &data("node-agent.yaml")]);
    k.ok(&["rollout", "status", "ds/node-agent", "--timeout=30s"]);
    k.ok(&["taint", "node", node, "dedicated=gpu:NoSchedule"]);
    k.ok(&["rollout", "status", "ds/node-agent", "--timeout=10s"]);
    let counts = k.ok(&["get", "ds", "node-agent", "-o", "jsonpath={.status.desiredNumberScheduled} {.status.updatedNumberScheduled} {.status.numberMisscheduled}"]);
    let counts: Vec<&str> = counts.split(' ').collect();
    assert_eq!(counts[0], counts[1], "desired = updated: {counts:?}");
    assert_eq!(counts[2], "1", "the tainted node's pod is misscheduled");
    k.ok(&["taint", "node", node, "dedicated=gpu:NoSchedule-"]);
    k.ok(&["delete", "ds", "node-agent"]);
    k.ok(&["scale", "deploy/web", "--replicas=3"]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=60s"]);
    assert_eq!(
        columns(row(&k.ok(&["get", "deploy", "web"]), "web"))[1],
        "3/3"
    );
    k.ok(&["delete", "deploy", "web"]);
    k.ok(&[
        "wait",
        "--for=delete",
        "pod",
        "-l",
        "app=web",
        "--timeout=60s",
    ]);
    let rest = k.run(&["get", "rs,pods", "-l", "app=web"]);
    assert!(
        rest.stdout.is_empty() && rest.stderr.contains("No resources found"),
        "{}{}",
        rest.stdout,
        rest.stderr
    );
}

fn custom_resources(k: &Kubectl) {
    k.ok(&["apply", "-f", &data("crd.yaml")]);
    k.ok(&[
        "wait",
        "--for=condition=established",
        "crd/drills.runbook.dev",
        "--timeout=30s",
    ]);
    assert!(
        k.ok(&["apply", "-f", &data("drill.yaml")])
            .contains("drill.runbook.dev/nccl created")
    );
    assert!(row(&k.ok(&["get", "drills"]), "nccl").starts_with("nccl"));
    assert_eq!(
        k.ok(&["get", "dr", "nccl", "-o", "jsonpath={.spec.nodes}"]),
        "2"
    );
    k.ok(&[
        "patch",
        "drill",
        "nccl",
        "--type=merge",
        "-p",
        r#"{"spec":{"nodes":4}}"#,
    ]);
    assert_eq!(
        k.ok(&["get", "drill", "nccl", "-o", "jsonpath={.spec.nodes}"]),
        "4"
    );
    k.ok(&["delete", "-f", &data("drill.yaml")]);
}

fn watch_sees_a_change(k: &Kubectl) {
    let watcher = k
        .command(&[
            "get",
            "pods",
            "-n",
            "default",
            "-w",
            "--request-timeout=20s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl -w starts");
    std::thread::sleep(std::time::Duration::from_millis(700));
    k.ok(&[
        "run",
        "probe",
        "--image=busybox",
        "--restart=Never",
        "--",
        "echo",
        "hi",
    ]);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let _ = Command::new("kill").arg(watcher.id().to_string()).status();
    let output = watcher.wait_with_output().expect("kubectl -w ends");
    let seen = String::from_utf8_lossy(&output.stdout);
    assert!(
        seen.lines().any(|l| l.starts_with("probe ")),
        "the watch saw the new pod:\n{seen}"
    );
    assert!(
        seen.contains("Completed") || seen.contains("Running"),
        "the watch saw it run:\n{seen}"
    );
}

fn errors_read_like_the_apiserver(k: &Kubectl) {
    // Typed `kubectl create <kind>` sends protobuf, which the twin reads as the server does;
    // a name the server refuses is refused in its words.
    let typed = k.run(&["create", "namespace", "typed"]);
    assert_eq!(typed.code, 0, "{}", typed.stderr);
    let refused = k.run(&["create", "namespace", "Typed_Name"]);
    assert!(
        refused.stderr.contains(r#"Namespace "Typed_Name" is invalid: metadata.name: Invalid value: "Typed_Name": a lowercase RFC 1123 label must consist of"#),
        "{}",
        refused.stderr
    );
    let unknown = k.run(&["get", "frobs"]);
    assert!(
        unknown
            .stderr
            .contains("the server doesn't have a resource type \"frobs\""),
        "{}",
        unknown.stderr
    );
    let missing = k.run(&["exec", "no-such-pod", "--", "true"]);
    assert!(
        missing.stderr.contains("pods \"no-such-pod\" not found"),
        "{}",
        missing.stderr
    );
    let patch = k.run(&["patch", "deploy", "no-such-deploy", "-p", "{}"]);
    assert!(
        patch
            .stderr
            .contains("deployments.apps \"no-such-deploy\" not found"),
        "{}",
        patch.stderr
    );
    let selector = k.run(&["get", "pods", "-l", "bad selector!"]);
    assert!(
        selector.stderr.contains("invalid label key"),
        "{}",
        selector.stderr
    );
    let invalid = k.run(&["create", "job", "x", "--image=", "--dry-run=server"]);
    assert_ne!(invalid.code, 0);
}

macro_rules! against {
    ($module:ident, $version:literal) => {
        mod $module {
            use super::*;

            fn setup() -> Option<(LabServer, Kubectl)> {
                let binary = kubectl($version)?;
                let lab = LabServer::start("60");
                let k = Kubectl::new(binary, &lab);
                Some((lab, k))
            }

            #[test]
            fn nodes_and_kube_system_match_the_lab() {
                let Some((_lab, k)) = setup() else { return };
                nodes_and_system_workloads(&k);
            }

            #[test]
            fn readyz_lists_the_checks_and_faults_fail_them() {
                let Some((lab, k)) = setup() else { return };
                health_and_faults(&k, &lab);
            }

            #[test]
            fn apply_wait_logs_exec_label_taint_scale_delete() {
                let Some((_lab, k)) = setup() else { return };
                workloads(&k);
            }

            #[test]
            fn crds_and_custom_objects() {
                let Some((_lab, k)) = setup() else { return };
                custom_resources(&k);
            }

            #[test]
            fn get_watch_sees_a_new_pod() {
                let Some((_lab, k)) = setup() else { return };
                watch_sees_a_change(&k);
            }

            #[test]
            fn bad_requests_get_the_apiservers_errors() {
                let Some((_lab, k)) = setup() else { return };
                errors_read_like_the_apiserver(&k);
            }
        }
    };
}

against!(kubectl_1_32, "1.32");
against!(kubectl_1_35, "1.35");
