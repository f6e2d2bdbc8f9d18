//! Why a kubeconfig could not be used, in one line that names the file and what to do: it does
//! not exist, is not YAML, has no current context or not the one asked for, or its credential
//! plugin cannot run.

use std::path::Path;

use kube::config::{Kubeconfig, KubeconfigError};

const WRITE_ONE: &str = "`aws eks update-kubeconfig --name CLUSTER --kubeconfig PATH` writes one for an EKS cluster, `runbook lab serve --write-kubeconfig PATH` one for the lab twin";

/// Reading the file failed.
pub(super) fn unreadable(path: &Path, error: &KubeconfigError) -> String {
    let file = path.display();
    match error {
        KubeconfigError::ReadConfig(io, _) if io.kind() == std::io::ErrorKind::NotFound => {
            format!(
                "the kubeconfig {file} does not exist: {WRITE_ONE}, or leave out --kubeconfig to run on the embedded lab twin"
            )
        }
        KubeconfigError::ReadConfig(io, _) => format!("cannot read the kubeconfig {file}: {io}"),
        KubeconfigError::Parse(e) => format!("the kubeconfig {file} is not valid YAML: {e}"),
        other => format!("the kubeconfig {file}: {other}"),
    }
}

/// Making a client from a file that was read failed.
pub(super) fn unusable(
    path: &Path,
    kubeconfig: &Kubeconfig,
    context: Option<&str>,
    error: &KubeconfigError,
) -> String {
    let file = path.display();
    let names: Vec<&str> = kubeconfig
        .contexts
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let known = if names.is_empty() {
        "it defines no context at all".to_string()
    } else {
        format!("it has {}", names.join(", "))
    };
    match error {
        KubeconfigError::CurrentContextNotSet if names.is_empty() => {
            format!("the kubeconfig {file} defines no cluster context (is it empty?): {WRITE_ONE}")
        }
        KubeconfigError::CurrentContextNotSet => {
            format!("the kubeconfig {file} has no current-context: pass --context NAME ({known})")
        }
        KubeconfigError::LoadContext(name) => match context {
            Some(asked) => format!("the kubeconfig {file} has no context `{asked}`: {known}"),
            None => format!(
                "the kubeconfig {file}'s current-context `{name}` is not one of its contexts ({known}): pass --context NAME"
            ),
        },
        KubeconfigError::LoadClusterOfContext(name) => {
            format!("the kubeconfig {file}: context's cluster `{name}` is not defined in it")
        }
        other => plugin_failure(path, kubeconfig, context, &other.to_string())
            .unwrap_or_else(|| format!("the kubeconfig {file}: {other}")),
    }
}

/// A failure while loading that came from the user's credential plugin (`exec:`), named with
/// its command; None when the error is another.
pub(super) fn plugin_failure(
    path: &Path,
    kubeconfig: &Kubeconfig,
    context: Option<&str>,
    text: &str,
) -> Option<String> {
    if !text.contains("exec") {
        return None;
    }
    let context_name = context
        .map(str::to_string)
        .or_else(|| kubeconfig.current_context.clone())?;
    let user = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context_name)?
        .context
        .as_ref()?
        .user
        .clone()?;
    let exec = kubeconfig
        .auth_infos
        .iter()
        .find(|a| a.name == user)?
        .auth_info
        .as_ref()?
        .exec
        .as_ref()?;
    let command = exec.command.clone().unwrap_or_default();
    // Only the command: a plugin's arguments may carry a token or a secret.
    let file = path.display();
    Some(if text.contains("No such file or directory") {
        format!(
            "the kubeconfig {file} runs `{command}` for credentials (user {user}), and no `{command}` is on PATH: install it (the aws CLI for `aws eks get-token`) or fix the user's exec command"
        )
    } else {
        format!(
            "the credential plugin of the kubeconfig {file} (user {user}: `{command} ...`) failed{}: run it by hand to see why; an SSO session may need `aws sso login`",
            plugin_status(text)
        )
    })
}

/// ` with exit status N (its own message is above)` from kube's text, which also quotes the
/// whole command line (arguments and all) and a Debug dump of its output: neither is shown.
fn plugin_status(text: &str) -> String {
    let code: String = text
        .rsplit_once("exit status: ")
        .map(|(_, rest)| rest.chars().take_while(char::is_ascii_digit).collect())
        .unwrap_or_default();
    if code.is_empty() {
        " (its own message, if any, is above)".to_string()
    } else {
        format!(" with exit status {code} (its own message, if any, is above)")
    }
}
