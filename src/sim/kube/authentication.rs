//! Who sent a Kubernetes request, as EKS's API server decides it: the lab's admin token, an EKS
//! token (`k8s-aws-v1.`: checked as aws-iam-authenticator does, its signature replayed to the
//! twin's STS, its principal mapped through the cluster's access entries), or nobody. A
//! credential that does not check out is 401 `Unauthorized` and nothing more, as on EKS; why
//! is kept for `lab serve` to print (EKS writes it to the authenticator's log).

use std::time::SystemTime;

use crate::auth::eks_token;
use crate::auth::sigv4::Sent;
use crate::lab;
use crate::sim::aws::signature;
use crate::sim::twin::Twin;

/// The user a request runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub groups: Vec<String>,
    /// The EKS access policies of its access entry: `(policy ARN, namespaces)`, where no
    /// namespaces means the cluster scope.
    pub policies: Vec<(String, Vec<String>)>,
    /// The IAM principal behind an EKS token.
    pub arn: Option<String>,
}

impl User {
    pub fn anonymous() -> Self {
        Self {
            name: "system:anonymous".into(),
            groups: vec!["system:unauthenticated".into()],
            policies: Vec::new(),
            arn: None,
        }
    }

    pub fn is_anonymous(&self) -> bool {
        self.name == "system:anonymous"
    }
}

/// The user of a request with this `Authorization` header, or why it has none.
pub fn authenticate(twin: &Twin, authorization: Option<&str>) -> Result<User, String> {
    let Some(header) = authorization else {
        return Ok(User::anonymous());
    };
    let Some(token) = header.strip_prefix("Bearer ").map(str::trim) else {
        let scheme = header.split_whitespace().next().unwrap_or_default();
        return Err(format!("an Authorization header of scheme `{scheme}` (EKS takes bearer tokens only)"));
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
    Err("a bearer token that is neither the lab's admin token nor an EKS token (k8s-aws-v1.)".into())
}

fn eks_user(twin: &Twin, token: &str) -> Result<User, String> {
    let now = SystemTime::now();
    let own_sts = twin.aws_authority.get().cloned();
    let url = eks_token::read(token, now, |scheme, host| {
        (scheme == "https" && eks_token::is_sts_host(host))
            || (scheme == "http" && own_sts.as_deref() == Some(host))
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
    twin.aws(|state| {
        let (principal, _) = signature::check(&state.identities, &sent, now_s).map_err(|refusal| {
            let (status, code, message) = signature::answer("sts", &refusal);
            format!(
                "EKS token refused: STS answered {status} {code} ({message}){}",
                if refusal == signature::Refusal::Mismatch {
                    format!("; a token signed for another cluster than {} fails so", lab::CLUSTER_NAME)
                } else {
                    String::new()
                }
            )
        })?;
        let cluster = state.clusters.get(lab::CLUSTER_NAME).ok_or_else(|| {
            format!("EKS token of {}: there is no cluster {} to map it", principal.arn, lab::CLUSTER_NAME)
        })?;
        let entry = (cluster.authentication_mode != "CONFIG_MAP")
            .then(|| cluster.access_entries.get(&principal.arn))
            .flatten()
            .ok_or_else(|| {
                format!(
                    "the principal {} has no access entry in cluster {}: add one with `aws eks create-access-entry --cluster-name {} --principal-arn {}` and give it a policy with `aws eks associate-access-policy`",
                    principal.arn, lab::CLUSTER_NAME, lab::CLUSTER_NAME, principal.arn
                )
            })?;
        let mut groups = entry.groups.clone();
        groups.push("system:authenticated".into());
        Ok(User {
            name: entry.username.clone(),
            groups,
            policies: entry
                .policies
                .values()
                .map(|p| (p.policy_arn.clone(), if p.scope == "namespace" { p.namespaces.clone() } else { Vec::new() }))
                .collect(),
            arn: Some(principal.arn),
        })
    })
}
