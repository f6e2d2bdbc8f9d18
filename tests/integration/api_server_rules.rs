//! What the twin's API server stores and refuses beyond a single field, through kubectl
//! 1.35's eyes: the defaults a probe is stored with, cluster IPs and node ports allocated
//! from their ranges and kept, taken ones refused, and what an update of a Pod or a Service
//! may not change.

use crate::support::{LabServer, kubectl, kubectl_run, kubectl_stdin};

/// `kubectl apply -f -` of `manifest`: exit code and stderr.
fn apply(binary: &std::path::Path, lab: &LabServer, manifest: &str) -> (i32, String) {
    let out = kubectl_stdin(binary, lab, &["apply", "-f", "-"], manifest);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers:
  - name: app
    image: nginx:1.27
    command: [nginx]
    livenessProbe: {httpGet: {port: 8080}}
    resources: {limits: {cpu: '1'}}
";

#[test]
fn probes_are_stored_with_their_defaults_and_a_pods_spec_keeps_all_but_its_images() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("1000", &["--scenario", "empty"]);
    let (code, err) = apply(&binary, &lab, POD);
    assert_eq!(code, 0, "{err}");
    let get = |path: &str| {
        let (code, out, err) = kubectl_run(
            &binary,
            &lab,
            &["get", "pod", "web", "-o", &format!("jsonpath={path}")],
        );
        assert_eq!(code, 0, "{err}");
        out
    };
    // SetDefaults_Probe and SetDefaults_HTTPGetAction; SetDefaults_Pod's request from a limit.
    let probe = "{.spec.containers[0].livenessProbe}";
    let stored: serde_json::Value = serde_json::from_str(&get(probe)).expect("a probe");
    assert_eq!(
        stored,
        serde_json::json!({"httpGet": {"path": "/", "port": 8080, "scheme": "HTTP"},
            "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(get("{.spec.containers[0].resources.requests.cpu}"), "1");
    assert_eq!(get("{.spec.enableServiceLinks}"), "true");

    // An image may change; a command may not (ValidatePodUpdate).
    let (code, err) = apply(&binary, &lab, &POD.replace("nginx:1.27", "nginx:1.28"));
    assert_eq!(code, 0, "{err}");
    let (code, err) = apply(
        &binary,
        &lab,
        &POD.replace("command: [nginx]", "command: [httpd]"),
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"),
        "{err}"
    );
}

fn service(name: &str, kind: &str, extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  type: {kind}\n  selector: {{app: web}}\n  ports: [{{name: http, port: 80}}]\n{extra}"
    )
}

#[test]
fn services_get_cluster_ips_and_node_ports_from_their_ranges_and_keep_them() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("1000", &["--scenario", "empty"]);
    let get = |name: &str, path: &str| {
        let (code, out, err) = kubectl_run(
            &binary,
            &lab,
            &["get", "service", name, "-o", &format!("jsonpath={path}")],
        );
        assert_eq!(code, 0, "{err}");
        out
    };
    let (code, err) = apply(&binary, &lab, &service("api", "ClusterIP", ""));
    assert_eq!(code, 0, "{err}");
    let ip: std::net::Ipv4Addr = get("api", "{.spec.clusterIP}")
        .parse()
        .expect("an IPv4 address");
    let [a, b, c, _] = ip.octets();
    // The lab's 10.100.0.0/16, above the 256 addresses kept for static requests.
    assert!(a == 10 && b == 100 && c >= 1, "{ip}");
    assert_eq!(get("api", "{.spec.clusterIPs[0]}"), ip.to_string());
    assert_eq!(
        get(
            "api",
            "{.spec.ipFamilyPolicy} {.spec.ipFamilies[0]} {.spec.internalTrafficPolicy}"
        ),
        "SingleStack IPv4 Cluster"
    );
    // Applying again without the IP keeps it; changing it is refused in the server's words.
    let (code, err) = apply(
        &binary,
        &lab,
        &service("api", "ClusterIP", "  sessionAffinity: None\n"),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(get("api", "{.spec.clusterIP}"), ip.to_string());
    let (code, err) = apply(
        &binary,
        &lab,
        &service("api", "ClusterIP", "  clusterIP: 10.100.0.77\n"),
    );
    assert_ne!(code, 0);
    assert!(
        err.contains(
            r#"spec.clusterIPs[0]: Invalid value: ["10.100.0.77"]: may not change once set"#
        ),
        "{err}"
    );
    // Another Service asking for the same IP.
    let (code, err) = apply(
        &binary,
        &lab,
        &service("copy", "ClusterIP", &format!("  clusterIP: {ip}\n")),
    );
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!(r#"spec.clusterIPs: Invalid value: ["{ip}"]: failed to allocate IP {ip}: provided IP is already allocated"#)),
        "{err}"
    );

    // Node ports: one picked from the dynamic part of 30000-32767, a taken one refused.
    let (code, err) = apply(&binary, &lab, &service("edge", "NodePort", ""));
    assert_eq!(code, 0, "{err}");
    let port: u16 = get("edge", "{.spec.ports[0].nodePort}")
        .parse()
        .expect("a node port");
    assert!((30086..=32767).contains(&port), "{port}");
    assert_eq!(get("edge", "{.spec.externalTrafficPolicy}"), "Cluster");
    let taken = service("edge2", "NodePort", "")
        .replace("port: 80}", &format!("port: 80, nodePort: {port}}}"));
    let (code, err) = apply(&binary, &lab, &taken);
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!(
            "spec.ports[0].nodePort: Invalid value: {port}: provided port is already allocated"
        )),
        "{err}"
    );
    // NodePort to ClusterIP: the node port and the traffic policy go with the type.
    let (code, err) = apply(&binary, &lab, &service("edge", "ClusterIP", ""));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        get(
            "edge",
            "{.spec.ports[0].nodePort}{.spec.externalTrafficPolicy}"
        ),
        ""
    );
    // A headless Service and an ExternalName one get no IP.
    let (code, err) = apply(
        &binary,
        &lab,
        &service("peers", "ClusterIP", "  clusterIP: None\n"),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(get("peers", "{.spec.clusterIPs[0]}"), "None");
    let (code, err) = apply(
        &binary,
        &lab,
        "apiVersion: v1\nkind: Service\nmetadata: {name: ext, namespace: default}\nspec: {type: ExternalName, externalName: db.example.com}\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(get("ext", "{.spec.clusterIP}"), "");
}
