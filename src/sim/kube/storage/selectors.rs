//! Label and field selectors, parsed and matched as the apiserver does.

use serde_json::Value;

use super::label_values::set_values;

#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
    /// `key>N`, `key<N`: the label's value as an integer, compared (apimachinery's Gt, Lt).
    GreaterThan(String, i64),
    LessThan(String, i64),
}

/// `NewRequirement`'s check of a Gt or Lt value.
fn integer(value: &str) -> Result<i64, String> {
    value.trim().parse().map_err(|_| {
        format!(
            "unable to parse requirement: values[0]: Invalid value: \"{}\": for 'Gt', 'Lt' operators, the value must be an integer",
            value.trim()
        )
    })
}

/// A parsed `labelSelector` (`tier=gpu,zone in (a,b),!spot`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LabelSelector {
    requirements: Vec<Requirement>,
}

/// Splits on commas outside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 317
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn valid_value(value: &str) -> bool {
    value.len() <= 63
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl LabelSelector {
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for part in split_top_level(text) {
            let requirement = if let Some(key) = part.strip_prefix('!') {
                Requirement::DoesNotExist(key.trim().to_string())
            } else if let Some((key, rest)) = part.split_once(" notin ") {
                Requirement::NotIn(key.trim().into(), set_values(rest)?)
            } else if let Some((key, rest)) = part.split_once(" in ") {
                Requirement::In(key.trim().into(), set_values(rest)?)
            } else if let Some((key, value)) = part.split_once('>') {
                Requirement::GreaterThan(key.trim().into(), integer(value)?)
            } else if let Some((key, value)) = part.split_once('<') {
                Requirement::LessThan(key.trim().into(), integer(value)?)
            } else if let Some((key, value)) = part.split_once("!=") {
                Requirement::NotEquals(key.trim().into(), value.trim().into())
            } else if let Some((key, value)) =
                part.split_once("==").or_else(|| part.split_once('='))
            {
                Requirement::Equals(key.trim().into(), value.trim().into())
            } else {
                Requirement::Exists(part.to_string())
            };
            let (key, values): (&str, Vec<&str>) = match &requirement {
                Requirement::Equals(k, v) | Requirement::NotEquals(k, v) => (k, vec![v.as_str()]),
                Requirement::In(k, vs) | Requirement::NotIn(k, vs) => {
                    (k, vs.iter().map(String::as_str).collect())
                }
                Requirement::Exists(k)
                | Requirement::DoesNotExist(k)
                | Requirement::GreaterThan(k, _)
                | Requirement::LessThan(k, _) => (k, vec![]),
            };
            if !valid_key(key) {
                return Err(format!(
                    "unable to parse requirement: invalid label key \"{key}\""
                ));
            }
            if let Some(bad) = values.iter().find(|v| !valid_value(v)) {
                return Err(format!(
                    "unable to parse requirement: invalid label value: \"{bad}\""
                ));
            }
            requirements.push(requirement);
        }
        Ok(Self { requirements })
    }

    /// From a `matchLabels`/`matchExpressions` object (as in a Deployment's `spec.selector`).
    pub(crate) fn from_object(selector: &Value) -> Self {
        let mut requirements = Vec::new();
        if let Some(labels) = selector["matchLabels"].as_object() {
            for (k, v) in labels {
                requirements.push(Requirement::Equals(
                    k.clone(),
                    v.as_str().unwrap_or_default().into(),
                ));
            }
        }
        for expr in selector["matchExpressions"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let key = expr["key"].as_str().unwrap_or_default().to_string();
            let values: Vec<String> = expr["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            requirements.push(match expr["operator"].as_str() {
                Some("In") => Requirement::In(key, values),
                Some("NotIn") => Requirement::NotIn(key, values),
                Some("Exists") => Requirement::Exists(key),
                _ => Requirement::DoesNotExist(key),
            });
        }
        Self { requirements }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    pub(crate) fn matches(&self, labels: &Value) -> bool {
        let get = |k: &str| labels.get(k).and_then(Value::as_str);
        let number = |k: &str| get(k).and_then(|v| v.parse::<i64>().ok());
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
            Requirement::GreaterThan(k, n) => number(k).is_some_and(|x| x > *n),
            Requirement::LessThan(k, n) => number(k).is_some_and(|x| x < *n),
        })
    }
}

/// A parsed `fieldSelector` (`metadata.name=x,spec.nodeName!=y`).
#[derive(Debug, Clone, Default)]
pub(crate) struct FieldSelector {
    terms: Vec<(String, bool, String)>,
}

impl FieldSelector {
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut terms = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            // Old clients' name for a pod's node (the conversion maps it so).
            let renamed = match part.strip_prefix("spec.host") {
                Some(rest) if rest.starts_with(['=', '!']) => format!("spec.nodeName{rest}"),
                _ => part.to_string(),
            };
            let part = renamed.as_str();
            let (path, negate, value) = if let Some((p, v)) = part.split_once("!=") {
                (p, true, v)
            } else if let Some((p, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                (p, false, v)
            } else {
                return Err(format!(
                    "invalid selector: '{part}'; can't understand '{part}'"
                ));
            };
            terms.push((path.trim().to_string(), negate, value.trim().to_string()));
        }
        Ok(Self { terms })
    }

    /// Whether every field it selects on is one the kind's API supports, in the API server's
    /// words: kinds with their own conversion (kubernetes pkg/apis/core/v1/conversion.go,
    /// apps/v1 and batch/v1) answer `field label not supported: spec.foo`; every other kind
    /// takes its metadata's name and namespace only, `"spec.foo" is not a known field
    /// selector: only "metadata.name", "metadata.namespace"` (apimachinery's
    /// DefaultMetaV1FieldSelectorConversion).
    pub(crate) fn supported_by(&self, group: &str, kind: &str) -> Result<(), String> {
        let own: Option<&[&str]> = match (group, kind) {
            ("", "Pod") => Some(&[
                "metadata.name",
                "metadata.namespace",
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.podIPs",
                "status.nominatedNodeName",
            ]),
            ("", "Node") => Some(&["metadata.name", "spec.unschedulable"]),
            ("", "ReplicationController") => {
                Some(&["metadata.name", "metadata.namespace", "status.replicas"])
            }
            ("", "Event") => Some(&[
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
                "metadata.namespace",
                "metadata.name",
            ]),
            ("", "Namespace") => Some(&["status.phase", "metadata.name"]),
            ("", "Secret") => Some(&["type", "metadata.namespace", "metadata.name"]),
            ("", "Service") => Some(&[
                "metadata.namespace",
                "metadata.name",
                "spec.clusterIP",
                "spec.type",
            ]),
            ("apps", "ReplicaSet") => {
                Some(&["metadata.name", "metadata.namespace", "status.replicas"])
            }
            ("batch", "Job") => Some(&["metadata.name", "metadata.namespace", "status.successful"]),
            _ => None,
        };
        for (path, _, _) in &self.terms {
            match own {
                Some(fields) if fields.contains(&path.as_str()) => {}
                Some(_) => return Err(format!("field label not supported: {path}")),
                None if matches!(path.as_str(), "metadata.name" | "metadata.namespace") => {}
                None => {
                    return Err(format!(
                        "{path:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                    ));
                }
            }
        }
        Ok(())
    }

    /// The value a `path=value` term requires, if there is one.
    pub(crate) fn required(&self, path: &str) -> Option<&str> {
        self.terms
            .iter()
            .find(|(p, negate, _)| p == path && !negate)
            .map(|(_, _, value)| value.as_str())
    }

    pub(crate) fn matches(&self, object: &Value) -> bool {
        self.terms.iter().all(|(path, negate, value)| {
            let mut current = object;
            for part in path.split('.') {
                current = &current[part];
            }
            let equal = match current {
                Value::String(s) => s == value,
                Value::Null => value.is_empty(),
                Value::Bool(b) => value == if *b { "true" } else { "false" },
                other => serde_json::from_str::<Value>(value).is_ok_and(|v| v == *other),
            };
            equal != *negate
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn set_based_and_equality_requirements() {
        let labels = json!({"tier": "gpu", "topology.kubernetes.io/zone": "ap-northeast-2a"});
        let yes = [
            "tier=gpu",
            "tier==gpu",
            "tier!=primary",
            "tier in (gpu,cpu)",
            "tier,!spot",
            "topology.kubernetes.io/zone notin (ap-northeast-2c)",
        ];
        for s in yes {
            assert!(LabelSelector::parse(s).unwrap().matches(&labels), "{s}");
        }
        for s in ["tier=primary", "spot", "tier notin (gpu)"] {
            assert!(!LabelSelector::parse(s).unwrap().matches(&labels), "{s}");
        }
        // Gt and Lt compare a label's value as an integer; one that is not never matches.
        let sized = json!({"gpus": "8", "tier": "gpu"});
        for (s, matched) in [
            ("gpus>4", true),
            ("gpus<4", false),
            ("gpus<9", true),
            ("tier>1", false),
        ] {
            assert_eq!(
                LabelSelector::parse(s).unwrap().matches(&sized),
                matched,
                "{s}"
            );
        }
        assert_eq!(
            LabelSelector::parse("x>abc").unwrap_err(),
            "unable to parse requirement: values[0]: Invalid value: \"abc\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        // In labels' parser's words (`parseValues`, `parseIdentifiersList`).
        assert_eq!(
            LabelSelector::parse("tier in gpu").unwrap_err(),
            "unable to parse requirement: found 'gpu' expected: '('"
        );
        assert_eq!(
            LabelSelector::parse("a in (b").unwrap_err(),
            "unable to parse requirement: found '', expected: ',' or ')'"
        );
        assert_eq!(
            LabelSelector::parse("a in (b c)").unwrap_err(),
            "unable to parse requirement: found 'c', expected: ',' or ')'"
        );
        assert!(LabelSelector::parse("a in (b,,c)").is_ok());
        assert!(LabelSelector::parse("ti er=x").is_err());
    }

    #[test]
    fn each_kind_takes_the_fields_its_api_supports_in_its_words() {
        let pods = FieldSelector::parse("spec.nodeName=n1,status.phase=Running").unwrap();
        assert!(pods.supported_by("", "Pod").is_ok());
        assert_eq!(
            FieldSelector::parse("spec.foo=x")
                .unwrap()
                .supported_by("", "Pod"),
            Err("field label not supported: spec.foo".into())
        );
        assert_eq!(
            FieldSelector::parse("metadata.namespace=x")
                .unwrap()
                .supported_by("", "Namespace"),
            Err("field label not supported: metadata.namespace".into())
        );
        assert_eq!(
            FieldSelector::parse("foo.bar=baz")
                .unwrap()
                .supported_by("networking.k8s.io", "Ingress"),
            Err(r#""foo.bar" is not a known field selector: only "metadata.name", "metadata.namespace""#.into())
        );
        assert!(
            FieldSelector::parse("metadata.name=web")
                .unwrap()
                .supported_by("apps", "Deployment")
                .is_ok()
        );
        let old = FieldSelector::parse("spec.host=n1").unwrap();
        assert_eq!(old.required("spec.nodeName"), Some("n1"));
    }

    #[test]
    fn field_selectors_walk_paths() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}});
        assert!(
            FieldSelector::parse("spec.nodeName=n1,status.phase!=Pending")
                .unwrap()
                .matches(&pod)
        );
        assert!(
            !FieldSelector::parse("metadata.name=q")
                .unwrap()
                .matches(&pod)
        );
        assert!(FieldSelector::parse("nonsense").is_err());
        // A missing field reads as empty, a number as its text.
        assert!(
            FieldSelector::parse("spec.schedulerName=")
                .unwrap()
                .matches(&pod)
        );
        assert!(
            !FieldSelector::parse("spec.schedulerName!=")
                .unwrap()
                .matches(&pod)
        );
        let numbered = json!({"spec": {"priority": 7}});
        assert!(
            FieldSelector::parse("spec.priority=7")
                .unwrap()
                .matches(&numbered)
        );
    }

    #[test]
    fn a_required_value_is_what_an_index_can_answer() {
        let selector = FieldSelector::parse("spec.nodeName!=n2,spec.nodeName=n1").unwrap();
        assert_eq!(selector.required("spec.nodeName"), Some("n1"));
        assert_eq!(selector.required("status.phase"), None);
        let negated = FieldSelector::parse("spec.nodeName!=n1").unwrap();
        assert_eq!(negated.required("spec.nodeName"), None);
    }
}
