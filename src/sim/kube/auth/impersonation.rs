//! Impersonation, as `kubectl --as`, `--as-group` and `auth can-i --as` use it: the
//! `Impersonate-User`, `-Group`, `-Uid` and `-Extra-*` headers make a request run as another
//! user, if the real one may `impersonate` each of them (users, groups, serviceaccounts, uids,
//! userextras), as the API server checks before anything else.

use http::HeaderMap;

use super::authentication::User;
use super::request_info::RequestAttributes;
use crate::sim::kube::storage::status::ApiError;

/// Who a request asks to run as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Impersonation {
    pub(crate) user: String,
    pub(crate) groups: Vec<String>,
    pub(crate) uid: Option<String>,
    pub(crate) extra: Vec<(String, String)>,
}

fn values<'a>(headers: &'a HeaderMap, name: &str) -> impl Iterator<Item = String> + 'a {
    headers
        .get_all(name)
        .into_iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The impersonation a request's headers ask for, if any.
pub(crate) fn requested(headers: &HeaderMap) -> Result<Option<Impersonation>, ApiError> {
    let user = values(headers, "impersonate-user").next();
    let groups: Vec<String> = values(headers, "impersonate-group").collect();
    let uid = values(headers, "impersonate-uid").next();
    let extra: Vec<(String, String)> = headers
        .iter()
        .filter_map(|(name, value)| {
            let key = name.as_str().strip_prefix("impersonate-extra-")?;
            Some((key.to_string(), value.to_str().ok()?.to_string()))
        })
        .collect();
    match user {
        Some(user) => Ok(Some(Impersonation {
            user,
            groups,
            uid,
            extra,
        })),
        None if groups.is_empty() && uid.is_none() && extra.is_empty() => Ok(None),
        None => Err(ApiError::bad_request(
            "requested impersonation of groups, a uid or extra fields without impersonating a user (add Impersonate-User, kubectl's --as)",
        )),
    }
}

fn impersonate(
    resource: &str,
    subresource: Option<&str>,
    namespace: Option<&str>,
    name: &str,
) -> RequestAttributes {
    RequestAttributes::Resource {
        verb: "impersonate".into(),
        api_group: String::new(),
        resource: resource.into(),
        subresource: subresource.map(str::to_string),
        namespace: namespace.map(str::to_string),
        name: Some(name.into()),
    }
}

/// `(namespace, name)` of a ServiceAccount username.
fn service_account(user: &str) -> Option<(&str, &str)> {
    user.strip_prefix("system:serviceaccount:")?.split_once(':')
}

impl Impersonation {
    /// What the real user must be allowed, one check each.
    pub(crate) fn checks(&self) -> Vec<RequestAttributes> {
        let mut checks = vec![match service_account(&self.user) {
            Some((namespace, name)) => impersonate("serviceaccounts", None, Some(namespace), name),
            None => impersonate("users", None, None, &self.user),
        }];
        checks.extend(
            self.groups
                .iter()
                .map(|g| impersonate("groups", None, None, g)),
        );
        checks.extend(self.uid.iter().map(|u| impersonate("uids", None, None, u)));
        checks.extend(
            self.extra
                .iter()
                .map(|(key, value)| impersonate("userextras", Some(key), None, value)),
        );
        checks
    }

    /// The user the request then runs as: a ServiceAccount with its groups unless others are
    /// asked, everyone but `system:anonymous` signed in, with `policies` from its access entry.
    pub(crate) fn into_user(self, policies: Vec<(String, Vec<String>)>) -> User {
        let mut groups = self.groups;
        if groups.is_empty()
            && let Some((namespace, _)) = service_account(&self.user)
        {
            groups.push("system:serviceaccounts".into());
            groups.push(format!("system:serviceaccounts:{namespace}"));
        }
        let everyone = if self.user == "system:anonymous" {
            "system:unauthenticated"
        } else {
            "system:authenticated"
        };
        if !groups.iter().any(|g| g == everyone) {
            groups.push(everyone.into());
        }
        User {
            name: self.user,
            groups,
            policies,
            arn: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, http::HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn a_service_account_is_checked_in_its_namespace_and_gets_its_groups() {
        let wanted = requested(&headers(&[(
            "impersonate-user",
            "system:serviceaccount:runbook-drill:runbook-drill",
        )]))
        .expect("valid")
        .expect("asked");
        assert_eq!(
            wanted.checks(),
            vec![impersonate(
                "serviceaccounts",
                None,
                Some("runbook-drill"),
                "runbook-drill"
            )]
        );
        let user = wanted.into_user(Vec::new());
        assert_eq!(
            user.groups,
            vec![
                "system:serviceaccounts",
                "system:serviceaccounts:runbook-drill",
                "system:authenticated"
            ]
        );
    }

    #[test]
    fn users_groups_and_extras_are_each_checked() {
        let wanted = requested(&headers(&[
            ("impersonate-user", "alice"),
            ("impersonate-group", "gpu-admins"),
            ("impersonate-group", "readers"),
            ("impersonate-extra-scopes", "view"),
        ]))
        .expect("valid")
        .expect("asked");
        let checks = wanted.checks();
        assert_eq!(checks.len(), 4);
        assert_eq!(checks[0], impersonate("users", None, None, "alice"));
        assert_eq!(
            checks[3],
            impersonate("userextras", Some("scopes"), None, "view")
        );
        assert!(requested(&HeaderMap::new()).expect("valid").is_none());
        assert_eq!(
            requested(&headers(&[("impersonate-group", "x")]))
                .expect_err("no user")
                .code,
            400
        );
    }
}
