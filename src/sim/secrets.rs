//! The lab's secrets, made fresh for each twin: the admin token (the twin's `/twin/*`
//! endpoints, and `kubernetes-admin` in the kubeconfig `lab serve` writes) and the lab user's
//! AWS keys, and the key its ServiceAccount tokens are signed with. Only files written 0600 and the in-process clients ever hold them.

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::auth::secret::Secret;

/// The lab user's access key id (not a secret; its secret key is).
pub(crate) const LAB_ACCESS_KEY_ID: &str = "AKIDLABTWIN";

#[derive(Debug)]
pub(crate) struct LabSecrets {
    pub(crate) admin_token: Secret,
    pub(crate) access_key_id: String,
    pub(crate) secret_access_key: Secret,
    /// Signs the ServiceAccount tokens the twin issues (TokenRequest).
    pub(crate) service_account_key: Secret,
}

impl LabSecrets {
    pub(crate) fn generate() -> Self {
        Self {
            admin_token: Secret::random("lab-admin-"),
            access_key_id: LAB_ACCESS_KEY_ID.into(),
            secret_access_key: Secret::random(""),
            service_account_key: Secret::random(""),
        }
    }

    /// Whether an `Authorization` header carries the admin token.
    pub(crate) fn is_admin(&self, authorization: Option<&str>) -> bool {
        authorization
            .and_then(|h| h.strip_prefix("Bearer "))
            .is_some_and(|t| self.admin_token.matches(t.trim()))
    }
}

/// Why credentials were refused, newest last and bounded: `lab serve` prints them (EKS keeps
/// them in the authenticator's log; a 401 itself says only `Unauthorized`).
#[derive(Debug, Default)]
pub(crate) struct Refusals(Mutex<VecDeque<String>>);

impl Refusals {
    const KEPT: usize = 100;

    pub(crate) fn record(&self, why: String) {
        let mut list = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if list.len() == Self::KEPT {
            list.pop_front();
        }
        list.push_back(why);
    }

    pub(crate) fn drain(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain(..)
            .collect()
    }
}
