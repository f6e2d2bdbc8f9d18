//! Server-side apply through kubectl 1.35 against `lab serve`, held to the API server's field
//! ownership: a second manager that applies another value of a field the first owns is
//! refused 409 in the API server's words; equal values are co-owned; `--force-conflicts` takes
//! the field over; an update (`kubectl scale`) takes over what it changes; a field an apply
//! stops applying leaves the object; `managedFields` reads back per manager.

use std::path::Path;

use crate::support::{LabServer, kubectl, kubectl_run};

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web, tier: front}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.display().to_string()
}

#[test]
fn a_second_manager_is_refused_the_fields_the_first_owns_unless_it_forces_them() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start("60");
    let dir = tempfile::tempdir().expect("temp dir");
    let first = write(dir.path(), "first.yaml", DEPLOYMENT);
    let other = write(
        dir.path(),
        "other.yaml",
        &DEPLOYMENT
            .replace("replicas: 2", "replicas: 3")
            .replace("nginx:1.27", "nginx:1.28"),
    );
    let apply = |file: &str, extra: &[&str]| {
        let mut args = vec!["apply", "--server-side", "-f", file];
        args.extend(extra);
        kubectl_run(&binary, &lab, &args)
    };
    let (code, _, err) = apply(&first, &["--field-manager=alice"]);
    assert_eq!(code, 0, "{err}");
    // Another manager, other values: both fields named, by their owner.
    let (code, _, err) = apply(&other, &["--field-manager=bob"]);
    assert_eq!(code, 1);
    assert!(
        err.contains(
            "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .spec.replicas\n- .spec.template.spec.containers[name=\"app\"].image"
        ),
        "{err}"
    );
    // The same values: co-owned, no conflict.
    let (code, _, err) = apply(&first, &["--field-manager=carol"]);
    assert_eq!(code, 0, "{err}");
    // Forced: bob takes replicas and the image over.
    let (code, _, err) = apply(&other, &["--field-manager=bob", "--force-conflicts"]);
    assert_eq!(code, 0, "{err}");
    let managed = |path: &str| {
        let (code, out, err) = kubectl_run(
            &binary,
            &lab,
            &["get", "deploy", "web", "-o", &format!("jsonpath={path}")],
        );
        assert_eq!(code, 0, "{err}");
        out
    };
    assert_eq!(managed("{.spec.replicas}"), "3");
    assert_eq!(
        managed("{.metadata.managedFields[*].manager}"),
        "alice carol bob"
    );
    let alice = managed("{.metadata.managedFields[0].fieldsV1}");
    assert!(!alice.contains("f:replicas"), "{alice}");
    assert!(alice.contains("f:tier"), "{alice}");
    let bob = managed("{.metadata.managedFields[2].fieldsV1}");
    assert!(bob.contains("f:replicas"), "{bob}");
    // An update takes over what it changes, and is named with its API version (never its
    // time: the manager identifier a conflict prints from drops it).
    let (code, _, err) = kubectl_run(&binary, &lab, &["scale", "deploy", "web", "--replicas=5"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = apply(&other, &["--field-manager=bob"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("Apply failed with 1 conflict: conflict with \"kubectl\" with subresource \"scale\" using apps/v1: .spec.replicas"),
        "{err}"
    );
    assert!(err.contains(": .spec.replicas"), "{err}");
    // A field one co-owner stops applying stays while another applies it...
    let without_tier = write(
        dir.path(),
        "without.yaml",
        &DEPLOYMENT.replace(", tier: front", ""),
    );
    let (code, _, err) = apply(&without_tier, &["--field-manager=alice"]);
    assert_eq!(
        code, 1,
        "bob's image and kubectl's replicas differ from alice's"
    );
    assert!(err.contains("Apply failed with 2 conflicts: conflicts with \"bob\":\n- .spec.template.spec.containers[name=\"app\"].image\nconflicts with \"kubectl\" with subresource \"scale\""), "{err}");
    let (code, _, err) = apply(
        &without_tier,
        &["--field-manager=alice", "--force-conflicts"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(managed("{.metadata.labels.tier}"), "front");
    assert_eq!(managed("{.spec.replicas}"), "2");
    // ...and leaves the object when no manager applies it any more.
    let solo = DEPLOYMENT.replace("name: web", "name: solo");
    let with_tier = write(dir.path(), "solo.yaml", &solo);
    let without = write(
        dir.path(),
        "solo-without.yaml",
        &solo.replace(", tier: front", ""),
    );
    for file in [&with_tier, &without] {
        let (code, _, err) = apply(file, &["--field-manager=dave"]);
        assert_eq!(code, 0, "{err}");
    }
    let (code, labels, err) = kubectl_run(
        &binary,
        &lab,
        &["get", "deploy", "solo", "-o", "jsonpath={.metadata.labels}"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(labels, r#"{"app":"web"}"#);
}
