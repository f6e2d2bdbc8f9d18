//! The fields of every message of the Kubernetes 1.35 protobuf definitions the twin decodes,
//! read once from descriptors.txt (written by scripts/gen-protobuf-descriptors.py from
//! kubernetes/api and kubernetes/apimachinery v0.35.0).

use std::collections::HashMap;
use std::sync::OnceLock;

const TEXT: &str = include_str!("descriptors.txt");

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `string`, `int32`, `bool`, ... as the proto names them.
    Scalar(&'static str),
    Message(&'static str),
}

#[derive(Debug, Clone)]
pub(crate) struct FieldDescriptor {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    pub(crate) repeated: bool,
    /// A map's key type; the entries are messages of key = 1 and value = 2 (`kind`).
    pub(crate) map_key: Option<&'static str>,
}

pub(crate) type Message = HashMap<u64, FieldDescriptor>;

fn parse() -> HashMap<&'static str, Message> {
    let mut messages: HashMap<&'static str, Message> = HashMap::new();
    let mut current: Option<&'static str> = None;
    for line in TEXT
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        if let Some(name) = line.strip_prefix("message ") {
            messages.insert(name, HashMap::new());
            current = Some(name);
            continue;
        }
        let (Some(message), mut words) = (current, line.split(' ')) else {
            continue;
        };
        let (Some(tag), Some(name), Some(kind)) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        let Ok(tag) = tag.parse::<u64>() else {
            continue;
        };
        let target = words.next();
        let (repeated, map_key, kind) = if let Some(rest) = kind.strip_prefix("repeated:") {
            (true, None, rest)
        } else if let Some(rest) = kind.strip_prefix("map:") {
            let (key, value) = rest.split_once(':').unwrap_or((rest, "string"));
            (true, Some(key), value)
        } else {
            (false, None, kind)
        };
        let kind = match (kind, target) {
            ("message", Some(target)) => Kind::Message(target),
            (scalar, _) => Kind::Scalar(scalar),
        };
        if let Some(fields) = messages.get_mut(message) {
            fields.insert(
                tag,
                FieldDescriptor {
                    name,
                    kind,
                    repeated,
                    map_key,
                },
            );
        }
    }
    messages
}

/// The message named `name` (`k8s.io.api.apps.v1.Deployment`).
pub(crate) fn message(name: &str) -> Option<&'static Message> {
    static MESSAGES: OnceLock<HashMap<&'static str, Message>> = OnceLock::new();
    MESSAGES.get_or_init(parse).get(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployment_and_a_config_map_read_from_the_definitions() {
        let deployment = message("k8s.io.api.apps.v1.DeploymentSpec").expect("DeploymentSpec");
        assert_eq!(deployment[&1].name, "replicas");
        assert_eq!(
            deployment[&3].kind,
            Kind::Message("k8s.io.api.core.v1.PodTemplateSpec")
        );
        let config = message("k8s.io.api.core.v1.ConfigMap").expect("ConfigMap");
        assert_eq!(config[&3].map_key, Some("string"));
        assert_eq!(config[&3].kind, Kind::Scalar("bytes"));
    }
}
