//! Cases an independent probe found the twin answering unlike a Kubernetes 1.35 API server
//! (each expected answer taken from upstream's source, named beside it), sent through kubectl
//! 1.35 to `runbook lab serve`: what is stored, what is refused and in which words.

use std::process::Output;

use crate::support::{LabServer, kubectl, kubectl_stdin};

fn out(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A manifest refused with `message` (kubectl's exit 1).
fn refused(binary: &std::path::Path, lab: &LabServer, manifest: &str, message: &str) {
    let o = kubectl_stdin(binary, lab, &["create", "-f", "-"], manifest);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(out(&o).contains(message), "want {message}\ngot {}", out(&o));
}

const CRON: &str = "apiVersion: batch/v1
kind: CronJob
metadata: {name: NAME, namespace: default}
spec:
  schedule: 'SCHEDULE'
  ZONE
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
";

fn cron(name: &str, schedule: &str, zone: &str) -> String {
    CRON.replace("NAME", name)
        .replace("SCHEDULE", schedule)
        .replace("ZONE", zone)
}

#[test]
fn objects_a_real_server_refuses_are_refused_in_its_words() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start("60");
    // robfig/cron v3's getRange, as batch validation's validateScheduleFormat prints it.
    refused(
        &binary,
        &lab,
        &cron("c61", "61 * * * *", ""),
        r#"spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61"#,
    );
    // validateTimeZone: time.LoadLocation's error for a zone IANA does not have.
    refused(
        &binary,
        &lab,
        &cron("ctz", "0 * * * *", "timeZone: Mars/Base"),
        r#"spec.timeZone: Invalid value: "Mars/Base": unknown time zone Mars/Base"#,
    );
    // A strategy without a type is defaulted to RollingUpdate keeping what was given, then
    // IsNotMoreThan100Percent refuses it (SetDefaults_Deployment, ValidateRollingUpdateDeployment).
    refused(
        &binary,
        &lab,
        "apiVersion: apps/v1
kind: Deployment
metadata: {name: d110, namespace: default}
spec:
  selector: {matchLabels: {app: a}}
  strategy: {rollingUpdate: {maxUnavailable: 110%}}
  template:
    metadata: {labels: {app: a}}
    spec: {containers: [{name: c, image: busybox}]}
",
        r#"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "110%": must not be greater than 100%"#,
    );
    // ValidateSecurityContext: IsValidUserID.
    refused(
        &binary,
        &lab,
        "apiVersion: v1
kind: Pod
metadata: {name: uid, namespace: default}
spec:
  containers: [{name: c, image: busybox, securityContext: {runAsUser: -1}}]
",
        "spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive",
    );
    // validateVolumeSource: every source after the first, where it is.
    refused(
        &binary,
        &lab,
        "apiVersion: v1
kind: Pod
metadata: {name: two, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
  volumes: [{name: v, emptyDir: {}, hostPath: {path: /tmp}}]
",
        "spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type",
    );
    // Field errors print a selector or a label map as its JSON (apimachinery v0.35).
    refused(
        &binary,
        &lab,
        "apiVersion: apps/v1
kind: Deployment
metadata: {name: sel, namespace: default}
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: b}}
    spec: {containers: [{name: c, image: busybox}]}
",
        r#"spec.template.metadata.labels: Invalid value: {"app":"b"}: `selector` does not match template `labels`"#,
    );
    // IsQualifiedName is IsLabelKey in apimachinery v0.35, with its words.
    refused(
        &binary,
        &lab,
        "apiVersion: v1
kind: ConfigMap
metadata: {name: k, namespace: default, labels: {a/b/c: x}}
",
        r#"metadata.labels: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters"#,
    );
}

#[test]
fn secrets_selectors_and_custom_resources_read_back_as_a_real_server_keeps_them() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start("60");
    let run = |args: &[&str]| kubectl_stdin(&binary, &lab, args, "");
    // stringData merged into data, type Opaque by default (the v1 conversion, SetDefaults_Secret).
    let o = kubectl_stdin(
        &binary,
        &lab,
        &["create", "-f", "-"],
        "apiVersion: v1
kind: Secret
metadata: {name: s, namespace: default, labels: {gpus: '8'}}
stringData: {a: b}
immutable: true
",
    );
    assert!(o.status.success(), "{}", out(&o));
    let o = run(&[
        "get",
        "secret",
        "s",
        "-o",
        "jsonpath={.type}|{.data.a}|{.stringData}",
    ]);
    assert_eq!(out(&o), "Opaque|Yg==|", "{}", out(&o));
    let o = run(&[
        "get",
        "secrets",
        "--field-selector",
        "type=Opaque",
        "-o",
        "name",
    ]);
    assert!(out(&o).contains("secret/s"), "{}", out(&o));
    // An immutable Secret's stringData change is a change of its data.
    let o = run(&[
        "patch",
        "secret",
        "s",
        "--type=merge",
        "-p",
        r#"{"stringData":{"a":"c"}}"#,
    ]);
    assert!(
        out(&o).contains("data: Forbidden: field is immutable when `immutable` is set"),
        "{}",
        out(&o)
    );
    // Gt and Lt label selectors (labels/selector.go), and their integer rule.
    let o = run(&["get", "secrets", "-l", "gpus>4", "-o", "name"]);
    assert!(out(&o).contains("secret/s"), "{}", out(&o));
    let o = run(&["get", "secrets", "-l", "gpus<4", "-o", "name"]);
    assert!(!out(&o).contains("secret/s"), "{}", out(&o));
    let o = run(&["get", "secrets", "-l", "gpus>abc"]);
    assert!(
        out(&o).contains(r#"values[0]: Invalid value: "abc": for 'Gt', 'Lt' operators, the value must be an integer"#),
        "{}",
        out(&o)
    );
    // A custom resource: a strategic merge patch is not a type the CRD handler takes (415),
    // and a null its schema neither allows nor defaults is dropped.
    let o = kubectl_stdin(
        &binary,
        &lab,
        &["create", "-f", "-"],
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.probe.example.com}
spec:
  group: probe.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
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
              plain: {type: string}
              note: {type: string, nullable: true}
              size: {type: integer}
",
    );
    assert!(o.status.success(), "{}", out(&o));
    let o = kubectl_stdin(
        &binary,
        &lab,
        &["create", "-f", "-"],
        "apiVersion: probe.example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
spec: {plain: null, note: null, size: 1}
",
    );
    assert!(o.status.success(), "{}", out(&o));
    let o = run(&["get", "widget", "w", "-o", "jsonpath={.spec}"]);
    assert_eq!(out(&o), r#"{"note":null,"size":1}"#, "{}", out(&o));
    let o = run(&["patch", "widget", "w", "-p", r#"{"spec":{"size":2}}"#]);
    assert!(
        out(&o).contains("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"),
        "{}",
        out(&o)
    );
}

#[test]
fn a_server_dry_run_delete_deletes_nothing() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start("60");
    let run = |args: &[&str]| kubectl_stdin(&binary, &lab, args, "");
    for name in ["a", "b"] {
        let o = run(&["create", "configmap", name, "--from-literal=k=v"]);
        assert!(o.status.success(), "{}", out(&o));
    }
    // kubectl asks a server dry run in the DeleteOptions body (cli-runtime's
    // DeleteWithOptions), for one object and for a collection alike.
    let o = run(&["delete", "configmap", "a", "--dry-run=server"]);
    assert!(
        out(&o).contains("configmap \"a\" deleted from default namespace (server dry run)"),
        "{}",
        out(&o)
    );
    let o = run(&["delete", "configmaps", "--all", "--dry-run=server"]);
    assert!(o.status.success(), "{}", out(&o));
    let o = run(&["get", "configmaps", "a", "b", "-o", "name"]);
    assert_eq!(out(&o), "configmap/a\nconfigmap/b\n", "{}", out(&o));
    let o = run(&["delete", "configmap", "a"]);
    assert!(o.status.success(), "{}", out(&o));
    let o = run(&["get", "configmaps", "-o", "name"]);
    assert!(!out(&o).contains("configmap/a"), "{}", out(&o));
}

#[test]
fn the_storage_layer_answers_as_a_real_api_server_does() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start("60");
    let run = |args: &[&str]| kubectl_stdin(&binary, &lab, args, "");
    let create = |manifest: &str| kubectl_stdin(&binary, &lab, &["create", "-f", "-"], manifest);
    // rest.BeforeCreate wipes the deletion fields; the Service strategy resets the status.
    let o = create(
        "apiVersion: v1
kind: Service
metadata: {name: s, namespace: default, deletionGracePeriodSeconds: 30}
spec: {ports: [{port: 80}]}
status: {loadBalancer: {ingress: [{ip: 1.2.3.4}]}}
",
    );
    assert!(o.status.success(), "{}", out(&o));
    let o = run(&[
        "get",
        "svc",
        "s",
        "-o",
        "jsonpath=[{.metadata.deletionGracePeriodSeconds}][{.status.loadBalancer.ingress}]",
    ]);
    assert_eq!(out(&o), "[][]", "{}", out(&o));
    // Defaults: a namespace's name label, a StatefulSet's claim retention, a Job's pod
    // replacement (namespace strategy, SetDefaults_StatefulSet, SetDefaults_Job).
    let o = run(&["create", "namespace", "team-a"]);
    assert!(o.status.success(), "{}", out(&o));
    let o = run(&[
        "get",
        "ns",
        "team-a",
        "-o",
        "jsonpath={.metadata.labels.kubernetes\\.io/metadata\\.name}",
    ]);
    assert_eq!(out(&o), "team-a", "{}", out(&o));
    let o = run(&["create", "job", "j", "--image=busybox"]);
    assert!(o.status.success(), "{}", out(&o));
    let o = run(&[
        "get",
        "job",
        "j",
        "-o",
        "jsonpath={.spec.podReplacementPolicy}",
    ]);
    assert_eq!(out(&o), "TerminatingOrFailed", "{}", out(&o));
    // A replace naming another uid fails its precondition (rest/update.go, Preconditions.Check).
    let o = run(&["create", "configmap", "c", "--from-literal=a=1"]);
    assert!(o.status.success(), "{}", out(&o));
    let o = kubectl_stdin(
        &binary,
        &lab,
        &["replace", "-f", "-"],
        "apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: default, uid: 00000000-0000-0000-0000-000000000001}
data: {a: '2'}
",
    );
    assert!(
        out(&o).contains("Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000001, UID in object meta: "),
        "{}",
        out(&o)
    );
    // ListOptions' rules and a continue token that does not decode (storage/continue.go).
    let o = run(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/configmaps?resourceVersionMatch=NotOlderThan",
    ]);
    assert!(
        out(&o).contains("resourceVersionMatch is forbidden unless resourceVersion is provided"),
        "{}",
        out(&o)
    );
    let o = run(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/configmaps?limit=1&continue=!!!",
    ]);
    assert!(
        out(&o).contains(
            "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"
        ),
        "{}",
        out(&o)
    );
    // A good token pages on.
    let o = run(&["get", "configmaps", "--chunk-size=1", "-o", "name"]);
    assert!(out(&o).contains("configmap/c"), "{}", out(&o));
    // Strategic merge's directives: finalizers merge as a set and lose what
    // $deleteFromPrimitiveList names.
    let o = run(&[
        "patch",
        "configmap",
        "c",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/a"]}}"#,
    ]);
    assert!(o.status.success(), "{}", out(&o));
    let o = run(&[
        "patch",
        "configmap",
        "c",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/b"]}}"#,
    ]);
    assert!(o.status.success(), "{}", out(&o));
    let o = run(&[
        "patch",
        "configmap",
        "c",
        "-p",
        r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/a"]}}"#,
    ]);
    assert!(o.status.success(), "{}", out(&o));
    let o = run(&[
        "get",
        "configmap",
        "c",
        "-o",
        "jsonpath={.metadata.finalizers}",
    ]);
    assert_eq!(out(&o), r#"["example.com/b"]"#, "{}", out(&o));
    // The name in the body and on the URL, both named (handlers/rest.go checkName).
    let o = kubectl_stdin(
        &binary,
        &lab,
        &[
            "replace",
            "--raw",
            "/api/v1/namespaces/default/configmaps/c",
            "-f",
            "-",
        ],
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other","namespace":"default"}}"#,
    );
    assert!(
        out(&o).contains("the name of the object (other) does not match the name on the URL (c)"),
        "{}",
        out(&o)
    );
    // A watch with a label selector sees an object that comes to match as ADDED, and one that
    // stops matching as DELETED (the watch cache's filtering).
    let watch = std::process::Command::new(&binary)
        .arg("--kubeconfig")
        .arg(&lab.kubeconfig)
        .args([
            "get",
            "--raw",
            "/api/v1/namespaces/default/configmaps?watch=1&labelSelector=tier%3Dgpu&timeoutSeconds=3",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl starts");
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert!(
        run(&["label", "configmap", "c", "tier=gpu"])
            .status
            .success()
    );
    assert!(
        run(&["label", "configmap", "c", "tier=cpu", "--overwrite"])
            .status
            .success()
    );
    let watched = watch.wait_with_output().expect("the watch ends");
    let events: Vec<String> = String::from_utf8_lossy(&watched.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|e| e["type"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(events, ["ADDED", "DELETED"], "{events:?}");
}

#[test]
fn kinds_every_cluster_serves_are_served() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start("60");
    let o = kubectl_stdin(
        &binary,
        &lab,
        &["create", "-f", "-"],
        "apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: h, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: e, namespace: default}
addressType: IPv4
endpoints: [{addresses: [10.0.0.1]}]
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: default}
spec: {hard: {pods: '10'}}
---
apiVersion: v1
kind: LimitRange
metadata: {name: l, namespace: default}
spec: {limits: [{type: Container, default: {cpu: 500m}}]}
",
    );
    assert!(o.status.success(), "{}", out(&o));
    let o = kubectl_stdin(
        &binary,
        &lab,
        &[
            "get",
            "ingressclass,hpa,endpointslices,quota,limits",
            "-o",
            "name",
        ],
        "",
    );
    assert_eq!(
        out(&o),
        "ingressclass.networking.k8s.io/nginx\nhorizontalpodautoscaler.autoscaling/h\nendpointslice.discovery.k8s.io/e\nresourcequota/q\nlimitrange/l\n",
        "{}",
        out(&o)
    );
}
