//! Who the twin's AWS side knows: IAM users and their access keys, the lab's own among them.
//! Every call is signed by one of these keys (checked in `signature`); STS says whose it is.

use std::collections::BTreeMap;

use crate::auth::secret::Secret;
use crate::lab;

/// The IAM user the lab's own keys belong to: it created the cluster, so it is its admin.
pub(crate) const LAB_USER: &str = "lab";

#[derive(Debug, Clone)]
pub(crate) struct User {
    pub(crate) name: String,
    /// `AIDA...`, as GetCallerIdentity's `UserId`.
    pub(crate) id: String,
    #[expect(
        dead_code,
        reason = "IAM's ListUsers answers carry it; the twin serves no such list yet"
    )]
    pub(crate) created_at: std::time::Duration,
}

impl User {
    pub(crate) fn arn(&self) -> String {
        user_arn(&self.name)
    }
}

pub(crate) fn user_arn(name: &str) -> String {
    format!("arn:aws:iam::{}:user/{name}", lab::ACCOUNT_ID)
}

#[derive(Debug, Clone)]
pub(crate) struct AccessKey {
    #[expect(
        dead_code,
        reason = "IAM's ListAccessKeys answers carry it; the twin serves no such list yet"
    )]
    pub(crate) id: String,
    pub(crate) secret: Secret,
    pub(crate) user: String,
    pub(crate) active: bool,
    #[expect(
        dead_code,
        reason = "IAM's ListAccessKeys answers carry it; the twin serves no such list yet"
    )]
    pub(crate) created_at: std::time::Duration,
}

/// The principal a key signs for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Principal {
    pub(crate) arn: String,
    pub(crate) user_id: String,
    pub(crate) account: String,
}

#[derive(Debug, Default)]
pub(crate) struct Identities {
    pub(crate) users: BTreeMap<String, User>,
    /// By access key id.
    pub(crate) keys: BTreeMap<String, AccessKey>,
}

impl Identities {
    /// The principal of an active key, and the key's secret (owned: signatures are checked
    /// after the twin's state is unlocked).
    pub(crate) fn signer(&self, access_key_id: &str) -> Option<(Secret, Principal)> {
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

    pub(crate) fn add_user(&mut self, name: &str, id: String, now: std::time::Duration) -> &User {
        self.users.entry(name.to_string()).or_insert(User {
            name: name.to_string(),
            id,
            created_at: now,
        })
    }

    pub(crate) fn add_key(
        &mut self,
        user: &str,
        id: String,
        secret: Secret,
        now: std::time::Duration,
    ) {
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
