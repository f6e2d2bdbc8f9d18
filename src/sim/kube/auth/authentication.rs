//! Who sent a Kubernetes request, as EKS's API server decides it: the lab's admin token, an EKS
//! token (`k8s-aws-v1.`: checked as aws-iam-authenticator does, its signature replayed to the
//! twin's STS, its principal mapped through the cluster's access entries), a ServiceAccount
//! token the twin issued (TokenRequest), or nobody. A
//! credential that does not check out is 401 `Unauthorized` and nothing more, as on EKS; why
//! is kept for `lab serve` to print (EKS writes it to the authenticator's log).

use std::time::SystemTime;

use super::{aws_auth, token_request};
use crate::auth::sigv4::Sent;
use crate::auth::{eks_token, service_account_token};
use crate::lab;
use crate::sim::aws::identity::Principal;
use crate::sim::aws::signature;
use crate::sim::aws::state::{AccessEntry, AwsState};
use crate::sim::twin::Twin;

/// The user a request runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct User {
    pub(crate) name: String,
    pub(crate) groups: Vec<String>,
    /// The EKS access policies of its access entry: `(policy ARN, namespaces)`, where no
    /// namespaces means the cluster scope.
    pub(crate) policies: Vec<(String, Vec<String>)>,
    /// The IAM principal behind an EKS token.
    pub(crate) arn: Option<String>,
}

impl User {
    pub(crate) fn anonymous() -> Self {
        Self {
            name: "system:anonymous".into(),
            groups: vec!["system:unauthenticated".into()],
            policies: Vec::new(),
            arn: None,
        }
    }

    pub(crate) fn is_anonymous(&self) -> bool {
        self.name == "system:anonymous"
    }
}

/// The user of a request with this `Authorization` header, or why it has none.
pub(crate) fn authenticate(twin: &Twin, authorization: Option<&str>) -> Result<User, String> {
    let Some(header) = authorization else {
        return Ok(User::anonymous());
    };
    if header.trim() == "Bearer"
        || header
            .strip_prefix("Bearer ")
            .is_some_and(|t| t.trim().is_empty())
    {
        return Err("an empty bearer token (`Authorization: Bearer` with nothing after it)".into());
    }
    let Some(token) = header.strip_prefix("Bearer ").map(str::trim) else {
        let scheme = header.split_whitespace().next().unwrap_or_default();
        return Err(format!(
            "an Authorization header of scheme `{scheme}` (EKS takes bearer tokens only)"
        ));
    };
    if twin.secrets.admin_token.matches(token) {
        return Ok(User {
            name: "kubernetes-admin".into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            policies: Vec::new(),
            arn: None,
        });
    }
    if token.starts_with(eks_token::PREFIX) {
        return eks_user(twin, token);
    }
    if service_account_token::looks_like_one(token) {
        return service_account_user(twin, token);
    }
    Err(
        "a bearer token that is neither the lab's admin token, an EKS token (k8s-aws-v1.) nor a ServiceAccount token"
            .into(),
    )
}

/// The ServiceAccount a token the twin issued names, while the token is current, meant for the
/// API server, and its ServiceAccount (the same one, by uid) still exists.
fn service_account_user(twin: &Twin, token: &str) -> Result<User, String> {
    let claims = service_account_token::read(
        twin.secrets.service_account_key.expose().as_bytes(),
        token,
        token_request::wall_clock_seconds(),
    )
    .map_err(|e| format!("ServiceAccount token refused: {e}"))?;
    let subject = claims.subject();
    if !claims
        .audiences
        .iter()
        .any(|a| a == token_request::API_AUDIENCE)
    {
        return Err(format!(
            "ServiceAccount token of {subject} refused: its audiences {:?} do not include the API server's ({})",
            claims.audiences,
            token_request::API_AUDIENCE
        ));
    }
    let uid = twin.read_kube(|s| {
        s.object_ref("serviceaccounts", &claims.namespace, &claims.name)
            .map(|o| {
                o["metadata"]["uid"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
    });
    match uid {
        None => Err(format!(
            "ServiceAccount token of {subject} refused: the ServiceAccount no longer exists"
        )),
        Some(uid) if uid != claims.uid => Err(format!(
            "ServiceAccount token of {subject} refused: the ServiceAccount was deleted and made again since the token was issued"
        )),
        Some(_) => Ok(User {
            name: subject,
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{}", claims.namespace),
                "system:authenticated".into(),
            ],
            policies: Vec::new(),
            arn: None,
        }),
    }
}

fn eks_user(twin: &Twin, token: &str) -> Result<User, String> {
    let now = SystemTime::now();
    let own_sts = twin.aws_authority.get().cloned();
    // As aws-iam-authenticator: HTTPS to STS only, here the lab's own endpoint besides.
    let url = eks_token::read(token, now, |scheme, host| {
        scheme == "https" && (eks_token::is_sts_host(host) || own_sts.as_deref() == Some(host))
    })
    .map_err(|e| format!("EKS token refused: {e}"))?;
    if url.claim.service != "sts" {
        return Err(format!(
            "EKS token refused: it is signed for {}, not sts",
            url.claim.service
        ));
    }
    let headers = url.replay_headers(lab::CLUSTER_NAME);
    let sent = Sent {
        method: "GET",
        path: "/",
        raw_query: &url.raw_query,
        headers: &headers,
        body: b"",
    };
    let now_s = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let signer = |key: &str| twin.read_aws(|state| state.identities.signer(key));
    let (principal, _) = signature::check(signer, &sent, now_s).map_err(|refusal| {
        let (status, code, message) = signature::answer("sts", &refusal);
        let hint = if refusal == signature::Refusal::Mismatch {
            format!(
                "; a token signed for another cluster than {} fails so",
                lab::CLUSTER_NAME
            )
        } else {
            String::new()
        };
        format!("EKS token refused: STS answered {status} {code} ({message}){hint}")
    })?;
    let (mode, entry) = twin.read_aws(|state| access_entry_user(state, &principal))?;
    if let Some(user) = entry {
        return Ok(user);
    }
    if mode != "API" {
        let found = twin.read_kube(|state| aws_auth::mapped(state, &principal.arn))?;
        if let Some((name, mut groups)) = found {
            groups.push("system:authenticated".into());
            return Ok(User {
                name,
                groups,
                policies: Vec::new(),
                arn: Some(principal.arn),
            });
        }
    }
    Err(format!(
        "the principal {arn} has no access entry in cluster {name}{also}: add one with `aws eks create-access-entry --cluster-name {name} --principal-arn {arn}` and give it a policy with `aws eks associate-access-policy`",
        arn = principal.arn,
        name = lab::CLUSTER_NAME,
        also = if mode == "API" {
            ""
        } else {
            " and is not in the aws-auth ConfigMap"
        },
    ))
}

/// The EKS access policies of an access entry: `(policy ARN, namespaces)`, no namespaces for
/// the cluster scope.
fn entry_policies(entry: &AccessEntry) -> Vec<(String, Vec<String>)> {
    entry
        .policies
        .values()
        .map(|p| {
            let namespaces = if p.scope == "namespace" {
                p.namespaces.clone()
            } else {
                Vec::new()
            };
            (p.policy_arn.clone(), namespaces)
        })
        .collect()
}

/// The cluster's authenticationMode, and the Kubernetes user of `principal`'s access entry
/// when it has one the mode lets count.
fn access_entry_user(
    state: &AwsState,
    principal: &Principal,
) -> Result<(String, Option<User>), String> {
    let cluster = state.clusters.get(lab::CLUSTER_NAME).ok_or_else(|| {
        format!(
            "EKS token of {}: there is no cluster {} to map it",
            principal.arn,
            lab::CLUSTER_NAME
        )
    })?;
    let entry = (cluster.config.authentication_mode != "CONFIG_MAP")
        .then(|| cluster.access_entries.get(&principal.arn))
        .flatten();
    let user = entry.map(|entry| {
        let mut groups = entry.groups.clone();
        groups.push("system:authenticated".into());
        User {
            name: entry.username.clone(),
            groups,
            policies: entry_policies(entry),
            arn: Some(principal.arn.clone()),
        }
    });
    Ok((cluster.config.authentication_mode.clone(), user))
}

/// The access policies of the access entry whose Kubernetes username is `username` (a user
/// named by impersonation or a SubjectAccessReview, as EKS's authorizer finds it).
pub(crate) fn policies_of_username(state: &AwsState, username: &str) -> Vec<(String, Vec<String>)> {
    state
        .clusters
        .get(lab::CLUSTER_NAME)
        .filter(|c| c.config.authentication_mode != "CONFIG_MAP")
        .and_then(|c| c.access_entries.values().find(|e| e.username == username))
        .map(entry_policies)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::auth::eks_token::{Keys, presign};
    use crate::clock::VirtualClock;
    use crate::sim::aws::identity::{LAB_USER, user_arn};
    use crate::sim::scenario::{self, Scenario};

    fn lab() -> Arc<Twin> {
        let twin = Twin::new(Arc::new(VirtualClock::new()));
        scenario::load(&twin, &Scenario::Deployed);
        twin
    }

    fn token(twin: &Twin, cluster: &str, sts: Option<&str>, age: Duration) -> String {
        let keys = Keys {
            access_key_id: &twin.secrets.access_key_id,
            secret_access_key: twin.secrets.secret_access_key.expose(),
            session_token: None,
        };
        presign(&keys, lab::REGION, cluster, sts, SystemTime::now() - age).expect("presigned")
    }

    fn bearer(token: &str) -> String {
        format!("Bearer {token}")
    }

    /// The header of a fresh token of the lab user for the lab's cluster.
    fn lab_bearer(twin: &Twin) -> String {
        bearer(&token(twin, lab::CLUSTER_NAME, None, Duration::ZERO))
    }

    #[test]
    fn the_lab_users_token_is_its_access_entry_with_cluster_admin() {
        let twin = lab();
        let user = authenticate(&twin, Some(&lab_bearer(&twin))).expect("accepted");
        assert_eq!(user.name, user_arn(LAB_USER));
        assert_eq!(user.arn.as_deref(), Some(user_arn(LAB_USER).as_str()));
        assert!(
            user.policies
                .iter()
                .any(|(p, ns)| p.ends_with("/AmazonEKSClusterAdminPolicy") && ns.is_empty())
        );
        let admin =
            authenticate(&twin, Some(&bearer(twin.secrets.admin_token.expose()))).expect("admin");
        assert!(admin.groups.contains(&"system:masters".to_string()));
        assert!(authenticate(&twin, None).expect("anonymous").is_anonymous());
    }

    #[test]
    fn an_empty_bearer_token_is_named_as_one_not_as_a_scheme() {
        let twin = lab();
        for header in ["Bearer", "Bearer ", "Bearer    "] {
            let why = authenticate(&twin, Some(header)).expect_err("refused");
            assert!(why.contains("an empty bearer token"), "{header:?}: {why}");
        }
        let why = authenticate(&twin, Some("Basic dXNlcg==")).expect_err("refused");
        assert!(why.contains("scheme `Basic`"), "{why}");
    }

    #[test]
    fn a_token_for_the_labs_own_sts_is_taken_over_https_only() {
        let twin = lab();
        twin.aws_authority.set("127.0.0.1:4566".into()).unwrap();
        let own = token(
            &twin,
            lab::CLUSTER_NAME,
            Some("https://127.0.0.1:4566"),
            Duration::ZERO,
        );
        authenticate(&twin, Some(&bearer(&own))).expect("the lab's own endpoint signs tokens");
        let plain = token(
            &twin,
            lab::CLUSTER_NAME,
            Some("http://127.0.0.1:4566"),
            Duration::ZERO,
        );
        let refused = authenticate(&twin, Some(&bearer(&plain))).expect_err("not over http");
        assert!(refused.contains("unexpected scheme \"http\""), "{refused}");
    }

    #[test]
    fn expired_foreign_tampered_and_other_cluster_tokens_are_refused_with_the_reason() {
        let twin = lab();
        let refused = |token: &str| authenticate(&twin, Some(&bearer(token))).expect_err("refused");
        let old = refused(&token(
            &twin,
            lab::CLUSTER_NAME,
            None,
            Duration::from_secs(16 * 60),
        ));
        assert!(old.contains("X-Amz-Date parameter is expired"), "{old}");
        let other = refused(&token(&twin, "other", None, Duration::ZERO));
        assert!(
            other.contains("SignatureDoesNotMatch") && other.contains("another cluster"),
            "{other}"
        );
        let foreign = refused(&token(
            &twin,
            lab::CLUSTER_NAME,
            Some("https://sts.example.com"),
            Duration::ZERO,
        ));
        assert!(
            foreign.contains("unexpected hostname \"sts.example.com\""),
            "{foreign}"
        );
        let plain = refused(&token(
            &twin,
            lab::CLUSTER_NAME,
            Some("http://127.0.0.1:1"),
            Duration::ZERO,
        ));
        assert!(plain.contains("unexpected scheme \"http\""), "{plain}");
        let good = token(&twin, lab::CLUSTER_NAME, None, Duration::ZERO);
        let tampered = format!(
            "{}{}",
            &good[..good.len() - 2],
            if good.ends_with("AA") { "BB" } else { "AA" }
        );
        assert!(!refused(&tampered).is_empty());
        assert!(refused("not-a-token").contains("neither the lab's admin token, an EKS token"));
        let basic = authenticate(&twin, Some("Basic YWRtaW46YWRtaW4=")).expect_err("basic");
        assert!(basic.contains("`Basic`"), "{basic}");
    }

    #[test]
    fn a_principal_without_an_access_entry_is_told_how_to_get_one() {
        let twin = lab();
        twin.aws(|state| {
            if let Some(cluster) = state.clusters.get_mut(lab::CLUSTER_NAME) {
                cluster.access_entries.clear();
            }
        });
        let why = authenticate(&twin, Some(&lab_bearer(&twin))).expect_err("unmapped");
        assert!(
            why.starts_with(&format!(
                "the principal {} has no access entry in cluster myeks5w and is not in the aws-auth ConfigMap: add one with `aws eks create-access-entry",
                user_arn(LAB_USER)
            )),
            "{why}"
        );
    }
}
