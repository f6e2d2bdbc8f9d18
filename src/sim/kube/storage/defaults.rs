//! The defaults the apiserver fills in, for the fields runbooks and kubectl read back.

use serde_json::{Value, json};

use super::resources::ResourceType;

/// A strategy (`spec.strategy`, `spec.updateStrategy`) without a type gets the default one
/// whole, as the server's defaulting fills an empty one.
/// A workload's strategy as apps/v1's defaults fill it: the type when none is given, then for
/// a rolling update each of its fields left unset (what the user gave is kept: a
/// `maxUnavailable` without a type is still validated). A StatefulSet gets a `rollingUpdate`
/// only when its type was defaulted (`SetDefaults_StatefulSet`); Deployments and DaemonSets
/// always (`SetDefaults_Deployment`, `SetDefaults_DaemonSet`).
fn default_strategy(object: &mut Value, field: &str, value: Value, rolling_when_typed: bool) {
    let strategy = &mut object["spec"][field];
    if !strategy.is_object() {
        *strategy = json!({});
    }
    let typed = !(strategy["type"].is_null() || strategy["type"] == "");
    if !typed {
        strategy["type"] = value["type"].clone();
    }
    if strategy["type"] != value["type"] {
        return;
    }
    if strategy["rollingUpdate"].is_null() {
        if typed && !rolling_when_typed {
            return;
        }
        strategy["rollingUpdate"] = json!({});
    }
    if let (Some(rolling), Some(defaults)) = (
        strategy["rollingUpdate"].as_object_mut(),
        value["rollingUpdate"].as_object(),
    ) {
        for (key, default) in defaults {
            if rolling.get(key).is_none_or(Value::is_null) {
                rolling.insert(key.clone(), default.clone());
            }
        }
    }
}

fn set_default(object: &mut Value, path: &[&str], value: Value) {
    let mut current = object;
    for key in &path[..path.len() - 1] {
        if !current[*key].is_object() {
            current[*key] = json!({});
        }
        current = &mut current[*key];
    }
    let last = path[path.len() - 1];
    // Upstream's defaults test a string field for "" and a pointer for nil: both unset here.
    if current[last].is_null() || current[last] == "" {
        current[last] = value;
    }
}

/// `Always` for an image by digest-less `:latest` or no tag, else `IfNotPresent` (the API
/// server's `SetDefaults_Container`).
fn pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        None => "Always",
        Some((_, "latest")) => "Always",
        Some(_) => "IfNotPresent",
    }
}

fn pod_spec_defaults(spec: &mut Value) {
    for (path, value) in [
        (&["restartPolicy"][..], json!("Always")),
        (&["dnsPolicy"], json!("ClusterFirst")),
        (&["schedulerName"], json!("default-scheduler")),
        (&["terminationGracePeriodSeconds"], json!(30)),
        (&["securityContext"], json!({})),
    ] {
        set_default(spec, path, value);
    }
    for list in ["containers", "initContainers"] {
        let containers = spec.get_mut(list).and_then(Value::as_array_mut);
        for container in containers.into_iter().flatten() {
            let policy = pull_policy(container["image"].as_str().unwrap_or_default());
            set_default(container, &["imagePullPolicy"], json!(policy));
            for port in container
                .get_mut("ports")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                set_default(port, &["protocol"], json!("TCP"));
            }
            set_default(
                container,
                &["terminationMessagePath"],
                json!("/dev/termination-log"),
            );
            set_default(container, &["terminationMessagePolicy"], json!("File"));
            set_default(container, &["resources"], json!({}));
            probe_defaults(container);
            for var in container
                .get_mut("env")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if let Some(field_ref) =
                    var.get_mut("valueFrom").and_then(|v| v.get_mut("fieldRef"))
                {
                    set_default(field_ref, &["apiVersion"], json!("v1"));
                }
            }
        }
    }
    for volume in spec
        .get_mut("volumes")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        // `SetDefaults_Volume`: a volume without a source is an empty directory.
        let has_source = volume
            .as_object()
            .is_some_and(|v| v.iter().any(|(k, v)| k != "name" && !v.is_null()));
        if !has_source {
            volume["emptyDir"] = json!({});
        }
        for source in ["secret", "configMap", "downwardAPI", "projected"] {
            if volume[source].is_object() {
                // 0644, as `SetDefaults_*VolumeSource` set it.
                set_default(&mut volume[source], &["defaultMode"], json!(420));
            }
        }
    }
}

/// `SetDefaults_Probe` and `SetDefaults_HTTPGetAction`: a zero or missing period, timeout or
/// threshold takes its default; an HTTP check its path and scheme (hooks too).
fn probe_defaults(container: &mut Value) {
    for kind in ["livenessProbe", "readinessProbe", "startupProbe"] {
        let Some(probe) = container.get_mut(kind).filter(|p| p.is_object()) else {
            continue;
        };
        for (field, default) in [
            ("timeoutSeconds", 1),
            ("periodSeconds", 10),
            ("successThreshold", 1),
            ("failureThreshold", 3),
        ] {
            if probe[field].as_i64().unwrap_or(0) == 0 {
                probe[field] = json!(default);
            }
        }
        http_get_defaults(probe);
    }
    for hook in ["postStart", "preStop"] {
        if let Some(handler) = container.get_mut("lifecycle").and_then(|l| l.get_mut(hook)) {
            http_get_defaults(handler);
        }
    }
}

/// A handler's HTTP check, when it has one.
fn http_get_defaults(handler: &mut Value) {
    let Some(action) = handler.get_mut("httpGet").filter(|a| a.is_object()) else {
        return;
    };
    for (field, default) in [("path", "/"), ("scheme", "HTTP")] {
        if action[field].as_str().is_none_or(str::is_empty) {
            action[field] = json!(default);
        }
    }
}

pub(crate) fn apply_defaults(resource: &ResourceType, object: &mut Value) {
    match (resource.group.as_str(), resource.kind.as_str()) {
        ("", "Namespace") => namespace_defaults(object),
        ("", "Pod") => pod_defaults(object),
        ("apps", "Deployment") => deployment_defaults(object),
        ("apps", "ReplicaSet") => {
            set_default(object, &["spec", "replicas"], json!(1));
            pod_spec_defaults(&mut object["spec"]["template"]["spec"]);
        }
        ("apps", "StatefulSet") => stateful_set_defaults(object),
        ("apps", "DaemonSet") => daemon_set_defaults(object),
        ("batch", "Job") => job_defaults(object),
        ("", "Service") => service_defaults(object),
        ("batch", "CronJob") => cron_job_defaults(object),
        ("", "Secret") => secret_defaults(object),
        _ => super::kind_defaults::apply(resource, object),
    }
}

/// A Secret as the API server stores it: `stringData` merged into `data` (base64, its values
/// winning over data's: the v1 conversion, which the internal type has no `stringData` for),
/// and `type` Opaque when none is given (`SetDefaults_Secret`).
fn secret_defaults(object: &mut Value) {
    use base64::Engine;
    if let Some(Value::Object(strings)) =
        object.as_object_mut().and_then(|o| o.remove("stringData"))
    {
        if !object["data"].is_object() {
            object["data"] = json!({});
        }
        for (key, value) in strings {
            let text = value.as_str().unwrap_or_default();
            object["data"][key] = json!(base64::engine::general_purpose::STANDARD.encode(text));
        }
    }
    set_default(object, &["type"], json!("Opaque"));
}

fn namespace_defaults(object: &mut Value) {
    set_default(object, &["spec", "finalizers"], json!(["kubernetes"]));
    // The namespace strategy labels every namespace with its name (NamespaceDefaultLabelName).
    let name = object["metadata"]["name"].clone();
    if name.is_string() {
        if !object["metadata"]["labels"].is_object() {
            object["metadata"]["labels"] = json!({});
        }
        object["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
    }
    set_default(object, &["status", "phase"], json!("Active"));
}

fn pod_defaults(object: &mut Value) {
    pod_spec_defaults(&mut object["spec"]);
    set_default(object, &["spec", "enableServiceLinks"], json!(true));
    // On the host's network a port is its host port.
    let host_network = object["spec"]["hostNetwork"] == true;
    for list in ["containers", "initContainers"] {
        let containers = object["spec"].get_mut(list).and_then(Value::as_array_mut);
        let ports = containers
            .into_iter()
            .flatten()
            .filter_map(|c| c.get_mut("ports").and_then(Value::as_array_mut))
            .flatten();
        for port in ports.filter(|_| host_network) {
            if port["hostPort"].as_i64().unwrap_or(0) == 0 {
                port["hostPort"] = port["containerPort"].clone();
            }
        }
    }
    // `SetDefaults_Pod`: a limit without a request is also the request.
    for list in ["containers", "initContainers"] {
        let containers = object["spec"].get_mut(list).and_then(Value::as_array_mut);
        for resources in containers
            .into_iter()
            .flatten()
            .filter_map(|c| c.get_mut("resources"))
        {
            let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
                continue;
            };
            for (name, limit) in limits {
                set_default(resources, &["requests", name.as_str()], limit);
            }
        }
    }
    let mut tolerations = object["spec"]["tolerations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        if !tolerations.iter().any(|t| t["key"] == key) {
            tolerations.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}));
        }
    }
    object["spec"]["tolerations"] = json!(tolerations);
    set_default(object, &["status", "phase"], json!("Pending"));
    set_default(object, &["status", "qosClass"], json!("BestEffort"));
}

fn deployment_defaults(object: &mut Value) {
    set_default(object, &["spec", "replicas"], json!(1));
    set_default(object, &["spec", "revisionHistoryLimit"], json!(10));
    set_default(object, &["spec", "progressDeadlineSeconds"], json!(600));
    default_strategy(
        object,
        "strategy",
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
        true,
    );
    pod_spec_defaults(&mut object["spec"]["template"]["spec"]);
}

fn stateful_set_defaults(object: &mut Value) {
    set_default(object, &["spec", "replicas"], json!(1));
    set_default(
        object,
        &["spec", "podManagementPolicy"],
        json!("OrderedReady"),
    );
    set_default(object, &["spec", "revisionHistoryLimit"], json!(10));
    default_strategy(
        object,
        "updateStrategy",
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
        false,
    );
    for field in ["whenDeleted", "whenScaled"] {
        set_default(
            object,
            &["spec", "persistentVolumeClaimRetentionPolicy", field],
            json!("Retain"),
        );
    }
    pod_spec_defaults(&mut object["spec"]["template"]["spec"]);
}

fn daemon_set_defaults(object: &mut Value) {
    set_default(object, &["spec", "revisionHistoryLimit"], json!(10));
    default_strategy(
        object,
        "updateStrategy",
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
        true,
    );
    pod_spec_defaults(&mut object["spec"]["template"]["spec"]);
}

fn job_defaults(object: &mut Value) {
    // `SetDefaults_Job`: one completion only when neither count is given.
    if object["spec"]["completions"].is_null() && object["spec"]["parallelism"].is_null() {
        set_default(object, &["spec", "completions"], json!(1));
    }
    set_default(object, &["spec", "parallelism"], json!(1));
    set_default(object, &["spec", "backoffLimit"], json!(6));
    set_default(object, &["spec", "completionMode"], json!("NonIndexed"));
    // JobPodReplacementPolicy (GA): Failed under a pod failure policy, else TerminatingOrFailed.
    let replacement = if object["spec"]["podFailurePolicy"].is_null() {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    set_default(
        object,
        &["spec", "podReplacementPolicy"],
        json!(replacement),
    );
    set_default(object, &["spec", "suspend"], json!(false));
    // The Job controller's own selector: its pods carry the Job's uid.
    if let Some(uid) = object["metadata"]["uid"].as_str().map(str::to_string) {
        let name = object["metadata"]["name"].clone();
        set_default(
            object,
            &["spec", "selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
        );
        let labels = &mut object["spec"]["template"]["metadata"]["labels"];
        if !labels.is_object() {
            *labels = json!({});
        }
        labels["batch.kubernetes.io/controller-uid"] = json!(uid);
        labels["controller-uid"] = json!(uid);
        labels["batch.kubernetes.io/job-name"] = name.clone();
        labels["job-name"] = name;
    }
    pod_spec_defaults(&mut object["spec"]["template"]["spec"]);
}

/// `SetDefaults_Service`.
fn service_defaults(object: &mut Value) {
    set_default(object, &["spec", "type"], json!("ClusterIP"));
    set_default(object, &["spec", "sessionAffinity"], json!("None"));
    let spec = &mut object["spec"];
    match spec["sessionAffinity"].as_str() {
        Some("None") => {
            if let Some(map) = spec.as_object_mut() {
                map.remove("sessionAffinityConfig");
            }
        }
        Some("ClientIP")
            if spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"].is_null() =>
        {
            spec["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 10800}});
        }
        _ => {}
    }
    let ports = spec.get_mut("ports").and_then(Value::as_array_mut);
    for port in ports.into_iter().flatten() {
        set_default(port, &["protocol"], json!("TCP"));
        // An unset target port (0 or "") is the port itself.
        if port["targetPort"].is_null() || port["targetPort"] == 0 || port["targetPort"] == "" {
            port["targetPort"] = port["port"].clone();
        }
    }
    let kind = spec["type"].as_str().unwrap_or_default().to_string();
    let external_ips = spec["externalIPs"]
        .as_array()
        .is_some_and(|ips| !ips.is_empty());
    // `ExternallyAccessible`.
    if matches!(kind.as_str(), "LoadBalancer" | "NodePort") || (kind == "ClusterIP" && external_ips)
    {
        set_default(spec, &["externalTrafficPolicy"], json!("Cluster"));
    }
    if matches!(kind.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        set_default(spec, &["internalTrafficPolicy"], json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        set_default(spec, &["allocateLoadBalancerNodePorts"], json!(true));
    }
}

fn cron_job_defaults(object: &mut Value) {
    set_default(object, &["spec", "concurrencyPolicy"], json!("Allow"));
    set_default(object, &["spec", "suspend"], json!(false));
    set_default(object, &["spec", "successfulJobsHistoryLimit"], json!(3));
    set_default(object, &["spec", "failedJobsHistoryLimit"], json!(1));
    pod_spec_defaults(&mut object["spec"]["jobTemplate"]["spec"]["template"]["spec"]);
}
