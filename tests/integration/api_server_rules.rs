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

const GATED: &str = "apiVersion: v1
kind: Pod
metadata: {name: gated, namespace: default}
spec:
  tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]
  schedulingGates: [{name: example.com/quota}]
  containers:
  - name: app
    image: nginx:1.27
";

/// `kubectl patch pod gated` with `args` after the name: exit code and stderr.
fn patch_gated(binary: &std::path::Path, lab: &LabServer, args: &[&str]) -> (i32, String) {
    let (code, _, err) = kubectl_run(
        binary,
        lab,
        &[&["patch", "pod", "gated"][..], args].concat(),
    );
    (code, err)
}

#[test]
fn a_gated_pod_keeps_its_tolerations_and_gates_and_may_add_node_selectors() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("1000", &["--scenario", "empty"]);
    let (code, err) = apply(&binary, &lab, GATED);
    assert_eq!(code, 0, "{err}");
    // An image change keeps the NoSchedule toleration (validateOnlyAddedTolerations).
    let image = r#"{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}"#;
    let (code, err) = patch_gated(&binary, &lab, &["-p", image]);
    assert_eq!(code, 0, "{err}");
    // A replace that leaves out priority and preemptionPolicy keeps them (the Priority
    // admission plugin on update), so only the image changes.
    let replaced = GATED.replace("nginx:1.27", "nginx:1.29");
    let out = kubectl_stdin(&binary, &lab, &["replace", "-f", "-"], &replaced);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A new scheduling gate is refused (validateOnlyDeletedSchedulingGates).
    let gate = r#"[{"op":"add","path":"/spec/schedulingGates/-","value":{"name":"b"}}]"#;
    let (code, err) = patch_gated(&binary, &lab, &["--type=json", "-p", gate]);
    assert_ne!(code, 0);
    assert!(
        err.contains("spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'b'"),
        "{err}"
    );
    // A gated pod may add node selector entries (ValidatePodUpdate's gated-pod relaxation).
    let selector = r#"{"spec":{"nodeSelector":{"zone":"a"}}}"#;
    let (code, err) = patch_gated(&binary, &lab, &["-p", selector]);
    assert_eq!(code, 0, "{err}");
    // The Priority admission plugin's defaults, without a PriorityClass.
    let (_, out, err) = kubectl_run(
        &binary,
        &lab,
        &[
            "get",
            "pod",
            "gated",
            "-o",
            "jsonpath={.spec.priority}/{.spec.preemptionPolicy}/{.spec.nodeSelector.zone}",
        ],
    );
    assert_eq!(out, "0/PreemptLowerPriority/a", "{err}");
}

#[test]
fn writes_warn_and_refuse_as_the_servers_strategies_and_storage_do() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("1000", &["--scenario", "empty"]);
    // GetWarningsForService: a source range with host bits set is ambiguous.
    let ranges = "  loadBalancerSourceRanges: [10.0.0.1/16]\n";
    let (code, err) = apply(&binary, &lab, &service("lb", "LoadBalancer", ranges));
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(r#"Warning: spec.loadBalancerSourceRanges[0]: CIDR value "10.0.0.1/16" is ambiguous in this context (should be "10.0.0.0/16" or "10.0.0.1/32"?)"#),
        "{err}"
    );
    // A negative grace period is stored, with pkg/api/pod/warnings.go's warning.
    let negative = GATED.replace("name: gated", "name: graceless").replace(
        "  containers:",
        "  terminationGracePeriodSeconds: -5\n  containers:",
    );
    let (code, err) = apply(&binary, &lab, &negative);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("Warning: spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"),
        "{err}"
    );
    // etcd3's Create refuses an object that names a resourceVersion: a 500 without a reason
    // (kubectl create clears the field, so the body goes raw).
    let status = post(
        &lab,
        r#"{"metadata":{"name":"versioned","resourceVersion":"12345"}}"#,
    );
    assert_eq!(status["code"], 500, "{status}");
    assert!(status.get("reason").is_none(), "{status}");
    assert_eq!(
        status["message"], "resourceVersion should not be set on objects to be created",
        "{status}"
    );
    // Without a fieldManager the create's manager is named from the User-Agent; an object
    // whose fields no one owns (only a name) has no managedFields at all.
    let created = post(&lab, r#"{"metadata":{"name":"owned"},"data":{"k":"v"}}"#);
    let entry = &created["metadata"]["managedFields"][0];
    assert_eq!(entry["manager"], "probe-client", "{created}");
    assert_eq!(entry["operation"], "Update", "{created}");
    let bare = post(&lab, r#"{"metadata":{"name":"bare"}}"#);
    assert!(bare["metadata"].get("managedFields").is_none(), "{bare}");
}

/// A raw `POST` of a ConfigMap (`body` less its apiVersion and kind) as the client
/// `probe-client/1.0`, without a fieldManager: the answer.
fn post(lab: &LabServer, body: &str) -> serde_json::Value {
    let body = format!(r#"{{"apiVersion":"v1","kind":"ConfigMap",{}"#, &body[1..]);
    let token = format!(
        "Authorization: Bearer {}",
        lab.env_value("RUNBOOK_LAB_TOKEN")
    );
    let out = std::process::Command::new("curl")
        .args(["-s", "-A", "probe-client/1.0", "-X", "POST", "--cacert"])
        .arg(&lab.ca_file)
        .args(["-H", &token, "-H", "Content-Type: application/json"])
        .args(["--data-binary", &body])
        .arg(format!("{}/api/v1/namespaces/default/configmaps", lab.url))
        .output()
        .expect("curl runs");
    serde_json::from_slice(&out.stdout).expect("a JSON answer")
}

#[test]
fn patch_bodies_and_selectors_are_refused_in_the_handlers_words() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("1000", &["--scenario", "empty"]);
    let (code, err) = apply(
        &binary,
        &lab,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {k: v}\n",
    );
    assert_eq!(code, 0, "{err}");
    let patch = |kind: &str, body: &str| {
        let (code, _, err) = kubectl_run(
            &binary,
            &lab,
            &[
                "patch",
                "configmap",
                "c",
                &format!("--type={kind}"),
                "-p",
                body,
            ],
        );
        assert_ne!(code, 0, "{body} was accepted");
        err
    };
    // patch.go's applyJSPatch: the body decodes strictly first (400), then a failing
    // operation is NewGenericServerResponse(422)'s sentence.
    let err = patch("json", r#"{"op":"add","path":"/data/j","value":"1"}"#);
    assert!(
        err.contains("error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"),
        "{err}"
    );
    let err = patch(
        "json",
        r#"[{"op":"test","path":"/data/k","value":"other"}]"#,
    );
    assert!(
        err.contains("the server rejected our request due to an error in our request"),
        "{err}"
    );
    let err = patch("merge", "[1,2]");
    assert!(
        err.contains("error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"),
        "{err}"
    );
    // labels' parser (selector.go): the list ended before its `)`.
    let (code, _, err) = kubectl_run(&binary, &lab, &["get", "configmaps", "-l", "a in (b"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("unable to parse requirement: found '', expected: ',' or ')'"),
        "{err}"
    );
}

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: dials.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: dials, singular: dial, kind: Dial}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              port: {x-kubernetes-int-or-string: true}
              mode: {type: string, default: fast}
";

#[test]
fn custom_resources_meet_their_schemas_types_and_defaults_and_crds_must_be_structural() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("1000", &["--scenario", "empty"]);
    // validateStructuralInvariants: a specified field needs a type.
    let loose = CRD.replace(
        "          spec:\n            type: object\n",
        "          spec:\n",
    );
    let (code, err) = apply(&binary, &lab, &loose);
    assert_ne!(code, 0);
    assert!(
        err.contains("spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"),
        "{err}"
    );
    let (code, err) = apply(&binary, &lab, CRD);
    assert_eq!(code, 0, "{err}");
    let dial = "apiVersion: example.com/v1\nkind: Dial\nmetadata: {name: d, namespace: default}\nspec: {port: true}\n";
    let (code, err) = apply(&binary, &lab, dial);
    assert_ne!(code, 0);
    assert!(
        err.contains(r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#),
        "{err}"
    );
    // Structural defaulting fills the omitted mode.
    let (code, err) = apply(&binary, &lab, &dial.replace("true", "8080"));
    assert_eq!(code, 0, "{err}");
    let (_, out, err) = kubectl_run(
        &binary,
        &lab,
        &["get", "dial", "d", "-o", "jsonpath={.spec.mode}"],
    );
    assert_eq!(out, "fast", "{err}");
}
