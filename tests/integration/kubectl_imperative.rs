//! kubectl's imperative commands against `lab serve`: `kubectl create <kind>`, `run` and
//! `expose` send protobuf (client-go's default for built-in kinds), which the twin reads by
//! Kubernetes 1.35's definitions; what they make reads back as the API server would store it,
//! and a bad one is refused in the server's words.

use std::process::{Command, Output};

use crate::support::{LabServer, kubectl};

fn run(binary: &std::path::Path, lab: &LabServer, args: &[&str]) -> Output {
    Command::new(binary)
        .arg("--kubeconfig")
        .arg(&lab.kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs")
}

#[test]
fn every_imperative_create_run_and_expose_is_served() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("1000", &["--scenario", "empty"]);
    let ns = ["-n", "gpu-operator"];
    let commands: Vec<Vec<&str>> = vec![
        vec!["create", "namespace", "gpu-operator"],
        vec![
            "create",
            "deployment",
            "web",
            "--image=nginx:1.27",
            "--replicas=0",
            "--port=8080",
        ],
        vec!["create", "service", "clusterip", "web", "--tcp=80:8080"],
        vec![
            "create",
            "service",
            "nodeport",
            "web-np",
            "--tcp=80:8080",
            "--node-port=30080",
        ],
        vec![
            "create",
            "service",
            "externalname",
            "ext",
            "--external-name=example.com",
        ],
        vec!["create", "configmap", "cfg", "--from-literal=mode=fast"],
        vec![
            "create",
            "secret",
            "generic",
            "creds",
            "--from-literal=password=s3cret",
        ],
        vec!["create", "serviceaccount", "runner"],
        vec![
            "create",
            "job",
            "once",
            "--image=busybox:1.36",
            "--",
            "true",
        ],
        vec![
            "create",
            "cronjob",
            "nightly",
            "--image=busybox:1.36",
            "--schedule=0 3 * * *",
            "--",
            "true",
        ],
        vec![
            "create",
            "role",
            "reader",
            "--verb=get,list",
            "--resource=pods",
        ],
        vec![
            "create",
            "rolebinding",
            "reader",
            "--role=reader",
            "--serviceaccount=gpu-operator:runner",
        ],
        vec![
            "create",
            "clusterrole",
            "node-reader",
            "--verb=list",
            "--resource=nodes",
        ],
        vec![
            "create",
            "clusterrolebinding",
            "node-reader",
            "--clusterrole=node-reader",
            "--user=alice",
        ],
        vec!["create", "priorityclass", "gpu-high", "--value=1000"],
        vec![
            "create",
            "poddisruptionbudget",
            "web",
            "--selector=app=web",
            "--min-available=1",
        ],
        vec!["create", "ingress", "web", "--rule=gpu.example.com/=web:80"],
        vec![
            "run",
            "probe",
            "--image=busybox:1.36",
            "--env=MODE=probe",
            "--labels=app=probe",
            "--",
            "sleep",
            "3600",
        ],
        vec![
            "expose",
            "deployment",
            "web",
            "--name=web-metrics",
            "--port=9400",
            "--target-port=8080",
        ],
    ];
    for command in &commands {
        // The namespace goes first: after `--` it would be the container's arguments.
        let cluster_wide = command[1] == "namespace"
            || command[1].starts_with("cluster")
            || command[1] == "priorityclass";
        let args: Vec<&str> = if cluster_wide {
            command.clone()
        } else {
            ns.iter().chain(command.iter()).copied().collect()
        };
        let out = run(&binary, &lab, &args);
        assert!(
            out.status.success(),
            "kubectl {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let read = |args: &[&str]| {
        let out = run(&binary, &lab, &[args, &ns].concat());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // What the server stores: zero replicas kept (a pointer), defaults filled as the server
    // fills them, ports and secrets in their JSON forms, inline structs flattened.
    assert_eq!(
        read(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.replicas} {.spec.strategy.type} {.spec.template.spec.containers[0].ports[0].containerPort}/{.spec.template.spec.containers[0].ports[0].protocol}"
        ]),
        "0 RollingUpdate 8080/TCP"
    );
    assert_eq!(
        read(&[
            "get",
            "service",
            "web-np",
            "-o",
            "jsonpath={.spec.type} {.spec.ports[0].nodePort} {.spec.ports[0].targetPort}"
        ]),
        "NodePort 30080 8080"
    );
    assert_eq!(
        read(&["get", "secret", "creds", "-o", "jsonpath={.data.password}"]),
        "czNjcmV0"
    );
    assert_eq!(
        read(&[
            "get",
            "ingress",
            "web",
            "-o",
            "jsonpath={.spec.rules[0].host} {.spec.rules[0].http.paths[0].backend.service.name}"
        ]),
        "gpu.example.com web"
    );
    assert_eq!(
        read(&[
            "get",
            "pod",
            "probe",
            "-o",
            "jsonpath={.spec.containers[0].env[0].value} {.spec.containers[0].args}"
        ]),
        r#"probe ["sleep","3600"]"#
    );
    assert_eq!(
        read(&[
            "get",
            "cronjob",
            "nightly",
            "-o",
            "jsonpath={.spec.schedule}"
        ]),
        "0 3 * * *"
    );
    assert_eq!(
        read(&[
            "get",
            "rolebinding",
            "reader",
            "-o",
            "jsonpath={.roleRef.name} {.subjects[0].name}"
        ]),
        "reader runner"
    );

    // A bad one is refused as the API server refuses it, whatever the encoding.
    let out = run(
        &binary,
        &lab,
        &[
            "create",
            "deployment",
            "bad",
            "--image=nginx:1.27",
            "--port=70000",
            "-n",
            "gpu-operator",
        ],
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(r#"Deployment.apps "bad" is invalid: spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"#),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
