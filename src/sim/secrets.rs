//! The lab's secrets, made fresh for each twin: the admin token (the twin's `/twin/*`
//! endpoints, and `kubernetes-admin` in the kubeconfig `lab serve` writes) and the lab user's
//! AWS keys, and the key its ServiceAccount tokens are signed with. Only files written 0600 and the in-process clients ever hold them.

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::auth::secret::Secret;

/// The lab user's access key id (not a secret; its secret key is).
pub const LAB_ACCESS_KEY_ID: &str = "AKIDLABTWIN";

#[derive(Debug)]
pub struct LabSecrets {
    pub admin_token: Secret,
    pub access_key_id: String,
    pub secret_access_key: Secret,
    /// Signs the ServiceAccount tokens the twin issues (TokenRequest).
    pub service_account_key: Secret,
}

impl LabSecrets {
    pub fn generate() -> Self {
        Self {
            admin_token: Secret::random("lab-admin-"),
            access_key_id: LAB_ACCESS_KEY_ID.into(),
            secret_access_key: Secret::random(""),
            service_account_key: Secret::random(""),
        }
    }

    /// Whether an `Authorization` header carries the admin token.
    pub fn is_admin(&self, authorization: Option<&str>) -> bool {
        authorization
            .and_then(|h| h.strip_prefix("Bearer "))
            .is_some_and(|t| self.admin_token.matches(t.trim()))
    }
}

/// Why credentials were refused, newest last and bounded: `lab serve` prints them (EKS keeps
/// them in the authenticator's log; a 401 itself says only `Unauthorized`).
#[derive(Debug, Default)]
pub struct Refusals(Mutex<VecDeque<String>>);

impl Refusals {
    const KEPT: usize = 100;

    pub fn record(&self, why: String) {
        let mut list = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if list.len() == Self::KEPT {
            list.pop_front();
        }
        list.push_back(why);
    }

    pub fn drain(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain(..)
            .collect()
    }
}
