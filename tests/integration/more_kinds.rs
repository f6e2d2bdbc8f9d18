//! Ingresses, NetworkPolicies, PodDisruptionBudgets, PriorityClasses, RBAC, claims,
//! StorageClasses and Leases through kubectl 1.35 against `runbook lab serve`: each refused
//! in a 1.35 server's words (upstream's `pkg/apis/*/validation`, the words an independent
//! probe's cases expect), each valid form created, the v1 defaults read back, and what an
//! update may not change refused (#54).

use std::process::Output;

use crate::support::{LabServer, kubectl, kubectl_stdin};

/// One broken object: created as is it is refused with `message`; with `bad` replaced by
/// `good` it is created.
struct Case {
    manifest: &'static str,
    bad: &'static str,
    good: &'static str,
    message: &'static str,
}

const INGRESS: &str = "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: NAME, namespace: default}
spec:
  rules:
  - host: web.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: {service: {name: web, port: {number: 80}}}
";

const NETWORK_POLICY: &str = "apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: NAME, namespace: default}
spec:
  podSelector: {}
  ingress:
  - from: [{ipBlock: {cidr: 10.0.0.0/16, except: [10.0.3.0/24]}}]
    ports: [{port: 8080, endPort: 8090}]
";

const PDB: &str = "apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: NAME, namespace: default}
spec:
  selector: {matchLabels: {app: x}}
  minAvailable: 50%
";

const PRIORITY_CLASS: &str = "apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: NAME}
value: 1000
";

const ROLE: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: NAME, namespace: default}
rules:
- apiGroups: ['']
  resources: [pods]
  verbs: [get]
";

const BINDING: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: NAME}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- {kind: ServiceAccount, name: default, namespace: default}
";

const CLAIM: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: NAME, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
";

const STORAGE_CLASS: &str = "apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: NAME}
provisioner: ebs.csi.aws.com
reclaimPolicy: Retain
";

const LEASE: &str = "apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: NAME, namespace: default}
spec: {holderIdentity: a, leaseDurationSeconds: 15, leaseTransitions: 0}
";

fn cases() -> Vec<Case> {
    vec![
        Case {
            manifest: INGRESS,
            bad: "pathType: Prefix",
            good: "pathType: Exact",
            message: r#"spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix""#,
        },
        Case {
            manifest: INGRESS,
            bad: "host: web.example.com",
            good: "host: '*.example.com'",
            message: r#"spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address"#,
        },
        Case {
            manifest: INGRESS,
            bad: "{number: 80}",
            good: "{name: http}",
            message: r#"spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name & port number"#,
        },
        Case {
            manifest: NETWORK_POLICY,
            bad: "except: [10.0.3.0/24]",
            good: "except: [10.0.4.0/24]",
            message: r#"spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`"#,
        },
        Case {
            manifest: NETWORK_POLICY,
            bad: "endPort: 8090",
            good: "endPort: 8081",
            message: "spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`",
        },
        Case {
            manifest: PDB,
            bad: "minAvailable: 50%",
            good: "maxUnavailable: 1",
            message: r#"spec.minAvailable: Invalid value: "150%": must not be greater than 100%"#,
        },
        Case {
            manifest: PRIORITY_CLASS,
            bad: "value: 1000",
            good: "value: 1000000000",
            message: "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
        },
        Case {
            manifest: ROLE,
            bad: "  verbs: [get]",
            good: "  verbs: [list]",
            message: "rules[0].verbs: Required value: verbs must contain at least one value",
        },
        Case {
            manifest: BINDING,
            bad: ", namespace: default}",
            good: ", namespace: kube-system}",
            message: "subjects[0].namespace: Required value",
        },
        Case {
            manifest: CLAIM,
            bad: "[ReadWriteOnce]",
            good: "[ReadWriteOncePod]",
            message: "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
        },
        Case {
            manifest: STORAGE_CLASS,
            bad: "reclaimPolicy: Retain",
            good: "reclaimPolicy: Delete",
            message: r#"reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain""#,
        },
        Case {
            manifest: LEASE,
            bad: "leaseDurationSeconds: 15",
            good: "leaseDurationSeconds: 30",
            message: "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
        },
    ]
}

/// What each case's `bad` becomes to break it (the message names the broken value).
fn broken(case: &Case) -> String {
    let wrong = match case.bad {
        "pathType: Prefix" => "pathType: Regex",
        "host: web.example.com" => "host: 10.0.0.1",
        "{number: 80}" => "{number: 80, name: http}",
        "except: [10.0.3.0/24]" => "except: [10.1.0.0/24]",
        "endPort: 8090" => "endPort: 80",
        "minAvailable: 50%" => "minAvailable: 150%",
        "value: 1000" => "value: 1000000001",
        "  verbs: [get]" => "  verbs: []",
        ", namespace: default}" => "}",
        "[ReadWriteOnce]" => "[ReadWriteOncePod, ReadWriteOnce]",
        "reclaimPolicy: Retain" => "reclaimPolicy: Recycle",
        "leaseDurationSeconds: 15" => "leaseDurationSeconds: 0",
        other => other,
    };
    case.manifest.replacen(case.bad, wrong, 1)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn each_kind_is_refused_in_a_1_35_servers_words_and_its_valid_form_is_created() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("1000", &["--scenario", "empty"]);
    let create = |manifest: &str| kubectl_stdin(&binary, &lab, &["create", "-f", "-"], manifest);
    let mut failures = Vec::new();
    for (i, case) in cases().iter().enumerate() {
        let name = format!("k{i}");
        let manifest = |m: String| m.replace("NAME", &name);
        let message = case.message;
        let refused = create(&manifest(broken(case)));
        if refused.status.success() || !text(&refused).contains(message) {
            failures.push(format!(
                "case {i}: want\n  {message}\ngot\n  {}",
                text(&refused)
            ));
        }
        let good = manifest(case.manifest.replacen(case.bad, case.good, 1));
        let created = create(&good);
        if !created.status.success() {
            failures.push(format!(
                "case {i}: the valid form was refused: {}",
                text(&created)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn defaults_updates_and_the_one_global_default_class_are_a_1_35_servers() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("1000", &["--scenario", "empty"]);
    let k = |args: &[&str], stdin: &str| kubectl_stdin(&binary, &lab, args, stdin);
    let create = |manifest: String| {
        let o = k(&["create", "-f", "-"], &manifest);
        assert!(o.status.success(), "{}", text(&o));
    };
    let get = |args: &[&str]| String::from_utf8_lossy(&k(args, "").stdout).into_owned();
    // networking/v1 SetDefaults_NetworkPolicy(Port): Ingress, and Egress with egress rules.
    create(
        NETWORK_POLICY
            .replace("NAME", "np")
            .replace("  ingress:", "  egress:")
            .replace("from:", "to:"),
    );
    assert_eq!(
        get(&[
            "get",
            "networkpolicy",
            "np",
            "-o",
            "jsonpath={.spec.policyTypes[*]} {.spec.egress[0].ports[0].protocol}"
        ]),
        "Ingress Egress TCP"
    );
    create(CLAIM.replace("NAME", "claim"));
    assert_eq!(
        get(&[
            "get",
            "pvc",
            "claim",
            "-o",
            "jsonpath={.spec.volumeMode} {.status.phase}"
        ]),
        "Filesystem Pending"
    );
    create(
        STORAGE_CLASS
            .replace("NAME", "sc")
            .replace("reclaimPolicy: Retain\n", "parameters: {type: gp3}\n"),
    );
    assert_eq!(
        get(&[
            "get",
            "storageclass",
            "sc",
            "-o",
            "jsonpath={.reclaimPolicy} {.volumeBindingMode}"
        ]),
        "Delete Immediate"
    );
    let patched = k(
        &[
            "patch",
            "storageclass",
            "sc",
            "-p",
            r#"{"parameters":{"type":"io2"}}"#,
        ],
        "",
    );
    assert!(
        text(&patched).contains(r#"The StorageClass "sc" is invalid: parameters: Forbidden: updates to parameters are forbidden."#),
        "{}",
        text(&patched)
    );
    create(PRIORITY_CLASS.replace("NAME", "pc"));
    assert_eq!(
        get(&[
            "get",
            "priorityclass",
            "pc",
            "-o",
            "jsonpath={.preemptionPolicy}"
        ]),
        "PreemptLowerPriority"
    );
    let patched = k(
        &[
            "patch",
            "priorityclass",
            "pc",
            "--type",
            "merge",
            "-p",
            r#"{"value":2000}"#,
        ],
        "",
    );
    assert!(
        text(&patched).contains(r#"The PriorityClass "pc" is invalid: value: Forbidden: may not be changed in an update."#),
        "{}",
        text(&patched)
    );
    create(PRIORITY_CLASS.replace("NAME", "first") + "globalDefault: true\n");
    let second = k(
        &["create", "-f", "-"],
        &(PRIORITY_CLASS.replace("NAME", "second") + "globalDefault: true\n"),
    );
    assert!(
        text(&second).contains(r#"Error from server (Forbidden): error when creating "STDIN": priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass first is already marked as default. Only one default can exist"#),
        "{}",
        text(&second)
    );
    // rbac/v1 SetDefaults_ClusterRoleBinding: the role reference's group; then it is fixed.
    create(
        BINDING
            .replace("NAME", "crb")
            .replace("apiGroup: rbac.authorization.k8s.io, ", ""),
    );
    assert_eq!(
        get(&[
            "get",
            "clusterrolebinding",
            "crb",
            "-o",
            "jsonpath={.roleRef.apiGroup}"
        ]),
        "rbac.authorization.k8s.io"
    );
    let replaced = k(
        &["replace", "-f", "-"],
        &BINDING
            .replace("NAME", "crb")
            .replace("name: view", "name: edit"),
    );
    assert!(
        text(&replaced).contains(r#"The ClusterRoleBinding "crb" is invalid: roleRef: Invalid value: {"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"edit"}: cannot change roleRef"#),
        "{}",
        text(&replaced)
    );
    // A patch whose result is invalid is refused as the object would be.
    create(PDB.replace("NAME", "pdb"));
    let patched = k(
        &[
            "patch",
            "pdb",
            "pdb",
            "-n",
            "default",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"minAvailable":"150%"}}"#,
        ],
        "",
    );
    assert!(
        text(&patched).contains(r#"The PodDisruptionBudget "pdb" is invalid: spec.minAvailable: Invalid value: "150%": must not be greater than 100%"#),
        "{}",
        text(&patched)
    );
}
