//! The `aws-auth` ConfigMap in kube-system: the older way EKS maps IAM principals to
//! Kubernetes users, read when the cluster's authenticationMode is CONFIG_MAP or
//! API_AND_CONFIG_MAP (access entries win where both name a principal). `mapUsers` matches an
//! IAM user's ARN; `mapRoles` a role's, which an assumed-role session is. Usernames may use
//! `{{AccountID}}` and `{{SessionName}}`.

use serde::Deserialize;
use serde_json::Value;

use crate::sim::kube::storage::state::KubeState;

#[derive(Debug, Deserialize)]
struct Mapping {
    #[serde(alias = "userarn", alias = "rolearn")]
    arn: String,
    #[serde(default)]
    username: String,
    #[serde(default)]
    groups: Vec<String>,
}

/// `arn:aws:iam::ACCOUNT:role/NAME` for an assumed-role session
/// (`arn:aws:sts::ACCOUNT:assumed-role/NAME/SESSION`), with the session name.
fn role_of_session(arn: &str) -> Option<(String, &str)> {
    let (head, rest) = arn.split_once(":assumed-role/")?;
    let (role, session) = rest.rsplit_once('/')?;
    Some((
        format!("{}:role/{role}", head.replacen(":sts:", ":iam:", 1)),
        session,
    ))
}

/// The role part of a role ARN, its path dropped (`role/team/gpu` is matched as `role/gpu`,
/// as the authenticator does).
fn without_path(arn: &str) -> String {
    match arn.split_once(":role/") {
        Some((head, path)) => format!("{head}:role/{}", path.rsplit('/').next().unwrap_or(path)),
        None => arn.to_string(),
    }
}

fn mappings(data: &Value, key: &str) -> Result<Vec<Mapping>, String> {
    match data[key].as_str() {
        None => Ok(Vec::new()),
        Some(text) => serde_saphyr::from_str(text)
            .map_err(|e| format!("the aws-auth ConfigMap's {key} is not a list of mappings: {e}")),
    }
}

/// `(username, groups)` of `principal_arn` in the aws-auth ConfigMap, None when it maps nothing,
/// or why the ConfigMap cannot be read.
pub(crate) fn mapped(
    state: &KubeState,
    principal_arn: &str,
) -> Result<Option<(String, Vec<String>)>, String> {
    let Some(configmap) = state.object_ref("configmaps", "kube-system", "aws-auth") else {
        return Ok(None);
    };
    let data = &configmap["data"];
    let account = principal_arn.split(':').nth(4).unwrap_or_default();
    let (wanted, session, key) = match role_of_session(principal_arn) {
        Some((role, session)) => (role, session, "mapRoles"),
        None => (principal_arn.to_string(), "", "mapUsers"),
    };
    let found = mappings(data, key)?
        .into_iter()
        .find(|m| without_path(&m.arn) == wanted);
    Ok(found.map(|m| {
        let name = if m.username.is_empty() {
            principal_arn.to_string()
        } else {
            m.username
                .replace("{{AccountID}}", account)
                .replace("{{SessionName}}", session)
        };
        (name, m.groups)
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::sim::kube::storage::api;

    fn with_aws_auth(data: Value) -> KubeState {
        let mut state = KubeState::default();
        for (kind, object) in [
            ("Namespace", json!({"metadata": {"name": "kube-system"}})),
            (
                "ConfigMap",
                json!({"metadata": {"name": "aws-auth", "namespace": "kube-system"}, "data": data}),
            ),
        ] {
            let resource = state.resource("v1", kind).expect("built in");
            let namespace = object["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            api::create(&mut state, &resource, &namespace, object, false).expect("created");
        }
        state
    }

    #[test]
    fn users_and_assumed_roles_map_with_their_templates() {
        let state = with_aws_auth(json!({
            "mapUsers": "- userarn: arn:aws:iam::123456789012:user/ops\n  username: ops\n  groups: [system:masters]\n",
            "mapRoles": "- rolearn: arn:aws:iam::123456789012:role/team/gpu-drill\n  username: drill:{{SessionName}}@{{AccountID}}\n  groups: [drillers]\n",
        }));
        assert_eq!(
            mapped(&state, "arn:aws:iam::123456789012:user/ops"),
            Ok(Some(("ops".into(), vec!["system:masters".into()])))
        );
        assert_eq!(
            mapped(
                &state,
                "arn:aws:sts::123456789012:assumed-role/gpu-drill/ci-42"
            ),
            Ok(Some((
                "drill:ci-42@123456789012".into(),
                vec!["drillers".into()]
            )))
        );
        assert_eq!(
            mapped(&state, "arn:aws:iam::123456789012:user/other"),
            Ok(None)
        );
        let broken = with_aws_auth(json!({"mapUsers": "userarn: [unclosed"}));
        assert!(
            mapped(&broken, "arn:aws:iam::123456789012:user/ops")
                .expect_err("unreadable")
                .contains("mapUsers")
        );
    }
}
