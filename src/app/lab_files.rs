//! The files `lab serve` writes for other tools, without ever destroying a user's file: a
//! kubeconfig that exists gets a `runbook-lab` cluster, user and context merged in (as `kind`
//! and `aws eks update-kubeconfig` do) and taken out again on exit, byte for byte; an env file
//! is written only where none is or where it wrote one before. Both are 0600, as is the
//! lab-state file `state capture` writes through the same private write.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::auth::secret::Secret;
use crate::error::Error;
use crate::sim::LabSecrets;

/// The name of the cluster, user and context merged into a kubeconfig.
pub(crate) const ENTRY: &str = "runbook-lab";

/// The first line of every env file `lab serve` writes; an existing file without it is not ours.
const ENV_MARKER: &str =
    "# written by runbook lab serve: the lab twin's AWS endpoint (removed when it stops)";

/// What to undo when `lab serve` stops.
#[derive(Debug)]
pub(crate) enum Written {
    /// A file that was not there: removed, unless someone changed it since.
    Created { path: PathBuf, text: String },
    /// Entries merged into a user's kubeconfig: the original comes back.
    Merged {
        path: PathBuf,
        original: String,
        merged: String,
    },
}

impl Written {
    /// Undoes the write. A file changed since is edited, not replaced: only our entries go.
    pub(crate) fn undo(&self) -> Result<(), Error> {
        match self {
            Written::Created { path, text } => {
                if crate::sandbox::read_text_file(path, crate::sandbox::TEXT_FILE_LIMIT)
                    .is_ok_and(|now| &now == text)
                {
                    let _ = std::fs::remove_file(path);
                }
                Ok(())
            }
            Written::Merged {
                path,
                original,
                merged,
            } => {
                let now = crate::sandbox::read_text_file(path, crate::sandbox::TEXT_FILE_LIMIT)
                    .unwrap_or_default();
                if &now == merged {
                    return write_private(path, original, "the kubeconfig");
                }
                let mut config = parse(path, &now)?;
                let previous = parse(path, original)?["current-context"].clone();
                remove_entries(&mut config);
                if config["current-context"] == ENTRY {
                    config["current-context"] = previous;
                }
                write_private(path, &to_yaml(&config), "the kubeconfig")
            }
        }
    }
}

/// A kubeconfig for the twin at `server` whose user holds the lab's admin token: a new file,
/// or merged into the one at `path`.
pub(crate) fn write_kubeconfig(
    path: &Path,
    server: &str,
    ca_pem: &str,
    token: &Secret,
) -> Result<Written, Error> {
    use base64::Engine;
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let ours = json!({
        "clusters": [{"name": ENTRY, "cluster": {"server": server, "certificate-authority-data": ca}}],
        "contexts": [{"name": ENTRY, "context": {"cluster": ENTRY, "user": ENTRY}}],
        "users": [{"name": ENTRY, "user": {"token": token.expose()}}],
    });
    refuse_foreign(path, "--write-kubeconfig", HOLDS_TOKEN)?;
    let original = match crate::sandbox::read_text_file(path, crate::sandbox::TEXT_FILE_LIMIT) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut config = json!({"apiVersion": "v1", "kind": "Config", "preferences": {}});
            merge(&mut config, &ours);
            let text = to_yaml(&config);
            write_private(path, &text, "the kubeconfig")?;
            return Ok(Written::Created {
                path: path.to_path_buf(),
                text,
            });
        }
        Err(source) => {
            return Err(Error::Read {
                path: path.to_path_buf(),
                what: "the kubeconfig to merge the lab into".into(),
                source,
            });
        }
    };
    let mut config = parse(path, &original)?;
    merge(&mut config, &ours);
    let merged = to_yaml(&config);
    write_private(path, &merged, "the kubeconfig")?;
    Ok(Written::Merged {
        path: path.to_path_buf(),
        original,
        merged,
    })
}

/// What the env file says: where the lab's AWS and Kubernetes APIs are and its secrets.
pub(crate) struct LabEnv<'a> {
    pub(crate) aws_endpoint: &'a str,
    pub(crate) kube_server: &'a str,
    pub(crate) secrets: &'a LabSecrets,
    /// The lab's CA file (AWS_CA_BUNDLE): its AWS endpoint is HTTPS with the lab's own CA.
    pub(crate) ca_bundle: &'a Path,
}

/// Where the lab's CA goes beside an env file: `aws.env` -> `aws.env.ca.pem`, absolute, so
/// that the env file works sourced from any directory.
pub(crate) fn ca_path_beside(env: &Path) -> PathBuf {
    let mut name = env.file_name().unwrap_or_default().to_os_string();
    name.push(".ca.pem");
    let path = env.with_file_name(name);
    if path.is_absolute() {
        path
    } else {
        std::env::current_dir().map_or(path.clone(), |dir| dir.join(path))
    }
}

/// The lab's CA certificate, for the aws CLI and runbook (AWS_CA_BUNDLE). A file that is not a
/// certificate, or that others could swap for a CA of theirs, is refused.
pub(crate) fn write_ca(path: &Path, ca_pem: &str) -> Result<Written, Error> {
    refuse_foreign(
        path,
        "--write-env (its CA file)",
        "a CA put in it would be trusted for the lab's AWS calls",
    )?;
    if path.exists()
        && !crate::sandbox::read_text_file(path, crate::sandbox::TEXT_FILE_LIMIT)
            .is_ok_and(|text| text.starts_with("-----BEGIN CERTIFICATE-----"))
    {
        return Err(Error::Usage(format!(
            "--write-env: the lab's CA goes to {}, which exists and is not a certificate runbook lab serve wrote; remove it or name another env file",
            path.display()
        )));
    }
    write_private(path, ca_pem, "the lab's CA file")?;
    Ok(Written::Created {
        path: path.to_path_buf(),
        text: ca_pem.to_string(),
    })
}

/// The env file for the aws CLI and `runbook --cluster`; refuses a file that `lab serve` did
/// not write.
pub(crate) fn write_env(path: &Path, lab: &LabEnv<'_>) -> Result<Written, Error> {
    refuse_foreign(path, "--write-env", HOLDS_TOKEN)?;
    if let Ok(existing) = crate::sandbox::read_text_file(path, crate::sandbox::TEXT_FILE_LIMIT)
        && !existing.starts_with(ENV_MARKER)
    {
        return Err(Error::Usage(format!(
            "--write-env {}: the file exists and runbook lab serve did not write it; remove it or name another path",
            path.display()
        )));
    } else if path.exists()
        && crate::sandbox::read_text_file(path, crate::sandbox::TEXT_FILE_LIMIT).is_err()
    {
        return Err(Error::Usage(format!(
            "--write-env {}: exists and is not a text file runbook lab serve wrote; name another path",
            path.display()
        )));
    }
    let text = format!(
        "{ENV_MARKER}\nAWS_ENDPOINT_URL={endpoint}\nAWS_REGION={region}\nAWS_DEFAULT_REGION={region}\nAWS_ACCESS_KEY_ID={key}\nAWS_SECRET_ACCESS_KEY={secret}\nAWS_CA_BUNDLE={ca}\nAWS_EC2_METADATA_DISABLED=true\nNO_PROXY=127.0.0.1,localhost\nRUNBOOK_KUBE_SERVER={kube}\nRUNBOOK_LAB_TOKEN={token}\n",
        endpoint = lab.aws_endpoint,
        region = crate::lab::REGION,
        key = lab.secrets.access_key_id,
        secret = lab.secrets.secret_access_key.expose(),
        kube = lab.kube_server,
        token = lab.secrets.admin_token.expose(),
        ca = lab.ca_bundle.display(),
    );
    write_private(path, &text, "the env file")?;
    Ok(Written::Created {
        path: path.to_path_buf(),
        text,
    })
}

/// The user this process runs as: the owner of its own `/proc` entry.
fn own_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

const HOLDS_TOKEN: &str = "it would hold the lab's admin token";

/// Refuses an existing file (or a symlink, or what it points to) that another user owns or
/// that others may write: the lab's admin token written into it would be theirs to read, a CA
/// they put in it trusted.
fn refuse_foreign(path: &Path, flag: &str, holds: &str) -> Result<(), Error> {
    use std::os::unix::fs::MetadataExt;
    let me = own_uid();
    let link = std::fs::symlink_metadata(path).ok();
    let target = std::fs::metadata(path).ok();
    for (metadata, what) in [(link, "the file"), (target, "the file it links to")] {
        let Some(metadata) = metadata else { continue };
        if metadata.file_type().is_symlink() {
            continue;
        }
        let refusal = if me.is_some_and(|me| metadata.uid() != me) {
            Some(format!(
                "{what} belongs to another user (uid {})",
                metadata.uid()
            ))
        } else if metadata.mode() & 0o022 != 0 {
            Some(format!(
                "{what} may be written by others (mode {:o})",
                metadata.mode() & 0o777
            ))
        } else {
            None
        };
        if let Some(refusal) = refusal {
            return Err(Error::Usage(format!(
                "{flag} {}: {refusal}, and {holds}; name a file of your own (e.g. under $HOME), or remove this one",
                path.display()
            )));
        }
    }
    Ok(())
}

fn parse(path: &Path, text: &str) -> Result<Value, Error> {
    let value: Value = if text.trim().is_empty() {
        json!({})
    } else {
        serde_saphyr::from_str(text).map_err(|e| {
            Error::Usage(format!(
                "--write-kubeconfig {}: the file is not a kubeconfig runbook can merge into ({e}); name another path",
                path.display()
            ))
        })?
    };
    if !value.is_object() {
        return Err(Error::Usage(format!(
            "--write-kubeconfig {}: the file is not a kubeconfig (not a YAML map); name another path",
            path.display()
        )));
    }
    Ok(value)
}

/// Our entries replace any of the same name; the context becomes the current one.
fn merge(config: &mut Value, ours: &Value) {
    remove_entries(config);
    for list in ["clusters", "contexts", "users"] {
        if !config[list].is_array() {
            config[list] = json!([]);
        }
        if let (Some(items), Some(add)) = (config[list].as_array_mut(), ours[list].as_array()) {
            items.extend(add.iter().cloned());
        }
    }
    config["current-context"] = json!(ENTRY);
}

fn remove_entries(config: &mut Value) {
    for list in ["clusters", "contexts", "users"] {
        if let Some(items) = config[list].as_array_mut() {
            items.retain(|item| item["name"] != ENTRY);
        }
    }
}

fn to_yaml(value: &Value) -> String {
    serde_saphyr::to_string(value).unwrap_or_default()
}

/// Writes with mode 0600 (a kubeconfig or env file may hold credentials), keeping the mode of
/// a file that exists narrowed to that too.
pub(crate) fn write_private(path: &Path, text: &str, what: &'static str) -> Result<(), Error> {
    crate::sandbox::write_private(path, text.as_bytes()).map_err(|source| Error::Write {
        path: path.to_path_buf(),
        what,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(aws_endpoint: &'static str) -> LabEnv<'static> {
        LabEnv {
            aws_endpoint,
            kube_server: "http://127.0.0.1:9",
            secrets: Box::leak(Box::new(LabSecrets::generate())),
            ca_bundle: Path::new("/tmp/aws.env.ca.pem"),
        }
    }

    const USERS: &str = "apiVersion: v1\nkind: Config\n# the user's own comment\nclusters:\n- cluster:\n    server: https://ABC.gr7.ap-northeast-2.eks.amazonaws.com\n  name: prod\ncontexts:\n- context:\n    cluster: prod\n    user: prod\n  name: prod\ncurrent-context: prod\nusers:\n- name: prod\n  user:\n    token: abc\n";

    #[test]
    fn a_users_kubeconfig_gets_our_entries_and_gets_them_back_out_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, USERS).unwrap();
        let written =
            write_kubeconfig(&path, "https://127.0.0.1:1234", "ca", &Secret::new("t")).unwrap();
        let merged: Value =
            serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(merged["current-context"], ENTRY);
        assert_eq!(merged["contexts"].as_array().unwrap().len(), 2);
        assert_eq!(
            merged["users"][0]["user"]["token"], "abc",
            "the user's entries stay"
        );
        written.undo().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), USERS);
    }

    #[test]
    fn a_kubeconfig_changed_meanwhile_loses_only_our_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, USERS).unwrap();
        let written =
            write_kubeconfig(&path, "https://127.0.0.1:1234", "ca", &Secret::new("t")).unwrap();
        let changed = std::fs::read_to_string(&path).unwrap() + "preferences: {}\n";
        std::fs::write(&path, changed).unwrap();
        written.undo().unwrap();
        let after: Value =
            serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(after["current-context"], "prod");
        assert_eq!(after["contexts"].as_array().unwrap().len(), 1);
        assert_eq!(after["users"][0]["name"], "prod");
    }

    #[test]
    fn a_new_kubeconfig_is_private_and_goes_when_the_lab_stops() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        let written =
            write_kubeconfig(&path, "https://127.0.0.1:1234", "ca", &Secret::new("t")).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        written.undo().unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn the_ca_goes_beside_the_env_file_and_never_over_a_file_that_is_not_a_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let ca = ca_path_beside(&dir.path().join("lab.env"));
        assert_eq!(ca, dir.path().join("lab.env.ca.pem"));
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let written = write_ca(&ca, pem).unwrap();
        assert_eq!(std::fs::read_to_string(&ca).unwrap(), pem);
        write_ca(&ca, pem).expect("a CA a lab left behind is ours to replace");
        written.undo().unwrap();
        assert!(!ca.exists());
        std::fs::write(&ca, "my notes\n").unwrap();
        let error = write_ca(&ca, pem).unwrap_err().to_string();
        assert!(
            error.contains("lab.env.ca.pem") && error.contains("not a certificate"),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(&ca).unwrap(), "my notes\n");
    }

    #[test]
    fn an_env_file_we_did_not_write_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(&path, "DATABASE_URL=postgres://...\n").unwrap();
        let error = write_env(&path, &env("http://127.0.0.1:1"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("did not write it"), "{error}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "DATABASE_URL=postgres://...\n"
        );
        let ours = dir.path().join("aws.env");
        write_env(&ours, &env("http://127.0.0.1:1")).unwrap();
        write_env(&ours, &env("http://127.0.0.1:2")).expect("ours may be rewritten");
    }

    #[test]
    fn a_file_that_is_not_a_kubeconfig_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, "- just\n- a list\n").unwrap();
        assert!(write_kubeconfig(&path, "https://127.0.0.1:1", "ca", &Secret::new("t")).is_err());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "- just\n- a list\n"
        );
    }
}
