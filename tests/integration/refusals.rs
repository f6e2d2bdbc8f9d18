//! The twin refuses what EKS refuses: a corpus of broken objects and calls, each with the
//! exact words the real server answers and where those words come from, sent by clients no
//! one here wrote (kubectl 1.35, the aws CLI) to `runbook lab serve`; the valid form of each
//! still goes through.

use std::process::{Command, Output};

use crate::support::{LabServer, kubectl, kubectl_stdin};

/// One broken object: applied as is it is refused with `message`; with `bad` replaced by
/// `good` it is accepted.
struct Case {
    name: &'static str,
    manifest: &'static str,
    bad: &'static str,
    good: &'static str,
    message: &'static str,
    /// Where the real server's words come from.
    source: &'static str,
}

const VALIDATION: &str = "kubernetes/kubernetes pkg/apis/core/validation/validation.go";
const APPS: &str = "kubernetes/kubernetes pkg/apis/apps/validation/validation.go";
const BATCH: &str = "kubernetes/kubernetes pkg/apis/batch/validation/validation.go";
const NAMES: &str = "kubernetes/apimachinery pkg/util/validation/validation.go";
const OBJECT_META: &str = "kubernetes/apimachinery pkg/api/validation/objectmeta.go (v0.35.0)";
const REGISTRY: &str = "kubernetes/kubernetes pkg/registry/core/service/storage/alloc.go";
const STRICT: &str = "kubernetes/kubernetes test/integration/apiserver/field_validation_test.go";

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
";

const POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  restartPolicy: Always
  dnsPolicy: ClusterFirst
  containers:
  - name: app
    image: busybox:1.36
    ports: [{containerPort: 8080}]
    resources:
      requests: {cpu: 500m}
      limits: {cpu: '1'}
";

const POD_WITH_VOLUME: &str = "apiVersion: v1
kind: Pod
metadata: {name: pv, namespace: default}
spec:
  volumes: [{name: data, emptyDir: {}}]
  containers:
  - name: app
    image: busybox:1.36
    volumeMounts: [{name: data, mountPath: /data, subPath: logs}]
";

const SERVICE: &str = "apiVersion: v1
kind: Service
metadata: {name: s1, namespace: default}
spec:
  type: ClusterIP
  selector: {app: web}
  ports: [{name: http, port: 80, protocol: TCP}]
";

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "unknown field",
            manifest: DEPLOYMENT,
            bad: "imagePullPolicy: IfNotPresent\n",
            good: "imagePullPolicy: IfNotPresent\n        resources: {}\n",
            message: r#"Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].resourcez""#,
            source: STRICT,
        },
        Case {
            name: "pull policy",
            manifest: DEPLOYMENT,
            bad: "IfNotPresent",
            good: "Always",
            message: r#"spec.template.spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never""#,
            source: VALIDATION,
        },
        Case {
            name: "negative replicas",
            manifest: DEPLOYMENT,
            bad: "replicas: 1",
            good: "replicas: 2",
            message: "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
            source: APPS,
        },
        Case {
            name: "selector not matching the template",
            manifest: DEPLOYMENT,
            bad: "labels: {app: web}",
            good: "labels: {app: web, tier: a}",
            message: r#"spec.template.metadata.labels: Invalid value: {"app":"other"}: `selector` does not match template `labels`"#,
            source: APPS,
        },
        Case {
            name: "deployment strategy",
            manifest: DEPLOYMENT,
            bad: "replicas: 1\n",
            good: "replicas: 1\n  strategy: {type: Recreate}\n",
            message: r#"spec.strategy: Unsupported value: {"type":"BlueGreen"}: supported values: "Recreate", "RollingUpdate""#,
            source: APPS,
        },
        Case {
            name: "template restart policy",
            manifest: DEPLOYMENT,
            bad: "    spec:\n      containers:",
            good: "    spec:\n      restartPolicy: Always\n      containers:",
            message: r#"spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always""#,
            source: VALIDATION,
        },
        Case {
            name: "container name",
            manifest: DEPLOYMENT,
            bad: "- name: web",
            good: "- name: web-1",
            message: r#"spec.template.spec.containers[0].name: Invalid value: "Web": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"#,
            source: NAMES,
        },
        Case {
            name: "pod restart policy",
            manifest: POD,
            bad: "restartPolicy: Always",
            good: "restartPolicy: OnFailure",
            message: r#"spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never""#,
            source: VALIDATION,
        },
        Case {
            name: "dns policy",
            manifest: POD,
            bad: "dnsPolicy: ClusterFirst",
            good: "dnsPolicy: Default",
            // validateDNSPolicy passes its own, unsorted list.
            message: r#"spec.dnsPolicy: Unsupported value: "Google": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None""#,
            source: VALIDATION,
        },
        Case {
            name: "dns policy None without a config",
            manifest: POD,
            bad: "dnsPolicy: ClusterFirst",
            good: "dnsPolicy: None\n  dnsConfig: {nameservers: [10.100.0.10]}",
            message: "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None",
            source: VALIDATION,
        },
        Case {
            name: "mount sub-path",
            manifest: POD_WITH_VOLUME,
            bad: "subPath: logs",
            good: "subPath: logs/app",
            message: r#"spec.containers[0].volumeMounts.subPath: Invalid value: "../logs": must not contain '..'"#,
            source: VALIDATION,
        },
        Case {
            name: "spread skew",
            manifest: POD,
            bad: "  dnsPolicy: ClusterFirst\n",
            good: "  dnsPolicy: ClusterFirst\n  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]\n",
            message: "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
            source: VALIDATION,
        },
        Case {
            name: "node affinity operator",
            manifest: POD,
            bad: "  dnsPolicy: ClusterFirst\n",
            good: "  dnsPolicy: ClusterFirst\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}}\n",
            message: r#"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator"#,
            source: VALIDATION,
        },
        Case {
            name: "container port",
            manifest: POD,
            bad: "containerPort: 8080",
            good: "containerPort: 9090",
            message: "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
            source: VALIDATION,
        },
        Case {
            name: "request over limit",
            manifest: POD,
            bad: "cpu: 500m",
            good: "cpu: 250m",
            message: r#"spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1"#,
            source: VALIDATION,
        },
        Case {
            name: "gpu request unlike its limit",
            manifest: POD,
            bad: "requests: {cpu: 500m}\n      limits: {cpu: '1'}",
            good: "requests: {cpu: 500m, nvidia.com/gpu: 2}\n      limits: {cpu: '1', nvidia.com/gpu: 2}",
            message: r#"spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2"#,
            source: VALIDATION,
        },
        Case {
            name: "quantity syntax",
            manifest: POD,
            bad: "cpu: 500m",
            good: "cpu: 0.5",
            message: r#"Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"#,
            source: "kubernetes/apimachinery pkg/api/resource/quantity.go (ErrFormatWrong)",
        },
        Case {
            name: "missing image",
            manifest: POD,
            bad: "    image: busybox:1.36\n",
            good: "    image: busybox:1.37\n",
            message: "spec.containers[0].image: Required value",
            source: VALIDATION,
        },
        Case {
            name: "toleration operator",
            manifest: POD,
            bad: "  dnsPolicy: ClusterFirst\n",
            good: "  dnsPolicy: ClusterFirst\n  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n",
            message: r#"spec.tolerations[0].operator: Unsupported value: "Like": supported values: "Equal", "Exists""#,
            source: VALIDATION,
        },
        Case {
            name: "pod name",
            manifest: POD,
            bad: "name: p,",
            good: "name: p-1,",
            message: r#"metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            source: NAMES,
        },
        Case {
            name: "label key",
            manifest: POD,
            bad: "name: p,",
            good: "name: p, labels: {app.kubernetes.io/name: p},",
            message: r#"metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#,
            source: NAMES,
        },
        Case {
            name: "service type",
            manifest: SERVICE,
            bad: "type: ClusterIP",
            good: "type: NodePort",
            message: r#"spec.type: Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort""#,
            source: VALIDATION,
        },
        Case {
            name: "service port",
            manifest: SERVICE,
            bad: "port: 80",
            good: "port: 8080",
            message: "spec.ports[0].port: Invalid value: 99999: must be between 1 and 65535, inclusive",
            source: VALIDATION,
        },
        Case {
            name: "service protocol",
            manifest: SERVICE,
            bad: "protocol: TCP",
            good: "protocol: UDP",
            message: r#"spec.ports[0].protocol: Unsupported value: "XTP": supported values: "SCTP", "TCP", "UDP""#,
            source: VALIDATION,
        },
        Case {
            name: "service name",
            manifest: SERVICE,
            bad: "name: s1,",
            good: "name: s2,",
            message: r#"metadata.name: Invalid value: "1st": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
            source: NAMES,
        },
        Case {
            name: "service node port on ClusterIP",
            manifest: SERVICE,
            bad: "protocol: TCP}",
            good: "protocol: TCP, targetPort: 8080}",
            message: "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
            source: VALIDATION,
        },
        Case {
            name: "job restart policy",
            manifest: "apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox:1.36, command: [\"true\"]}]
",
            bad: "restartPolicy: Never",
            good: "restartPolicy: OnFailure",
            message: r#"spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#,
            source: BATCH,
        },
        Case {
            name: "cron job concurrency",
            manifest: "apiVersion: batch/v1
kind: CronJob
metadata: {name: cj, namespace: default}
spec:
  schedule: '*/5 * * * *'
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox:1.36}]
",
            bad: "concurrencyPolicy: Forbid",
            good: "concurrencyPolicy: Replace",
            message: r#"spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace""#,
            source: BATCH,
        },
        Case {
            name: "config key",
            manifest: "apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: default}
data: {good.key: v}
",
            bad: "good.key",
            good: "other_key",
            message: r#"data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"#,
            source: NAMES,
        },
        Case {
            name: "negative request",
            manifest: POD,
            bad: "requests: {cpu: 500m}",
            good: "requests: {cpu: 250m}",
            message: r#"spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0"#,
            source: VALIDATION,
        },
        Case {
            name: "duplicate port name",
            manifest: POD,
            bad: "ports: [{containerPort: 8080}]",
            good: "ports: [{name: http, containerPort: 8080}, {name: admin, containerPort: 8081}]",
            message: r#"spec.containers[0].ports[1].name: Duplicate value: "http""#,
            source: VALIDATION,
        },
        Case {
            name: "environment variable name",
            manifest: POD,
            bad: "ports: [{containerPort: 8080}]",
            good: "ports: [{containerPort: 8080}]\n    env: [{name: MODE, value: fast}]",
            message: r#"spec.containers[0].env[0].name: Invalid value: "MODE=x": a valid environment variable name must consist only of printable ASCII characters other than '='"#,
            source: VALIDATION,
        },
        Case {
            name: "two probe handlers",
            manifest: POD,
            bad: "ports: [{containerPort: 8080}]",
            good: "ports: [{containerPort: 8080}]\n    livenessProbe: {tcpSocket: {port: 8080}}",
            message: "spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type",
            source: VALIDATION,
        },
        Case {
            name: "rolling update that cannot progress",
            manifest: DEPLOYMENT,
            bad: "replicas: 1\n",
            good: "replicas: 1\n  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n",
            message: "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0",
            source: APPS,
        },
        Case {
            name: "progress deadline",
            manifest: DEPLOYMENT,
            bad: "replicas: 1\n",
            good: "replicas: 1\n  minReadySeconds: 5\n  progressDeadlineSeconds: 60\n",
            message: "spec.progressDeadlineSeconds: Invalid value: 60: must be greater than minReadySeconds",
            source: APPS,
        },
        Case {
            name: "owner reference without uid",
            manifest: POD,
            bad: "namespace: default}",
            good: "namespace: default, ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: cm, uid: 6f1d0c5e-1111-4222-8333-944455556666}]}",
            message: r#"metadata.ownerReferences.uid: Invalid value: "": must not be empty"#,
            source: OBJECT_META,
        },
        Case {
            name: "finalizer name",
            manifest: POD,
            bad: "namespace: default}",
            good: "namespace: default, finalizers: [example.com/cleanup]}",
            message: r#"metadata.finalizers[0]: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified"#,
            source: VALIDATION,
        },
        Case {
            name: "cluster IP outside the service range",
            manifest: "apiVersion: v1\nkind: Service\nmetadata: {name: s-ip, namespace: default}\nspec:\n  type: ClusterIP\n  ports: [{port: 80}]\n",
            bad: "type: ClusterIP",
            good: "type: ClusterIP\n  clusterIP: 10.100.0.50",
            message: r#"spec.clusterIPs: Invalid value: ["10.0.0.50"]: failed to allocate IP 10.0.0.50: the provided network does not match the current range"#,
            source: REGISTRY,
        },
        Case {
            name: "session affinity timeout",
            manifest: "apiVersion: v1\nkind: Service\nmetadata: {name: s-aff, namespace: default}\nspec:\n  sessionAffinity: None\n  ports: [{port: 80}]\n",
            bad: "sessionAffinity: None",
            good: "sessionAffinity: ClientIP\n  sessionAffinityConfig: {clientIP: {timeoutSeconds: 600}}",
            message: "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400",
            source: VALIDATION,
        },
        Case {
            name: "node port outside its range",
            manifest: "apiVersion: v1\nkind: Service\nmetadata: {name: s-np, namespace: default}\nspec:\n  type: NodePort\n  ports: [{port: 80, protocol: TCP}]\n",
            bad: "port: 80, protocol: TCP}",
            good: "port: 80, protocol: TCP, nodePort: 30080}",
            message: "spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767",
            source: REGISTRY,
        },
        Case {
            name: "key in data and binaryData",
            manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm2, namespace: default}\ndata: {a: v}\nbinaryData: {b: YmFy}\n",
            bad: "binaryData: {b: YmFy}",
            good: "binaryData: {c: YmFy}",
            message: r#"data[a]: Invalid value: "a": duplicate of key present in binaryData"#,
            source: VALIDATION,
        },
    ]
}

/// The broken form of each case: what `bad` turns into.
fn broken(case: &Case) -> String {
    let wrong = match case.name {
        "unknown field" => "imagePullPolicy: IfNotPresent\n        resourcez: {}\n",
        "pull policy" => "Sometimes",
        "negative replicas" => "replicas: -1",
        "selector not matching the template" => "labels: {app: other}",
        "deployment strategy" => "replicas: 1\n  strategy: {type: BlueGreen}\n",
        "template restart policy" => "    spec:\n      restartPolicy: Never\n      containers:",
        "container name" => "- name: Web",
        "pod restart policy" => "restartPolicy: Sometimes",
        "dns policy" => "dnsPolicy: Google",
        "dns policy None without a config" => "dnsPolicy: None",
        "mount sub-path" => "subPath: ../logs",
        "spread skew" => {
            "  dnsPolicy: ClusterFirst\n  topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]\n"
        }
        "node affinity operator" => {
            "  dnsPolicy: ClusterFirst\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: Foo, values: [a]}]}]}}}\n"
        }
        "container port" => "containerPort: 70000",
        "request over limit" => "cpu: '2'",
        "gpu request unlike its limit" => {
            "requests: {cpu: 500m, nvidia.com/gpu: 1}\n      limits: {cpu: '1', nvidia.com/gpu: 2}"
        }
        "quantity syntax" => "cpu: 5x",
        "missing image" => "",
        "toleration operator" => {
            "  dnsPolicy: ClusterFirst\n  tolerations: [{key: nvidia.com/gpu, operator: Like}]\n"
        }
        "pod name" => "name: Bad_Name,",
        "label key" => "name: p, labels: {bad key!: p},",
        "service type" => "type: Bogus",
        "service port" => "port: 99999",
        "service protocol" => "protocol: XTP",
        "service name" => "name: 1st,",
        "service node port on ClusterIP" => "protocol: TCP, nodePort: 30080}",
        "job restart policy" => "restartPolicy: Always",
        "cron job concurrency" => "concurrencyPolicy: Sometimes",
        "config key" => "bad key",
        "negative request" => "requests: {cpu: '-1'}",
        "duplicate port name" => {
            "ports: [{name: http, containerPort: 8080}, {name: http, containerPort: 8081}]"
        }
        "environment variable name" => {
            "ports: [{containerPort: 8080}]\n    env: [{name: MODE=x, value: fast}]"
        }
        "two probe handlers" => {
            "ports: [{containerPort: 8080}]\n    livenessProbe: {exec: {command: ['true']}, tcpSocket: {port: 8080}}"
        }
        "rolling update that cannot progress" => {
            "replicas: 1\n  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}\n"
        }
        "progress deadline" => {
            "replicas: 1\n  minReadySeconds: 60\n  progressDeadlineSeconds: 60\n"
        }
        "owner reference without uid" => {
            "namespace: default, ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: cm}]}"
        }
        "finalizer name" => "namespace: default, finalizers: [cleanup]}",
        "cluster IP outside the service range" => "type: ClusterIP\n  clusterIP: 10.0.0.50",
        "session affinity timeout" => {
            "sessionAffinity: ClientIP\n  sessionAffinityConfig: {clientIP: {timeoutSeconds: 0}}"
        }
        "node port outside its range" => "port: 80, protocol: TCP, nodePort: 80}",
        "key in data and binaryData" => "binaryData: {a: YmFy}",
        other => panic!("no broken form for {other}"),
    };
    case.manifest.replacen(case.bad, wrong, 1)
}

fn kubectl_apply(binary: &std::path::Path, lab: &LabServer, manifest: &str) -> Output {
    kubectl_stdin(binary, lab, &["apply", "-f", "-"], manifest)
}

#[test]
fn kubectl_is_refused_with_the_api_servers_words_and_the_valid_forms_apply() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("1000", &["--scenario", "empty"]);
    let mut failures = Vec::new();
    let all = cases();
    assert!(
        all.len() >= 25,
        "the corpus holds {} Kubernetes cases",
        all.len()
    );
    for case in &all {
        assert!(
            case.manifest.contains(case.bad),
            "{}: `bad` is not in the manifest",
            case.name
        );
        let refused = kubectl_apply(&binary, &lab, &broken(case));
        let stderr = String::from_utf8_lossy(&refused.stderr);
        if refused.status.success() || !stderr.contains(case.message) {
            failures.push(format!(
                "{} ({}): expected a refusal with\n  {}\ngot (exit {:?})\n  {}",
                case.name,
                case.source,
                case.message,
                refused.status.code(),
                stderr.trim()
            ));
        }
        let accepted = kubectl_apply(
            &binary,
            &lab,
            &case.manifest.replacen(case.bad, case.good, 1),
        );
        if !accepted.status.success() {
            failures.push(format!(
                "{}: the valid form was refused: {}",
                case.name,
                String::from_utf8_lossy(&accepted.stderr).trim()
            ));
        }
        // A Pod's spec may not change once made (ValidatePodUpdate): each case makes its own.
        if case.manifest.contains("kind: Pod\n") {
            let good = case.manifest.replacen(case.bad, case.good, 1);
            kubectl_stdin(
                &binary,
                &lab,
                &["delete", "--grace-period=0", "--force", "-f", "-"],
                &good,
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Immutable fields, the Warn default and its `Warning` lines, Ignore, duplicate fields in a
/// raw body, and a custom resource by its CRD's schema.
#[test]
fn updates_warnings_duplicates_and_custom_resources_as_the_api_server_answers_them() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("1000", &["--scenario", "empty"]);
    let apply = |manifest: &str| kubectl_stdin(&binary, &lab, &["apply", "-f", "-"], manifest);

    // A Deployment's selector may not change (ValidateDeploymentUpdate).
    assert!(apply(DEPLOYMENT).status.success());
    let moved = DEPLOYMENT.replace("{app: web}", "{app: web2}");
    let out = apply(&moved);
    assert!(!out.status.success());
    assert!(
        stderr_of(&out).contains(
            r#"spec.selector: Invalid value: {"matchLabels":{"app":"web2"}}: field is immutable"#
        ),
        "{}",
        stderr_of(&out)
    );

    // An immutable ConfigMap keeps its data (ValidateConfigMapUpdate).
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen, namespace: default}\nimmutable: true\ndata: {a: '1'}\n";
    assert!(apply(config).status.success());
    let out = apply(&config.replace("'1'", "'2'"));
    assert!(
        stderr_of(&out).contains("data: Forbidden: field is immutable when `immutable` is set"),
        "{}",
        stderr_of(&out)
    );

    // --validate=warn sends fieldValidation=Warn: created, the field dropped, a Warning line.
    let typo = DEPLOYMENT.replace("name: web,", "name: typo,").replace(
        "imagePullPolicy: IfNotPresent\n",
        "imagePullPolicy: IfNotPresent\n        resourcez: {}\n",
    );
    let out = kubectl_stdin(
        &binary,
        &lab,
        &["create", "--validate=warn", "-f", "-"],
        &typo,
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out)
            .contains(r#"Warning: unknown field "spec.template.spec.containers[0].resourcez""#),
        "{}",
        stderr_of(&out)
    );
    let stored = kubectl_stdin(
        &binary,
        &lab,
        &["get", "deployment", "typo", "-o", "json"],
        "",
    );
    assert!(!String::from_utf8_lossy(&stored.stdout).contains("resourcez"));
    // --validate=false sends Ignore: no warning at all.
    let ignored = typo.replace("name: typo,", "name: typo2,");
    let out = kubectl_stdin(
        &binary,
        &lab,
        &["create", "--validate=false", "-f", "-"],
        &ignored,
    );
    assert!(
        out.status.success() && !stderr_of(&out).contains("Warning"),
        "{}",
        stderr_of(&out)
    );

    // Duplicate fields in a raw JSON body, reported in document order (the body and answer of
    // Kubernetes' own field_validation_test, `invalidBodyJSON` with Strict).
    let body = r#"{"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "dupename", "name": "dup", "labels": {"app": "nginx"}, "unknownMeta": "metaVal"},
        "spec": {"unknown1": "val1", "unknownDupe": "valDupe", "unknownDupe": "valDupe2",
                 "paused": true, "paused": false,
                 "selector": {"matchLabels": {"app": "nginx"}},
                 "template": {"metadata": {"labels": {"app": "nginx"}},
                              "spec": {"containers": [{"name": "nginx", "image": "nginx:latest",
                                        "unknownNested": "val1", "imagePullPolicy": "Always",
                                        "imagePullPolicy": "Never"}]}}}}"#;
    let out = Command::new("curl")
        .args(["-s", "-X", "POST", "--cacert"])
        .arg(&lab.ca_file)
        .args([
            "-H",
            &format!(
                "Authorization: Bearer {}",
                lab.env_value("RUNBOOK_LAB_TOKEN")
            ),
        ])
        .args([
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            body,
        ])
        .arg(format!(
            "{}/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict",
            lab.url
        ))
        .output()
        .expect("curl runs");
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a Status");
    assert_eq!(status["code"], 400, "{status}");
    assert_eq!(
        status["message"],
        r#"Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: duplicate field "metadata.name", unknown field "metadata.unknownMeta", unknown field "spec.unknown1", unknown field "spec.unknownDupe", duplicate field "spec.paused", unknown field "spec.template.spec.containers[0].unknownNested", duplicate field "spec.template.spec.containers[0].imagePullPolicy""#
    );

    // A custom resource by its CRD's structural schema; preserved fields stay.
    let crd = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
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
              size: {type: integer}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
";
    assert!(apply(crd).status.success());
    let widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec: {size: 3, colour: red, extra: {anything: 1}}\n";
    let out = apply(widget);
    assert!(
        stderr_of(&out).contains(r#"Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.colour""#),
        "{}",
        stderr_of(&out)
    );
    let out = apply(&widget.replace(" colour: red,", ""));
    assert!(out.status.success(), "{}", stderr_of(&out));

    // A custom resource's values by its schema's rules, in kube-openapi's words as the
    // apiextensions-apiserver turns them into field errors.
    let gadgets = crd
        .replace("widgets", "gadgets")
        .replace("widget", "gadget")
        .replace("Widget", "Gadget")
        .replace(
            "            properties:\n              size: {type: integer}",
            "            required: [size]\n            properties:\n              size: {type: integer, minimum: 1, maximum: 10}\n              mode: {type: string, enum: [fast, safe]}\n              name: {type: string, pattern: '^[a-z]+$'}\n              label: {type: string, maxLength: 5}\n              tags: {type: array, maxItems: 2, x-kubernetes-list-type: set, items: {type: string}}",
        );
    assert!(apply(&gadgets).status.success());
    let gadget = "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: default}\nspec: {size: 0, mode: slow, name: Web1}\n";
    let out = apply(gadget);
    let err = stderr_of(&out);
    assert!(!out.status.success());
    for cause in [
        "The Gadget \"g\" is invalid: ",
        "spec.mode: Unsupported value: \"slow\": supported values: \"fast\", \"safe\"",
        "spec.name: Invalid value: \"Web1\": spec.name in body should match '^[a-z]+$'",
        "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1",
    ] {
        assert!(err.contains(cause), "{cause} in {err}");
    }
    let out = apply(&gadget.replace("size: 0, mode: slow, name: Web1", "mode: fast"));
    assert!(
        stderr_of(&out).contains("spec.size: Required value"),
        "{}",
        stderr_of(&out)
    );
    let out = apply(
        &gadget
            .replace("size: 0", "size: \"big\"")
            .replace(", mode: slow, name: Web1", ""),
    );
    assert!(
        stderr_of(&out).contains("spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\""),
        "{}",
        stderr_of(&out)
    );
    // Lengths and counts as apiextensions-apiserver v0.35.0 words them (TooLong, TooMany,
    // a list-type set's duplicate).
    let out = apply(&gadget.replace(
        "size: 0, mode: slow, name: Web1",
        "size: 3, label: toolong, tags: [a, b, a]",
    ));
    let err = stderr_of(&out);
    for cause in [
        "spec.label: Too long: may not be more than 5 bytes",
        "spec.tags: Too many: 3: must have at most 2 items",
        r#"spec.tags[2]: Duplicate value: "a""#,
    ] {
        assert!(err.contains(cause), "{cause} in {err}");
    }
    let out = apply(&gadget.replace(
        "size: 0, mode: slow, name: Web1",
        "size: 3, mode: safe, name: web",
    ));
    assert!(out.status.success(), "{}", stderr_of(&out));

    // Field selectors the kind's API supports, and the server's words for the others.
    let get = |args: &[&str]| kubectl_stdin(&binary, &lab, args, "");
    let out = get(&[
        "get",
        "pods",
        "-A",
        "--field-selector",
        "spec.nodeName=n1,status.phase=Running",
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let out = get(&["get", "pods", "-A", "--field-selector", "spec.foo=x"]);
    assert!(
        stderr_of(&out).contains("field label not supported: spec.foo"),
        "{}",
        stderr_of(&out)
    );
    let out = get(&[
        "get",
        "deployments",
        "-A",
        "--field-selector",
        "spec.replicas=1",
    ]);
    assert!(
        stderr_of(&out).contains(r#""spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace""#),
        "{}",
        stderr_of(&out)
    );
}

/// The aws CLI against the lab's EC2, EKS and IAM: each refusal in the service's own code and
/// words (sources in src/sim/aws/parameters.rs), and the valid call accepted.
#[test]
fn the_aws_cli_is_refused_with_each_services_words() {
    let lab = LabServer::start("1000");
    let group = runbook::lab::NODE_SG;
    let node_group = |extra: &'static [&'static str]| -> Vec<&'static str> {
        [
            &[
                "eks",
                "create-nodegroup",
                "--cluster-name",
                "myeks5w",
                "--nodegroup-name",
                "t1",
                "--subnets",
                "subnet-0abc9012",
                "--node-role",
                "arn:aws:iam::123456789012:role/node",
            ][..],
            extra,
        ]
        .concat()
    };
    let taint = node_group(&["--taints", "key=dedicated,value=gpu,effect=NoSchedule"]);
    let label = node_group(&["--labels", r#"{"role": "gpu node!"}"#]);
    let cases: [(&[&str], &str); 9] = [
        (
            &["eks", "describe-cluster", "--name", "my.cluster"],
            "(InvalidParameterException) when calling the DescribeCluster operation: The name parameter contains invalid characters. It should conform to the regular expression \"^[0-9A-Za-z][A-Za-z0-9-_]*\"In other words, it should start with a number or letter, and can contain numbers, letters, dashes, and underscores.",
        ),
        (
            &taint,
            "(InvalidParameterException) when calling the CreateNodegroup operation: Invalid taint effect: NoSchedule, must be one of these [NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE]",
        ),
        (
            &label,
            "(InvalidParameterException) when calling the CreateNodegroup operation: Invalid value: gpu node!: field must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        ),
        (
            &[
                "ec2",
                "authorize-security-group-ingress",
                "--group-id",
                group,
                "--ip-permissions",
                "IpProtocol=tcp,FromPort=9000,ToPort=9000,IpRanges=[{CidrIp=10.0.0.0/33}]",
            ],
            "(InvalidParameterValue) when calling the AuthorizeSecurityGroupIngress operation: CIDR block 10.0.0.0/33 is malformed",
        ),
        (
            &[
                "ec2",
                "authorize-security-group-ingress",
                "--group-id",
                group,
                "--ip-permissions",
                "IpProtocol=tcp,FromPort=-1,ToPort=80,IpRanges=[{CidrIp=10.0.0.0/16}]",
            ],
            "(InvalidParameterValue) when calling the AuthorizeSecurityGroupIngress operation: TCP/UDP (from) port (-1) out of range",
        ),
        (
            &[
                "ec2",
                "authorize-security-group-ingress",
                "--group-id",
                group,
                "--ip-permissions",
                "IpProtocol=bogus,FromPort=1,ToPort=2,IpRanges=[{CidrIp=10.0.0.0/16}]",
            ],
            "(InvalidParameterValue) when calling the AuthorizeSecurityGroupIngress operation: Invalid value 'bogus' for IP protocol. Unknown protocol.",
        ),
        (
            &[
                "ec2",
                "authorize-security-group-egress",
                "--group-id",
                group,
                "--ip-permissions",
                "IpProtocol=icmp,FromPort=8,ToPort=65535,IpRanges=[{CidrIp=10.0.0.0/16}]",
            ],
            "(InvalidParameterValue) when calling the AuthorizeSecurityGroupEgress operation: ICMP code (65535) out of range",
        ),
        (
            &[
                "eks",
                "update-nodegroup-config",
                "--cluster-name",
                "myeks5w",
                "--nodegroup-name",
                "gpu",
                "--scaling-config",
                "minSize=0,maxSize=2,desiredSize=5",
            ],
            "(InvalidParameterException) when calling the UpdateNodegroupConfig operation: desired capacity 5 can't be greater than max size 2",
        ),
        (
            &[
                "iam",
                "create-role",
                "--role-name",
                "a role",
                "--assume-role-policy-document",
                "{}",
            ],
            "(ValidationError) when calling the CreateRole operation: 1 validation error detected: Value 'a role' at 'roleName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+",
        ),
    ];
    for (args, message) in cases {
        let out = lab.aws(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(message),
            "aws {}\nexpected {message}\ngot {stderr}",
            args.join(" ")
        );
    }
    // Names, counts and lengths EKS's API bounds.
    let long_name = "g".repeat(64);
    let taints: Vec<String> = (0..51)
        .map(|i| format!(r#"{{"key": "k{i}", "value": "v", "effect": "NO_SCHEDULE"}}"#))
        .collect();
    let taints = format!("[{}]", taints.join(", "));
    let tags = format!(r#"{{"{}": "x"}}"#, "k".repeat(129));
    let long_cluster = "c".repeat(101);
    let long_cluster_refused = format!(
        "(InvalidParameterException) when calling the CreateCluster operation: 1 validation error detected: Value '{long_cluster}' at 'name' failed to satisfy constraint: Member must have length less than or equal to 100"
    );
    let bounded: [(Vec<&str>, &str); 4] = [
        (
            vec![
                "eks",
                "create-cluster",
                "--name",
                &long_cluster,
                "--role-arn",
                "arn:aws:iam::123456789012:role/eks",
                "--resources-vpc-config",
                "subnetIds=subnet-0abc9012,subnet-0def3456",
            ],
            &long_cluster_refused,
        ),
        (
            node_group(&[])
                .into_iter()
                .map(|a| if a == "t1" { long_name.as_str() } else { a })
                .collect(),
            "(InvalidParameterException) when calling the CreateNodegroup operation: nodeGroupName can't be longer than 63 characters!",
        ),
        (
            [node_group(&[]), vec!["--taints", &taints]].concat(),
            "(InvalidParameterException) when calling the CreateNodegroup operation: 1 validation error detected: Value '[51 taints]' at 'taints' failed to satisfy constraint: Member must have length less than or equal to 50",
        ),
        (
            [node_group(&[]), vec!["--tags", &tags]].concat(),
            "at 'tags' failed to satisfy constraint: Map keys must satisfy constraint: [Member must have length less than or equal to 128, Member must have length greater than or equal to 1]",
        ),
    ];
    for (args, message) in bounded {
        let out = lab.aws(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(message),
            "aws {}\nexpected {message}\ngot {stderr}",
            args.join(" ")
        );
    }
    // EKS takes a node group of a type that does not exist and fails it afterwards.
    let huge: Vec<&str> = node_group(&["--instance-types", "p5.96xlarge"])
        .into_iter()
        .map(|a| if a == "t1" { "huge" } else { a })
        .collect();
    let created = lab.aws(&huge);
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let described = lab.aws(&[
        "eks",
        "describe-nodegroup",
        "--cluster-name",
        "myeks5w",
        "--nodegroup-name",
        "huge",
        "--query",
        "[nodegroup.status, nodegroup.health.issues[0].code, nodegroup.health.issues[0].message]",
        "--output",
        "text",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&described.stdout).trim(),
        "CREATE_FAILED\tEc2LaunchTemplateInvalidConfiguration\tThe specified instance type p5.96xlarge is not valid"
    );
    let valid = lab.aws(&[
        "ec2",
        "authorize-security-group-ingress",
        "--group-id",
        group,
        "--ip-permissions",
        "IpProtocol=tcp,FromPort=9000,ToPort=9000,IpRanges=[{CidrIp=10.0.0.0/16}]",
    ]);
    assert!(
        valid.status.success(),
        "{}",
        String::from_utf8_lossy(&valid.stderr)
    );
}

/// EC2's and EKS's own words for ids, CIDRs, ports and sizes, as the aws CLI prints them (each
/// message's source in src/sim/aws/parameters.rs); a CIDR is kept as its network and all
/// protocols ignore ports, as EC2 does.
#[test]
fn the_aws_cli_meets_ec2s_and_eks_words_for_ids_cidrs_ports_and_sizes() {
    let lab = LabServer::start("1000");
    let group = runbook::lab::NODE_SG;
    let ingress = |permission: &str| {
        lab.aws(&[
            "ec2",
            "authorize-security-group-ingress",
            "--group-id",
            group,
            "--ip-permissions",
            permission,
        ])
    };
    let refused = |out: Output, message: &str| {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(message),
            "expected {message}\ngot {stderr}"
        );
    };
    let passed = |out: Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    refused(
        lab.aws(&[
            "ec2",
            "authorize-security-group-ingress",
            "--group-id",
            "web",
            "--ip-permissions",
            "IpProtocol=tcp,FromPort=80,ToPort=80,IpRanges=[{CidrIp=10.0.0.0/16}]",
        ]),
        "(InvalidGroupId.Malformed) when calling the AuthorizeSecurityGroupIngress operation: Invalid id: \"web\" (expecting \"sg-...\")",
    );
    refused(
        lab.aws(&["ec2", "describe-security-groups", "--group-ids", "sg-xyz"]),
        "(InvalidGroupId.Malformed) when calling the DescribeSecurityGroups operation: Invalid id: \"sg-xyz\"",
    );
    refused(
        lab.aws(&[
            "ec2",
            "describe-security-groups",
            "--group-ids",
            "sg-0123abcd",
        ]),
        "(InvalidGroup.NotFound) when calling the DescribeSecurityGroups operation: The security group 'sg-0123abcd' does not exist",
    );
    refused(
        ingress("IpProtocol=tcp,IpRanges=[{CidrIp=10.1.0.0/16}]"),
        "(InvalidParameterValue) when calling the AuthorizeSecurityGroupIngress operation: Invalid value for portRange. Must specify both from and to ports with TCP/UDP.",
    );
    // Host bits are cleared: the same network given twice is a duplicate.
    passed(ingress(
        "IpProtocol=tcp,FromPort=9100,ToPort=9100,IpRanges=[{CidrIp=10.8.10.0/16}]",
    ));
    refused(
        ingress("IpProtocol=tcp,FromPort=9100,ToPort=9100,IpRanges=[{CidrIp=10.8.0.0/16}]"),
        "(InvalidPermission.Duplicate) when calling the AuthorizeSecurityGroupIngress operation: the specified rule \"peer: 10.8.0.0/16, TCP, from port: 9100, to port: 9100, ALLOW\" already exists",
    );
    // All protocols: every port, whatever ports are given; revoked with other ports too.
    passed(ingress(
        "IpProtocol=-1,FromPort=5,ToPort=6,IpRanges=[{CidrIp=10.9.0.0/16}]",
    ));
    refused(
        ingress("IpProtocol=-1,IpRanges=[{CidrIp=10.9.0.0/16}]"),
        "the specified rule \"peer: 10.9.0.0/16, ALL, ALLOW\" already exists",
    );
    let rules = lab.aws(&[
        "ec2",
        "describe-security-group-rules",
        "--filters",
        &format!("Name=group-id,Values={group}"),
        "--query",
        "SecurityGroupRules[?CidrIpv4=='10.9.0.0/16' || CidrIpv4=='10.8.0.0/16'].[CidrIpv4,IpProtocol,FromPort,ToPort]",
        "--output",
        "text",
    ]);
    let listed = String::from_utf8_lossy(&rules.stdout).to_string();
    assert!(listed.contains("10.8.0.0/16\ttcp\t9100\t9100"), "{listed}");
    assert!(listed.contains("10.9.0.0/16\t-1\t-1\t-1"), "{listed}");
    passed(lab.aws(&[
        "ec2",
        "revoke-security-group-ingress",
        "--group-id",
        group,
        "--ip-permissions",
        "IpProtocol=-1,FromPort=1,ToPort=2,IpRanges=[{CidrIp=10.9.0.0/16}]",
    ]));
    // Node groups: each call's words for its sizes, and the AMI's architecture.
    let node_group = |extra: &[&str]| {
        let mut args = vec![
            "eks",
            "create-nodegroup",
            "--cluster-name",
            "myeks5w",
            "--nodegroup-name",
            "t2",
            "--subnets",
            "subnet-0abc9012",
            "--node-role",
            "arn:aws:iam::123456789012:role/node",
        ];
        args.extend(extra);
        lab.aws(&args)
    };
    refused(
        node_group(&["--scaling-config", "minSize=0,maxSize=1,desiredSize=2"]),
        "(InvalidParameterException) when calling the CreateNodegroup operation: desiredSize can't be greater than maxSize",
    );
    refused(
        node_group(&["--ami-type", "AL2_x86_64", "--instance-types", "t4g.small"]),
        "(InvalidParameterException) when calling the CreateNodegroup operation: [t4g.small] is not a valid instance type for requested amiType AL2_x86_64",
    );
    passed(node_group(&[
        "--ami-type",
        "AL2023_ARM_64_STANDARD",
        "--instance-types",
        "m7g.large",
    ]));
}

/// moto_server, a second opinion where it validates: it also refuses a malformed CIDR with
/// InvalidParameterValue (in its own words), the code the twin and EC2 answer with, and the
/// runbook primitive surfaces that code from either.
#[test]
fn moto_agrees_on_the_code_of_a_malformed_cidr() {
    let Some(moto) = crate::moto::moto() else {
        return;
    };
    let aws = |args: &[&str]| {
        let out = Command::new("aws")
            .args(["--endpoint-url", &moto.url, "--output", "text"])
            .args(args)
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_DEFAULT_REGION", "ap-northeast-2")
            .output()
            .expect("the aws CLI runs");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let vpc = aws(&[
        "ec2",
        "create-vpc",
        "--cidr-block",
        "10.0.0.0/16",
        "--query",
        "Vpc.VpcId",
    ]);
    let group = aws(&[
        "ec2",
        "create-security-group",
        "--group-name",
        "refusals",
        "--description",
        "t",
        "--vpc-id",
        &vpc,
        "--query",
        "GroupId",
    ]);
    let script = format!(
        r#"let code = "accepted"; try {{ ec2::authorize("{group}", #{{ protocol: "tcp", port: 9000, source: "10.0.0.0/33" }}); }} catch (e) {{ code = e.code; }} code"#
    );
    let ran = crate::support::Runbook::new()
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .args(["eval", "--aws-endpoint", &moto.url, &script])
        .run();
    assert_eq!(
        ran.stdout().trim(),
        "InvalidParameterValue",
        "{}",
        ran.stderr()
    );
}

/// A plan rehearses on the twin, so it stops where EKS would: at the step whose manifest the
/// API server refuses, in its words, before anything after it (the GPU scale-up) is planned.
#[test]
fn a_plan_of_a_broken_manifest_fails_at_that_step_with_the_servers_words() {
    let ran = crate::support::Runbook::new()
        .args(["plan", "tests/data/broken-manifest.rhai"])
        .run();
    let out = ran.stdout();
    assert!(
        out.contains(
            "k8s::apply apps/v1/Deployment default/probe  [deployment/default/probe, fails]"
        ),
        "{out}"
    );
    assert!(
        out.contains(r#"Deployment.apps "probe" is invalid: spec.template.spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never""#),
        "{out}"
    );
    assert!(!out.contains("scale_nodegroup"), "{out}");
}

/// A deleted namespace is Terminating while its content goes: a create into it is refused
/// with the API server's 403 (NamespaceLifecycle), then the namespace and all in it are gone.
#[test]
fn a_terminating_namespace_refuses_new_content_then_goes_with_its_content() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    // At real speed, so the namespace stays Terminating for the twin's 5 s.
    let lab = LabServer::start_with("1", &["--scenario", "empty"]);
    let k = |args: &[&str]| kubectl_stdin(&binary, &lab, args, "");
    assert!(k(&["create", "namespace", "demo"]).status.success());
    assert!(
        k(&[
            "create",
            "configmap",
            "settings",
            "-n",
            "demo",
            "--from-literal=a=1"
        ])
        .status
        .success()
    );
    assert!(
        k(&["delete", "namespace", "demo", "--wait=false"])
            .status
            .success()
    );
    let refused = k(&[
        "create",
        "configmap",
        "late",
        "-n",
        "demo",
        "--from-literal=a=1",
    ]);
    assert!(
        stderr_of(&refused).contains(r#"configmaps "late" is forbidden: unable to create new content in namespace demo because it is being terminated"#),
        "{}",
        stderr_of(&refused)
    );
    let phase = k(&["get", "namespace", "demo", "-o", "jsonpath={.status.phase}"]);
    assert_eq!(String::from_utf8_lossy(&phase.stdout), "Terminating");
    let gone = k(&["wait", "--for=delete", "namespace/demo", "--timeout=30s"]);
    assert!(gone.status.success(), "{}", stderr_of(&gone));
    let left = k(&["get", "configmaps", "-n", "demo", "-o", "name"]);
    assert_eq!(
        String::from_utf8_lossy(&left.stdout).trim(),
        "",
        "nothing is left in it"
    );
}
