//! Who the twin's AWS side knows: IAM users and their access keys, the lab's own among them.
//! Every call is signed by one of these keys (checked in `signature`); STS says whose it is.

use std::collections::BTreeMap;

use crate::auth::secret::Secret;
use crate::lab;

/// The IAM user the lab's own keys belong to: it created the cluster, so it is its admin.
pub const LAB_USER: &str = "lab";

#[derive(Debug, Clone)]
pub struct User {
    pub name: String,
    /// `AIDA...`, as GetCallerIdentity's `UserId`.
    pub id: String,
    pub created_at: std::time::Duration,
}

impl User {
    pub fn arn(&self) -> String {
        user_arn(&self.name)
    }
}

pub fn user_arn(name: &str) -> String {
    format!("arn:aws:iam::{}:user/{name}", lab::ACCOUNT_ID)
}

#[derive(Debug, Clone)]
pub struct AccessKey {
    pub id: String,
    pub secret: Secret,
    pub user: String,
    pub active: bool,
    pub created_at: std::time::Duration,
}

/// The principal a key signs for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub arn: String,
    pub user_id: String,
    pub account: String,
}

#[derive(Debug, Default)]
pub struct Identities {
    pub users: BTreeMap<String, User>,
    /// By access key id.
    pub keys: BTreeMap<String, AccessKey>,
}

impl Identities {
    /// The principal of an active key, and the key's secret (owned: signatures are checked
    /// after the twin's state is unlocked).
    pub fn signer(&self, access_key_id: &str) -> Option<(Secret, Principal)> {
        let key = self.keys.get(access_key_id).filter(|k| k.active)?;
        let user = self.users.get(&key.user)?;
        Some((
            key.secret.clone(),
            Principal {
                arn: user.arn(),
                user_id: user.id.clone(),
                account: lab::ACCOUNT_ID.to_string(),
            },
        ))
    }

    pub fn add_user(&mut self, name: &str, id: String, now: std::time::Duration) -> &User {
        self.users.entry(name.to_string()).or_insert(User {
            name: name.to_string(),
            id,
            created_at: now,
        })
    }

    pub fn add_key(&mut self, user: &str, id: String, secret: Secret, now: std::time::Duration) {
        self.keys.insert(
            id.clone(),
            AccessKey {
                id,
                secret,
                user: user.to_string(),
                active: true,
                created_at: now,
            },
        );
    }
}
