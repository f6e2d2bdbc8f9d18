//! STS over the query protocol: `GetCallerIdentity`, which names the principal of the keys
//! that signed the call (and, replayed from an EKS token, the Kubernetes user's IAM identity).

use super::error::AwsError;
use super::identity::Principal;
use super::wire::Xml;

pub(crate) fn handle(caller: &Principal, action: &str, xml: &mut Xml) -> Result<(), AwsError> {
    match action {
        "GetCallerIdentity" => get_caller_identity(caller, xml),
        other => Err(AwsError::new(
            400,
            "InvalidAction",
            format!(
                "Could not find operation {other} for version 2011-06-15 (the lab twin's STS answers GetCallerIdentity)"
            ),
        )),
    }
}

fn get_caller_identity(caller: &Principal, xml: &mut Xml) -> Result<(), AwsError> {
    xml.leaf("UserId", &caller.user_id)
        .leaf("Account", &caller.account)
        .leaf("Arn", &caller.arn);
    Ok(())
}
