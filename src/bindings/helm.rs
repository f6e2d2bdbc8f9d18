//! `helm::`: render charts with the real `helm template`, summarize what they render, and
//! install rendered objects through `k8s::`'s client as `helm install` would.

use crate::bindings::kube::undo::{identity, undo_of};
use crate::guard::Change;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rhai::{Array, Dynamic, EvalAltResult, Map, Module, NativeCallContext, Position};

use crate::bindings::shared::options::Spec;
use crate::clients::helm::{
    HelmError, RenderedObject, TemplateOptions, find_helm, install, summary, template,
};
use crate::clients::kube::KubeClient;
use crate::script::{
    Extension, Host, documented as doc, duration_value, failure_error, from_json, to_json,
};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

pub struct HelmBindings {
    /// The binary named by `--helm`; otherwise RUNBOOK_HELM, PATH, .tools/bin.
    explicit: Option<PathBuf>,
    kube: Option<Arc<KubeClient>>,
}

impl HelmBindings {
    pub fn new(explicit: Option<PathBuf>, kube: Option<Arc<KubeClient>>) -> Self {
        Self { explicit, kube }
    }
}

fn helm_error(error: HelmError, position: Position) -> Box<EvalAltResult> {
    let code = match &error {
        HelmError::NotInstalled { .. } => "HelmNotInstalled",
        HelmError::Spawn { .. } => "HelmNotRunnable",
        HelmError::Failed { .. } => "HelmFailed",
        HelmError::Parse { .. } => "HelmOutputUnreadable",
        HelmError::Kube { .. } => "InstallFailed",
        HelmError::Io(_) => "HelmIo",
    };
    let mut message = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    let mut map = Map::new();
    map.insert("code".into(), Dynamic::from(code.to_string()));
    map.insert("reason".into(), Dynamic::from(code.to_string()));
    map.insert("message".into(), Dynamic::from(message));
    EvalAltResult::ErrorRuntime(Dynamic::from_map(map), position).into()
}

/// A chart given as a relative path is found from the runbook's folder first; anything else
/// (`repo/name`, `oci://...`, an absolute path) goes to helm as written.
fn chart_argument(chart: &str, base_dir: &Path) -> String {
    let relative = Path::new(chart);
    let local = chart.starts_with("./") || chart.starts_with("../") || !chart.contains('/');
    if relative.is_relative() && local && base_dir.join(relative).exists() {
        return base_dir.join(relative).to_string_lossy().into_owned();
    }
    chart.to_string()
}

/// Where a local chart may lie: where the run may read, the runbook's project (the
/// repository's `charts/` beside `runbooks/`) and the folder the command runs in, as helm
/// itself finds charts.
fn chart_sandbox(host: &Host) -> crate::sandbox::ReadSandbox {
    let project = crate::sandbox::project_of(&host.config.base_dir);
    let here = std::env::current_dir().ok();
    host.config.read.widened(project.into_iter().chain(here))
}

fn pairs(map: &Map) -> Vec<(String, String)> {
    map.iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                if v.is_unit() {
                    "null".to_string()
                } else {
                    v.to_string()
                },
            )
        })
        .collect()
}

fn template_options(chart: &str, options: &Map, position: Position) -> Result<TemplateOptions> {
    let s = Spec::new(
        options,
        "helm::template",
        &[
            "release",
            "namespace",
            "version",
            "repo",
            "set",
            "set_string",
            "values",
            "include_crds",
            "kube_version",
            "api_versions",
        ],
        position,
    )?;
    let release = s.string("release")?.unwrap_or_else(|| {
        chart
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or("release")
            .to_string()
    });
    let mut opts = TemplateOptions::new(
        release,
        s.string("namespace")?.unwrap_or_else(|| "default".into()),
    );
    opts.version = s.string("version")?;
    opts.repo = s.string("repo")?;
    opts.kube_version = s.string("kube_version")?;
    opts.api_versions = s.strings("api_versions")?;
    opts.include_crds = match options.get("include_crds") {
        None => false,
        Some(v) => v
            .as_bool()
            .map_err(|_| s.error("`include_crds` must be true or false"))?,
    };
    for (key, target) in [("set", &mut opts.set), ("set_string", &mut opts.set_string)] {
        if let Some(value) = options.get(key) {
            let map = value.read_lock::<Map>().ok_or_else(|| {
                s.error(format!(
                    "`{key}` is a map such as #{{ \"driver.enabled\": false }}"
                ))
            })?;
            *target = pairs(&map);
        }
    }
    if let Some(values) = options.get("values") {
        if let Some(list) = values.read_lock::<Array>() {
            opts.values = list.iter().map(to_json).collect();
        } else if values.is_map() {
            opts.values = vec![to_json(values)];
        } else {
            return Err(s.error("`values` is a map, or an array of maps applied in order"));
        }
    }
    Ok(opts)
}

fn rendered_objects(
    value: &Dynamic,
    function: &str,
    position: Position,
) -> Result<Vec<RenderedObject>> {
    let items = value.read_lock::<Array>().ok_or_else(|| {
        crate::script::usage_error(
            format!("{function} takes the array helm::template returns"),
            position,
        )
    })?;
    items
        .iter()
        .map(|item| {
            let json = to_json(item);
            if json.get("object").is_some() {
                serde_json::from_value(json).map_err(|e| {
                    crate::script::usage_error(
                        format!("{function}: not an entry of helm::template: {e}"),
                        position,
                    )
                })
            } else if json.get("kind").is_some() {
                Ok(RenderedObject::from_object(json))
            } else {
                Err(crate::script::usage_error(
                    format!(
                        "{function}: {item} is neither an entry of helm::template nor an object"
                    ),
                    position,
                ))
            }
        })
        .collect()
}

impl Extension for HelmBindings {
    fn install(&self, engine: &mut rhai::Engine, host: &Arc<Host>) {
        let mut m = Module::new();
        install_template(&mut m, self.explicit.as_deref(), host);
        install_summary(&mut m);
        install_apply(&mut m, self.kube.as_ref(), host);
        engine.register_static_module("helm", m.into());
    }
}

/// Registers `template(chart)` and `template(chart, options)`.
fn install_template(m: &mut Module, explicit: Option<&Path>, host: &Arc<Host>) {
    for with_options in [false, true] {
        let (explicit, h) = (explicit.map(Path::to_path_buf), host.clone());
        let render = move |ctx: NativeCallContext, chart: &str, options: Map| -> Result {
            render_chart(
                &h,
                explicit.as_deref(),
                ctx.call_position(),
                chart,
                &options,
            )
        };
        if with_options {
            doc("template", &["chart: &str", "options: Map", "Array"], "The same; options: release, namespace, version, repo, set: #{...}, set_string: #{...},\nvalues: #{...} or [#{...}], include_crds, kube_version, api_versions.")
                .set_into_module(m, render);
        } else {
            doc("template", &["chart: &str", "Array"], "Runs the real `helm template` (binary from --helm, RUNBOOK_HELM, PATH or .tools/bin) and returns\nwhat it rendered: #{ object, source, chart, hook, hook_weight, hook_delete_policy, is_crd }.\nA relative chart path is found from the runbook's folder; repo/name and oci:// go to helm.")
                .set_into_module(m, move |ctx: NativeCallContext, chart: &str| render(ctx, chart, Map::new()));
        }
    }
}

/// Runs `helm template` on a chart and answers what it rendered.
fn render_chart(
    h: &Host,
    explicit: Option<&Path>,
    position: Position,
    chart: &str,
    options: &Map,
) -> Result {
    let opts = template_options(chart, options, position)?;
    let chart = chart_argument(chart, &h.config.base_dir);
    // A chart on disk is read through the sandbox, its symlinks included: helm
    // follows them (`.Files.Get` of a link to /proc/self/environ).
    if opts.repo.is_none() && Path::new(&chart).exists() {
        chart_sandbox(h)
            .check_tree(Path::new(&chart))
            .map_err(|e| failure_error(format!("helm::template: {e}"), position))?;
    }
    let helm = find_helm(explicit).map_err(|e| helm_error(e, position))?;
    let objects = h
        .block_on(position, template(&helm, &chart, &opts))?
        .map_err(|e| helm_error(e, position))?;
    Ok(from_json(
        &serde_json::to_value(objects).unwrap_or_default(),
    ))
}

fn install_summary(m: &mut Module) {
    doc("summary", &["objects: Array", "Map"], "Counts of what helm::template rendered: #{ total, by_kind, by_chart: [#{ chart, resources, hooks,\ncrds, kinds }], hooks: [#{ kind, name, chart, hook, weight }] }, in a stable order for snapshots.")
        .set_into_module(m, |ctx: NativeCallContext, objects: Dynamic| -> Result {
            let objects = rendered_objects(&objects, "helm::summary", ctx.call_position())?;
            Ok(from_json(&serde_json::to_value(summary(&objects)).unwrap_or_default()))
        });
}

fn install_apply(m: &mut Module, kube: Option<&Arc<KubeClient>>, host: &Arc<Host>) {
    let (kube, h) = (kube.cloned(), host.clone());
    doc("apply", &["objects: Array", "options: Map", "Map"], "Installs rendered objects as `helm install` would: the namespace, CRDs (until Established),\npre-install hooks, resources in Helm's kind order, post-install hooks; other hooks are skipped.\nOptions: namespace (default \"default\"), wait (a timeout: also waits for workloads to roll out).")
        .set_into_module(m, move |ctx: NativeCallContext, objects: Dynamic, options: Map| -> Result {
            apply(&h, kube.as_deref(), ctx.call_position(), &objects, &options)
        });
}

/// One object `helm::apply` may create or change: the change, and the object's kind,
/// namespace and name.
type Planned = (Change, String, Option<String>, String);

/// Installs rendered objects, each journaled with what undoes it before the install starts.
fn apply(
    h: &Host,
    kube: Option<&KubeClient>,
    position: Position,
    objects: &Dynamic,
    options: &Map,
) -> Result {
    let s = Spec::new(options, "helm::apply", &["namespace", "wait"], position)?;
    let namespace = s.string("namespace")?.unwrap_or_else(|| "default".into());
    let wait = match options.get("wait") {
        None => None,
        Some(v) if v.as_bool() == Ok(false) => None,
        Some(v) => Some(duration_value(v, "helm::apply: `wait`", position)?),
    };
    let objects = rendered_objects(objects, "helm::apply", position)?;
    let kube = kube.ok_or_else(|| {
        crate::script::usage_error(
            "helm::apply needs a cluster (the lab twin or --kubeconfig)",
            position,
        )
    })?;
    let clock = h.clock.clone();
    // Each object it may create or change is journaled, with what undoes it, before
    // the install starts (hooks it skips included: a recover deletes what is not there
    // as a no-op).
    let changes = planned_changes(&namespace, &objects);
    // The install is one call: every object passes the guards before any is journaled.
    for (change, ..) in &changes {
        h.guard(change)
            .map_err(|e| crate::script::failure_error(e, position))?;
    }
    let mut seqs = Vec::new();
    for (change, kind, ns, name) in &changes {
        let undo = undo_of(h, kube, kind, name, ns.as_deref(), position)?;
        seqs.push(
            h.mutation_starts(change, undo)
                .map_err(|e| crate::script::failure_error(e, position))?,
        );
    }
    let installed = h.block_on(
        position,
        install(kube, &objects, &namespace, wait, clock.as_ref()),
    );
    // Answered as sent even when the install failed: it may have failed after some
    // objects went in, and undoing an object that is not there does nothing.
    h.mutation_answered(&seqs, None);
    let report = installed?.map_err(|e| helm_error(e, position))?;
    Ok(from_json(&serde_json::to_value(report).unwrap_or_default()))
}

/// What `helm::apply` may create or change: the namespace, then every object.
fn planned_changes(namespace: &str, objects: &[RenderedObject]) -> Vec<Planned> {
    let namespace_object = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
    std::iter::once(&namespace_object)
        .chain(objects.iter().map(|o| &o.object))
        .map(|object| {
            let (kind, ns, name) = identity(object, Some(namespace));
            let ns = if kind == "v1/Namespace" { None } else { ns };
            let change = Change::new(format!(
                "helm::apply {kind} {}/{name}",
                ns.as_deref().unwrap_or("")
            ))
            .on(Change::kubernetes(&kind, ns.as_deref(), &name));
            (change, kind, ns, name)
        })
        .collect()
}
