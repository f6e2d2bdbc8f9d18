//! `k8s::`: the cluster as plain maps and arrays, with the fields kubectl users know.

use super::undo::{identity, undo_of};
use crate::bindings::shared::journaled::journaled;
use std::sync::Arc;

use kube::api::LogParams;
use rhai::{Array, Dynamic, Engine, EvalAltResult, Map, Module, NativeCallContext, Position};

use super::access::install_access;
use super::kubectl_view::Shown;
use super::quarantine::install_quarantine;
use crate::bindings::shared::args::{
    command, encode, known_options, kube_error, selector, string_option,
};
use crate::clients::kube::{KubeClient, KubeError, ListOptions, NodeSummary, PodSummary};
use crate::guard::Change;
use crate::script::{
    Extension, Host, documented as doc, failure_error, from_json, to_json, usage_error,
};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

pub struct KubeBindings {
    client: Arc<KubeClient>,
}

impl KubeBindings {
    pub fn new(client: Arc<KubeClient>) -> Self {
        Self { client }
    }
}

/// Runs one client call on the host's runtime and turns its error into a script error.
pub(super) fn call<T>(
    host: &Host,
    position: Position,
    future: impl Future<Output = std::result::Result<T, KubeError>>,
) -> Result<T> {
    host.block_on(position, future)?
        .map_err(|e| kube_error(e, position))
}

/// Deletes one object, journaled with the object as it was.
fn delete_journaled(
    host: &Host,
    client: &KubeClient,
    kind: &str,
    name: &str,
    namespace: Option<&str>,
    position: Position,
) -> Result<()> {
    let undo = undo_of(host, client, kind, name, namespace, position)?;
    let action = format!(
        "k8s::delete {kind} {}/{name}",
        namespace.unwrap_or("default")
    );
    let change = Change::new(action).on(Change::kubernetes(kind, namespace, name));
    journaled(host, position, change, undo, || {
        call(host, position, client.delete(kind, name, namespace))
    })
}

fn apply_change(kind: &str, namespace: Option<&str>, name: &str) -> Change {
    Change::new(format!(
        "k8s::apply {kind} {}/{name}",
        namespace.unwrap_or("")
    ))
    .on(Change::kubernetes(kind, namespace, name))
}

/// Applies objects one at a time, each journaled with what undoes it.
fn apply_journaled(
    host: &Host,
    client: &KubeClient,
    objects: &[serde_json::Value],
    namespace: Option<&str>,
    position: Position,
) -> Result<Vec<serde_json::Value>> {
    // Every object is held to the guards before the first is sent: an apply is not left
    // half done by a guard.
    for object in objects {
        let (kind, ns, name) = identity(object, namespace);
        host.guard(&apply_change(&kind, ns.as_deref(), &name))
            .map_err(|e| failure_error(e, position))?;
    }
    let mut applied = Vec::with_capacity(objects.len());
    for object in objects {
        let (kind, ns, name) = identity(object, namespace);
        // An object without its identity fails in the client with the reason; nothing to undo.
        let undo = if name.is_empty() || kind == "/" {
            None
        } else {
            undo_of(host, client, &kind, &name, ns.as_deref(), position)?
        };
        let change = apply_change(&kind, ns.as_deref(), &name);
        let one = journaled(host, position, change, undo, || {
            call(
                host,
                position,
                client.apply(std::slice::from_ref(object), namespace),
            )
        })?;
        // As kubectl shows them: a script has no use for the field managers' sets, and
        // turning them into script values costs more than the rest of the object.
        applied.extend(one.into_iter().map(|mut object| {
            if let Some(metadata) = object["metadata"].as_object_mut() {
                metadata.remove("managedFields");
            }
            object
        }));
    }
    Ok(applied)
}

fn list_options(options: &Map, function: &str, position: Position) -> Result<ListOptions> {
    known_options(
        options,
        function,
        &["namespace", "labels", "fields"],
        position,
    )?;
    Ok(ListOptions {
        namespace: string_option(options, "namespace", function, position)?,
        labels: match options.get("labels") {
            Some(v) => selector(v, function, position)?,
            None => None,
        },
        fields: string_option(options, "fields", function, position)?,
    })
}

/// Objects to apply: a map, an array of maps, or YAML text (several documents allowed).
fn objects(value: &Dynamic, position: Position) -> Result<Vec<serde_json::Value>> {
    if let Some(text) = value.read_lock::<rhai::ImmutableString>() {
        let mut options = serde_saphyr::Options::default();
        options.strict_booleans = true;
        let documents: Vec<serde_json::Value> =
            serde_saphyr::from_multiple_with_options(&text, options).map_err(|e| {
                crate::script::failure_error(format!("apply: invalid YAML: {e}"), position)
            })?;
        return Ok(documents.into_iter().filter(|d| !d.is_null()).collect());
    }
    match to_json(value) {
        serde_json::Value::Array(items) => Ok(items),
        object @ serde_json::Value::Object(_) => Ok(vec![object]),
        _ => Err(usage_error(
            format!(
                "apply takes a map, an array of maps or YAML text, got {}",
                value.type_name()
            ),
            position,
        )),
    }
}

/// A fresh pair of handles (client, host) for the next registration's closure to own.
macro_rules! handles {
    ($c:expr, $h:expr) => {
        ($c.clone(), $h.clone())
    };
}
pub(super) use handles;

impl Extension for KubeBindings {
    fn install(&self, engine: &mut Engine, host: &Arc<Host>) {
        let mut m = Module::new();
        let (c, h) = (self.client.clone(), host.clone());
        install_health(&mut m, &c, &h);
        install_reads(&mut m, &c, &h);
        install_apply_and_delete(&mut m, &c, &h);
        install_patch(&mut m, &c, &h);
        install_nodes(&mut m, &c, &h);
        install_pods(&mut m, &c, &h);
        install_exec(&mut m, &c, &h);
        super::waits::install_waits(&mut m, &c, &h);
        install_quarantine(&mut m, &self.client, &h);
        install_access(&mut m, &self.client, &h);
        engine.register_static_module("k8s", m.into());
        engine.register_static_module("twin", super::twin_control::module(&self.client, &h).into());
    }
}

/// Registers the API server's health and version: `readyz`, `livez`, `version`.
fn install_health(m: &mut Module, c: &Arc<KubeClient>, h: &Arc<Host>) {
    let (client, host) = handles!(c, h);
    doc(
        "readyz",
        &["Map"],
        "The API server's /readyz?verbose: #{ ok, checks: [#{name, ok}], failed: [names] }.",
    )
    .set_into_module(m, move |ctx: NativeCallContext| -> Result {
        let health = call(&host, ctx.call_position(), client.health("readyz"))?;
        Ok(health_map(&health))
    });
    let (client, host) = handles!(c, h);
    doc(
        "livez",
        &["Map"],
        "The API server's /livez?verbose, like readyz().",
    )
    .set_into_module(m, move |ctx: NativeCallContext| -> Result {
        Ok(health_map(&call(
            &host,
            ctx.call_position(),
            client.health("livez"),
        )?))
    });
    let (client, host) = handles!(c, h);
    doc(
        "version",
        &["Map"],
        "The server version: #{ major, minor, gitVersion, platform, ... }.",
    )
    .set_into_module(m, move |ctx: NativeCallContext| -> Result {
        Ok(from_json(&call(
            &host,
            ctx.call_position(),
            client.version(),
        )?))
    });
}

/// Registers reading objects: `get`, `list`.
fn install_reads(m: &mut Module, c: &Arc<KubeClient>, h: &Arc<Host>) {
    let (client, host) = handles!(c, h);
    doc("get", &["kind: &str", "name: &str", "Map"], "One object by kind (\"Node\", \"deploy\", \"apps/v1/Deployment\") and name, in namespace default.")
        .set_into_module(m, move |ctx: NativeCallContext, kind: &str, name: &str| -> Result {
            call(&host, ctx.call_position(), client.get_as::<Dynamic>(kind, name, None))
        });
    let (client, host) = handles!(c, h);
    doc(
        "get",
        &["kind: &str", "name: &str", "namespace: &str", "Map"],
        "One object in a namespace.",
    )
    .set_into_module(
        m,
        move |ctx: NativeCallContext, kind: &str, name: &str, namespace: &str| -> Result {
            call(
                &host,
                ctx.call_position(),
                client.get_as::<Dynamic>(kind, name, Some(namespace)),
            )
        },
    );
    let (client, host) = handles!(c, h);
    doc(
        "list",
        &["kind: &str", "Array"],
        "Every object of a kind, in all namespaces (without metadata.managedFields, as kubectl shows them).",
    )
    .set_into_module(
        m,
        move |ctx: NativeCallContext, kind: &str| -> Result {
            let list = call(
                &host,
                ctx.call_position(),
                client.list_as::<Shown>(kind, &ListOptions::default()),
            )?;
            Ok(Dynamic::from_array(list.into_iter().map(|s| s.0).collect()))
        },
    );
    let (client, host) = handles!(c, h);
    doc(
        "list",
        &["kind: &str", "options: Map", "Array"],
        "Objects of a kind; options `namespace`, `labels` (\"tier=gpu\" or a map), `fields`.",
    )
    .set_into_module(
        m,
        move |ctx: NativeCallContext, kind: &str, options: Map| -> Result {
            let position = ctx.call_position();
            let options = list_options(&options, "k8s::list", position)?;
            let list = call(&host, position, client.list_as::<Shown>(kind, &options))?;
            Ok(Dynamic::from_array(list.into_iter().map(|s| s.0).collect()))
        },
    );
}

/// Registers server-side apply and delete, each journaled with its undo.
fn install_apply_and_delete(m: &mut Module, c: &Arc<KubeClient>, h: &Arc<Host>) {
    let (client, host) = handles!(c, h);
    doc("apply", &["objects: Dynamic", "Array"], "Server-side apply (field manager `runbook`, conflicts forced) of a map, an array of maps or YAML text; returns the applied objects (without metadata.managedFields, as kubectl shows them).")
        .set_into_module(m, move |ctx: NativeCallContext, value: Dynamic| -> Result {
            let position = ctx.call_position();
            let objects = objects(&value, position)?;
            Ok(encode(&apply_journaled(&host, &client, &objects, None, position)?))
        });
    let (client, host) = handles!(c, h);
    doc(
        "apply",
        &["objects: Dynamic", "options: Map", "Array"],
        "The same; option `namespace` for objects that name none.",
    )
    .set_into_module(
        m,
        move |ctx: NativeCallContext, value: Dynamic, options: Map| -> Result {
            let position = ctx.call_position();
            known_options(&options, "k8s::apply", &["namespace"], position)?;
            let namespace = string_option(&options, "namespace", "k8s::apply", position)?;
            let objects = objects(&value, position)?;
            Ok(encode(&apply_journaled(
                &host,
                &client,
                &objects,
                namespace.as_deref(),
                position,
            )?))
        },
    );

    let (client, host) = handles!(c, h);
    doc(
        "delete",
        &["kind: &str", "name: &str", "()"],
        "Deletes one object in namespace default (dependents follow in the background).",
    )
    .set_into_module(
        m,
        move |ctx: NativeCallContext, kind: &str, name: &str| -> Result<()> {
            delete_journaled(&host, &client, kind, name, None, ctx.call_position())
        },
    );
    let (client, host) = handles!(c, h);
    doc(
        "delete",
        &["kind: &str", "name: &str", "namespace: &str", "()"],
        "Deletes one object in a namespace.",
    )
    .set_into_module(
        m,
        move |ctx: NativeCallContext, kind: &str, name: &str, namespace: &str| -> Result<()> {
            delete_journaled(
                &host,
                &client,
                kind,
                name,
                Some(namespace),
                ctx.call_position(),
            )
        },
    );
}

/// Registers patches (merge, strategic, JSON), journaled with the object as it was.
fn install_patch(m: &mut Module, c: &Arc<KubeClient>, h: &Arc<Host>) {
    let (client, host) = handles!(c, h);
    doc(
        "patch",
        &["kind: &str", "name: &str", "patch: Map", "Map"],
        "A JSON merge patch of one object in namespace default.",
    )
    .set_into_module(
        m,
        move |ctx: NativeCallContext, kind: &str, name: &str, patch: Map| -> Result {
            let patch = to_json(&Dynamic::from_map(patch));
            let target = (kind, name, None);
            patch_journaled(&host, &client, target, &patch, "merge", ctx.call_position())
        },
    );
    let (client, host) = handles!(c, h);
    doc(
        "patch",
        &[
            "kind: &str",
            "name: &str",
            "patch: Dynamic",
            "options: Map",
            "Map",
        ],
        "A patch with options `namespace` and `type` (merge, strategic, json).",
    )
    .set_into_module(
        m,
        move |ctx: NativeCallContext,
              kind: &str,
              name: &str,
              patch: Dynamic,
              options: Map|
              -> Result {
            let position = ctx.call_position();
            known_options(&options, "k8s::patch", &["namespace", "type"], position)?;
            let namespace = string_option(&options, "namespace", "k8s::patch", position)?;
            let kind_of_patch = string_option(&options, "type", "k8s::patch", position)?
                .unwrap_or_else(|| "merge".into());
            let target = (kind, name, namespace.as_deref());
            patch_journaled(
                &host,
                &client,
                target,
                &to_json(&patch),
                &kind_of_patch,
                position,
            )
        },
    );
}

/// Patches one object (kind, name, namespace), journaled with the object as it was.
fn patch_journaled(
    host: &Host,
    client: &KubeClient,
    (kind, name, namespace): (&str, &str, Option<&str>),
    patch: &serde_json::Value,
    kind_of_patch: &str,
    position: Position,
) -> Result {
    let undo = undo_of(host, client, kind, name, namespace, position)?;
    let change = Change::new(format!("k8s::patch {kind} {name}"))
        .on(Change::kubernetes(kind, namespace, name));
    journaled(host, position, change, undo, || {
        Ok(from_json(&call(
            host,
            position,
            client.patch(kind, name, namespace, patch, kind_of_patch),
        )?))
    })
}

/// Registers nodes as kubectl shows them, all or by label.
fn install_nodes(m: &mut Module, c: &Arc<KubeClient>, h: &Arc<Host>) {
    let (client, host) = handles!(c, h);
    doc("nodes", &["Array"], "Every node: #{ name, status, ready, version, internal_ip, zone, instance_type, nodegroup, instance_id, labels, taints, capacity, allocatable }.")
        .set_into_module(m, move |ctx: NativeCallContext| -> Result {
            let nodes = call(&host, ctx.call_position(), client.list("Node", &ListOptions::default()))?;
            Ok(node_summaries(&nodes))
        });
    let (client, host) = handles!(c, h);
    doc(
        "nodes",
        &["labels: Dynamic", "Array"],
        "Nodes matching a label selector (\"tier=gpu\" or #{ tier: \"gpu\" }).",
    )
    .set_into_module(
        m,
        move |ctx: NativeCallContext, labels: Dynamic| -> Result {
            let position = ctx.call_position();
            let options = ListOptions {
                labels: selector(&labels, "k8s::nodes", position)?,
                ..Default::default()
            };
            let nodes = call(&host, position, client.list("Node", &options))?;
            Ok(node_summaries(&nodes))
        },
    );
}

fn node_summaries(nodes: &[serde_json::Value]) -> Dynamic {
    encode(
        &nodes
            .iter()
            .map(NodeSummary::from_object)
            .collect::<Vec<_>>(),
    )
}

/// Registers pods and their logs as kubectl shows them.
fn install_pods(m: &mut Module, c: &Arc<KubeClient>, h: &Arc<Host>) {
    let (client, host) = handles!(c, h);
    doc("pods", &["options: Map", "Array"], "Pods as kubectl shows them: #{ name, namespace, ready, status, phase, restarts, node, ip, labels }; options `namespace`, `labels`, `fields`.")
        .set_into_module(m, move |ctx: NativeCallContext, options: Map| -> Result {
            let position = ctx.call_position();
            let options = list_options(&options, "k8s::pods", position)?;
            let pods = call(&host, position, client.list("Pod", &options))?;
            Ok(encode(&pods.iter().map(PodSummary::from_object).collect::<Vec<_>>()))
        });

    let (client, host) = handles!(c, h);
    doc(
        "logs",
        &["pod: &str", "options: Map", "String"],
        "A pod's log; options `namespace`, `container`, `tail` (lines), `since` (a duration).",
    )
    .set_into_module(
        m,
        move |ctx: NativeCallContext, pod: &str, options: Map| -> Result<String> {
            let position = ctx.call_position();
            let (namespace, params) = log_options(&options, position)?;
            call(
                &host,
                position,
                client.logs(pod, namespace.as_deref(), &params),
            )
        },
    );
}

/// `k8s::logs`'s options: the namespace, and what of the log to read.
fn log_options(options: &Map, position: Position) -> Result<(Option<String>, LogParams)> {
    known_options(
        options,
        "k8s::logs",
        &["namespace", "container", "tail", "since"],
        position,
    )?;
    let namespace = string_option(options, "namespace", "k8s::logs", position)?;
    let mut params = LogParams {
        container: string_option(options, "container", "k8s::logs", position)?,
        ..Default::default()
    };
    if let Some(tail) = options.get("tail") {
        params.tail_lines = Some(tail.as_int().map_err(|t| {
            usage_error(
                format!("k8s::logs: `tail` must be an integer, got {t}"),
                position,
            )
        })?);
    }
    if let Some(since) = options.get("since") {
        params.since_seconds = Some(
            crate::script::duration_value(since, "k8s::logs: `since`", position)?.as_secs() as i64,
        );
    }
    Ok((namespace, params))
}

/// Registers commands run in a pod (held to `--read-only`'s list).
fn install_exec(m: &mut Module, c: &Arc<KubeClient>, h: &Arc<Host>) {
    let (client, host) = handles!(c, h);
    doc("exec", &["pod: &str", "command: Dynamic", "Map"], "Runs a command (an array, or a string split on spaces) in a pod of namespace default:\n#{ stdout, stderr, exit_code }. Refused under --read-only, but for the GPU probes' queries\n(nvidia-smi --query-gpu=... --format=csv,noheader,nounits, nvidia-smi nvlink -s, dcgmi diag -r N -j, dmesg).")
        .set_into_module(m, move |ctx: NativeCallContext, pod: &str, cmd: Dynamic| -> Result {
            let position = ctx.call_position();
            let argv = command(&cmd, position)?;
            host.guard_read_only("k8s::exec", Some(&argv)).map_err(|e| failure_error(e, position))?;
            Ok(encode(&call(&host, position, client.exec(pod, None, &argv, None))?))
        });
    let (client, host) = handles!(c, h);
    doc("exec", &["pod: &str", "command: Dynamic", "options: Map", "Map"], "Runs a command in a pod: #{ stdout, stderr, exit_code }; options `namespace`, `container`.")
        .set_into_module(m, move |ctx: NativeCallContext, pod: &str, cmd: Dynamic, options: Map| -> Result {
            let position = ctx.call_position();
            known_options(&options, "k8s::exec", &["namespace", "container"], position)?;
            let namespace = string_option(&options, "namespace", "k8s::exec", position)?;
            let container = string_option(&options, "container", "k8s::exec", position)?;
            let argv = command(&cmd, position)?;
            host.guard_read_only("k8s::exec", Some(&argv)).map_err(|e| failure_error(e, position))?;
            Ok(encode(&call(&host, position, client.exec(pod, namespace.as_deref(), &argv, container.as_deref()))?))
        });
}

fn health_map(health: &crate::clients::kube::Health) -> Dynamic {
    let checks: Array = health
        .checks
        .iter()
        .map(|(name, ok)| {
            let mut check = Map::new();
            check.insert("name".into(), Dynamic::from(name.clone()));
            check.insert("ok".into(), Dynamic::from_bool(*ok));
            Dynamic::from_map(check)
        })
        .collect();
    let mut map = Map::new();
    map.insert("ok".into(), Dynamic::from_bool(health.ok));
    map.insert("checks".into(), Dynamic::from_array(checks));
    map.insert("failed".into(), encode(&health.failed));
    Dynamic::from_map(map)
}
