//! Reading `helm template` output: one object per YAML document, with the template it came
//! from, its chart or subchart, and its hook annotations. Pure: no process, no I/O.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::HelmError;

const SOURCE_PREFIX: &str = "# Source: ";
const HOOK: &str = "helm.sh/hook";
const HOOK_WEIGHT: &str = "helm.sh/hook-weight";
const HOOK_DELETE_POLICY: &str = "helm.sh/hook-delete-policy";

/// One object helm rendered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct RenderedObject {
    pub object: Value,
    /// The template path helm printed, e.g.
    /// `gpu-operator/charts/node-feature-discovery/templates/worker.yaml`, or the last one
    /// printed before it (a multi-document file from `crds/`); empty when there was none.
    pub source: String,
    /// The chart that rendered it: the top chart, or the subchart named after the last
    /// `charts/` segment of `source`.
    pub chart: String,
    /// `helm.sh/hook`, e.g. `pre-upgrade` or `post-delete`: helm runs it around the release
    /// rather than installing it with the release.
    pub hook: Option<String>,
    pub hook_weight: Option<i64>,
    pub hook_delete_policy: Option<String>,
    pub is_crd: bool,
}

impl RenderedObject {
    /// An object that did not come from `helm template` (a runbook's own map), read the same
    /// way: hook annotations, CRD or not.
    pub fn from_object(object: Value) -> Self {
        rendered(object, String::new())
    }

    pub fn kind(&self) -> &str {
        self.str_at(&["kind"])
    }

    pub fn name(&self) -> &str {
        self.str_at(&["metadata", "name"])
    }

    /// Empty for cluster-scoped objects and for namespaced ones helm left to the release's
    /// namespace.
    pub fn namespace(&self) -> &str {
        self.str_at(&["metadata", "namespace"])
    }

    pub fn api_version(&self) -> &str {
        self.str_at(&["apiVersion"])
    }

    pub fn is_hook(&self) -> bool {
        self.hook.is_some()
    }

    fn str_at(&self, path: &[&str]) -> &str {
        path.iter()
            .try_fold(&self.object, |value, key| value.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// Parses the stdout of `helm template`. Documents with no content (helm prints one for a
/// template whose condition is false) are skipped.
pub fn parse_rendered(stdout: &str) -> Result<Vec<RenderedObject>, HelmError> {
    let mut objects = Vec::new();
    let mut source = String::new();
    for (index, document) in documents(stdout).into_iter().enumerate() {
        // helm prints a file from `crds/` as it is, with one `# Source:` line before it, so the
        // later documents of a multi-document CRD file have none: they belong to the last one.
        let own = source_of(&document);
        if !own.is_empty() {
            source = own;
        }
        let value = parse_document(&document).map_err(|message| HelmError::Parse {
            source_template: if source.is_empty() {
                format!("document {}", index + 1)
            } else {
                source.clone()
            },
            message,
        })?;
        if let Some(object) = value {
            objects.push(rendered(object, source.clone()));
        }
    }
    Ok(objects)
}

/// Splits on document separators and drops blank stretches. helm starts each document with a
/// `---` line; YAML also allows content after `--- ` on the same line, which stays with the
/// document it opens. A `---` inside a block scalar is indented, so it is not a separator.
fn documents(text: &str) -> Vec<String> {
    let mut documents = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let rest = if line.trim_end() == "---" {
            ""
        } else if let Some(rest) = line.strip_prefix("--- ") {
            rest
        } else {
            current.push_str(line);
            current.push('\n');
            continue;
        };
        documents.push(std::mem::take(&mut current));
        if !rest.is_empty() {
            current.push_str(rest);
            current.push('\n');
        }
    }
    documents.push(current);
    documents.retain(|document| !document.trim().is_empty());
    documents
}

fn source_of(document: &str) -> String {
    document
        .lines()
        .map(str::trim)
        .take_while(|line| line.is_empty() || line.starts_with('#'))
        .find_map(|line| line.strip_prefix(SOURCE_PREFIX))
        .map(|source| source.trim().to_string())
        .unwrap_or_default()
}

/// `None` for an empty document; an error for anything that is not a mapping.
fn parse_document(document: &str) -> Result<Option<Value>, String> {
    let mut options = serde_saphyr::Options::default();
    // YAML 1.2 booleans, as the rest of runbook reads YAML: `on` and `yes` stay strings.
    options.strict_booleans = true;
    let value: Value =
        serde_saphyr::from_str_with_options(document, options).map_err(|e| e.to_string())?;
    match value {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some(value)),
        other => Err(format!(
            "expected a Kubernetes object (a mapping), got {}",
            json_type(&other)
        )),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a sequence",
        Value::Object(_) => "a mapping",
    }
}

fn rendered(object: Value, source: String) -> RenderedObject {
    let annotation = |key: &str| {
        object
            .pointer("/metadata/annotations")
            .and_then(|annotations| annotations.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let hook = annotation(HOOK);
    // helm reads the weight with Atoi and treats what does not parse as 0; None keeps
    // "absent" and "unreadable" apart from an explicit 0 for the summary.
    let hook_weight = annotation(HOOK_WEIGHT).and_then(|weight| weight.trim().parse().ok());
    let hook_delete_policy = annotation(HOOK_DELETE_POLICY);
    let is_crd = object.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition");
    RenderedObject {
        chart: chart_of(&source),
        object,
        source,
        hook,
        hook_weight,
        hook_delete_policy,
        is_crd,
    }
}

/// `top/charts/sub/templates/x.yaml` -> `sub`; `top/templates/x.yaml` -> `top`.
fn chart_of(source: &str) -> String {
    let segments: Vec<&str> = source.split('/').collect();
    segments
        .windows(2)
        .rev()
        .find(|pair| pair[0] == "charts")
        .map(|pair| pair[1])
        .or_else(|| segments.first().copied())
        .unwrap_or("")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RENDER: &str = r#"---
# Source: gpu-operator/charts/node-feature-discovery/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: node-feature-discovery
  namespace: gpu-operator
---
# Source: gpu-operator/templates/clusterpolicy.yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  driver:
    enabled: false
  cdi:
    default: on
---
# Source: gpu-operator/templates/empty.yaml
---
# Source: gpu-operator/charts/node-feature-discovery/templates/post-delete-job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name:  gpu-operator-node-feature-discovery-prune
  annotations:
    "helm.sh/hook": post-delete
    "helm.sh/hook-delete-policy": before-hook-creation,hook-succeeded
spec:
  template:
    spec:
      containers:
        - name: prune
          args: ["-prune"]
          command:
            - |
              echo one
              ---
              echo two
---
# Source: gpu-operator/templates/upgrade_crd.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: gpu-operator-upgrade-crd
  annotations:
    "helm.sh/hook": pre-upgrade
    "helm.sh/hook-weight": "1"
"#;

    #[test]
    fn reads_each_document_with_its_source_and_chart() {
        let objects = parse_rendered(RENDER).unwrap();
        let seen: Vec<(&str, &str, &str)> = objects
            .iter()
            .map(|o| (o.chart.as_str(), o.kind(), o.name()))
            .collect();
        assert_eq!(
            seen,
            [
                (
                    "node-feature-discovery",
                    "ServiceAccount",
                    "node-feature-discovery"
                ),
                ("gpu-operator", "ClusterPolicy", "cluster-policy"),
                (
                    "node-feature-discovery",
                    "Job",
                    "gpu-operator-node-feature-discovery-prune"
                ),
                ("gpu-operator", "Job", "gpu-operator-upgrade-crd"),
            ]
        );
        assert_eq!(
            objects[0].source,
            "gpu-operator/charts/node-feature-discovery/templates/serviceaccount.yaml"
        );
        assert_eq!(objects[0].namespace(), "gpu-operator");
        assert_eq!(objects[1].namespace(), "");
        assert_eq!(objects[1].api_version(), "nvidia.com/v1");
    }

    #[test]
    fn reads_hook_annotations() {
        let objects = parse_rendered(RENDER).unwrap();
        assert_eq!(objects[0].hook, None);
        assert!(!objects[0].is_hook());
        let prune = &objects[2];
        assert_eq!(prune.hook.as_deref(), Some("post-delete"));
        assert_eq!(prune.hook_weight, None);
        assert_eq!(
            prune.hook_delete_policy.as_deref(),
            Some("before-hook-creation,hook-succeeded")
        );
        let upgrade = &objects[3];
        assert_eq!(upgrade.hook.as_deref(), Some("pre-upgrade"));
        assert_eq!(upgrade.hook_weight, Some(1));
    }

    #[test]
    fn indented_separator_inside_a_block_scalar_is_content() {
        let objects = parse_rendered(RENDER).unwrap();
        let command = objects[2]
            .object
            .pointer("/spec/template/spec/containers/0/command/0")
            .and_then(Value::as_str);
        assert_eq!(command, Some("echo one\n---\necho two\n"));
    }

    #[test]
    fn yaml_1_1_booleans_stay_strings() {
        let objects = parse_rendered(RENDER).unwrap();
        assert_eq!(
            objects[1].object.pointer("/spec/cdi/default"),
            Some(&Value::from("on"))
        );
        assert_eq!(
            objects[1].object.pointer("/spec/driver/enabled"),
            Some(&Value::Bool(false))
        );
    }

    #[test]
    fn crds_are_marked_and_belong_to_their_chart() {
        let text = "---\n# Source: gpu-operator/crds/nvidia.com_clusterpolicies.yaml\n\
                    # a comment the chart keeps\napiVersion: apiextensions.k8s.io/v1\n\
                    kind: CustomResourceDefinition\nmetadata:\n  name: clusterpolicies.nvidia.com\n\
                    ---\n# Source: gpu-operator/charts/node-feature-discovery/crds/nfd-api-crds.yaml\n\
                    apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
                    metadata:\n  name: nodefeatures.nfd.k8s-sigs.io\n";
        let objects = parse_rendered(text).unwrap();
        assert!(objects.iter().all(|o| o.is_crd));
        assert_eq!(objects[0].chart, "gpu-operator");
        assert_eq!(
            objects[0].source,
            "gpu-operator/crds/nvidia.com_clusterpolicies.yaml"
        );
        assert_eq!(objects[1].chart, "node-feature-discovery");
    }

    #[test]
    fn later_documents_of_a_crd_file_keep_its_source() {
        let text = "---\n# Source: top/charts/nfd/crds/nfd-api-crds.yaml\n---\n\
                    kind: CustomResourceDefinition\nmetadata:\n  name: a\n---\n\
                    kind: CustomResourceDefinition\nmetadata:\n  name: b\n---\n\
                    # Source: top/templates/sa.yaml\nkind: ServiceAccount\nmetadata:\n  name: c\n";
        let objects = parse_rendered(text).unwrap();
        let seen: Vec<(&str, &str, &str)> = objects
            .iter()
            .map(|o| (o.name(), o.chart.as_str(), o.source.as_str()))
            .collect();
        let crds = "top/charts/nfd/crds/nfd-api-crds.yaml";
        assert_eq!(
            seen,
            [
                ("a", "nfd", crds),
                ("b", "nfd", crds),
                ("c", "top", "top/templates/sa.yaml")
            ]
        );
    }

    #[test]
    fn nested_subchart_is_the_innermost() {
        assert_eq!(
            chart_of("top/charts/mid/charts/leaf/templates/a.yaml"),
            "leaf"
        );
        assert_eq!(chart_of("top/templates/a.yaml"), "top");
        assert_eq!(chart_of(""), "");
    }

    #[test]
    fn empty_output_and_comment_only_documents_give_nothing() {
        assert!(parse_rendered("").unwrap().is_empty());
        assert!(
            parse_rendered("---\n# Source: c/templates/off.yaml\n---\n\n")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn content_after_the_separator_on_its_line_is_kept() {
        let objects = parse_rendered("--- {kind: ConfigMap, metadata: {name: a}}\n").unwrap();
        assert_eq!(objects[0].kind(), "ConfigMap");
        assert_eq!(objects[0].source, "");
        assert_eq!(objects[0].chart, "");
    }

    #[test]
    fn unreadable_weight_is_none() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    \
                    helm.sh/hook: test\n    helm.sh/hook-weight: heavy\n";
        let objects = parse_rendered(text).unwrap();
        assert_eq!(objects[0].hook.as_deref(), Some("test"));
        assert_eq!(objects[0].hook_weight, None);
    }

    #[test]
    fn malformed_yaml_names_the_template() {
        let text = "---\n# Source: gpu-operator/templates/broken.yaml\nkind: [Pod\n";
        let error = parse_rendered(text).unwrap_err();
        match &error {
            HelmError::Parse {
                source_template, ..
            } => assert_eq!(source_template, "gpu-operator/templates/broken.yaml"),
            other => panic!("expected a parse error, got {other:?}"),
        }
        assert!(
            error
                .to_string()
                .starts_with("cannot read the output of gpu-operator/templates/broken.yaml: "),
            "{error}"
        );
    }

    #[test]
    fn a_scalar_document_is_not_an_object() {
        let error = parse_rendered("---\n# Source: c/templates/a.yaml\njust text\n").unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("expected a Kubernetes object (a mapping), got a string"),
            "{error}"
        );
    }

    #[test]
    fn document_without_source_is_named_by_position() {
        let error = parse_rendered("kind: Pod\n---\nkind: [\n").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("cannot read the output of document 2: "),
            "{error}"
        );
    }
}
