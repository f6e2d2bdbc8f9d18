//! `iam::`'s roles: created for an AWS service to assume, read, their AWS managed policies
//! attached and detached, removed. Every change journaled before it is sent.

use std::sync::Arc;

use rhai::{Map, Module, NativeCallContext};

use super::call::{Result, call, json, unit};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::aws::AwsClients;
use crate::guard::Change;
use crate::script::{Host, documented as doc};

pub(super) fn install(iam: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    install_create(iam, clients, host);
    install_reads(iam, clients, host);
    install_policy_attachments(iam, clients, host);
    install_delete(iam, clients, host);
}

fn install_create(iam: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc("create_role", &["spec: Map", "String"], "Creates a role an AWS service may assume: #{ name, service: \"eks.amazonaws.com\", description };\nreturns its ARN.")
        .set_into_module(iam, move |ctx: NativeCallContext, spec: Map| -> Result<String> {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "iam::create_role", &["name", "service", "description"], position)?;
            let (name, service) = (s.required("name")?, s.required("service")?);
            let description = s.string("description")?.unwrap_or_default();
            journaled(&h, position, Change::new(format!("iam::create_role {name}")).on(format!("role/{name}")), None, || {
                call(&h, position, || c.create_role(&name, &service, &description))
            })
        });
}

/// Registers reading a role, its inline policies and its attached ones.
fn install_reads(iam: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc("role", &["name: &str", "Map"], "A role: #{ name, arn, role_id, trust_policy, description }; NoSuchEntity when there is none.")
        .set_into_module(iam, move |ctx: NativeCallContext, name: &str| -> Result {
            Ok(json(&call(&h, ctx.call_position(), || c.role(name))?))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "role_policies",
        &["name: &str", "Array"],
        "A role's inline policies: [#{ name, document }], the document parsed (Statement, ...).",
    )
    .set_into_module(iam, move |ctx: NativeCallContext, name: &str| -> Result {
        Ok(json(&serde_json::json!(call(
            &h,
            ctx.call_position(),
            || c.role_policies(name)
        )?)))
    });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "attached_role_policies",
        &["name: &str", "Array"],
        "The ARNs of the managed policies attached to a role.",
    )
    .set_into_module(iam, move |ctx: NativeCallContext, name: &str| -> Result {
        Ok(json(&serde_json::json!(call(
            &h,
            ctx.call_position(),
            || c.attached_role_policies(name)
        )?)))
    });
}

/// Registers `attach_role_policy` and `detach_role_policy`.
fn install_policy_attachments(iam: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    for (name, what) in [
        (
            "attach_role_policy",
            "Attaches a managed policy (its ARN) to a role.",
        ),
        (
            "detach_role_policy",
            "Detaches a managed policy from a role.",
        ),
    ] {
        let (c, h) = (clients.clone(), host.clone());
        doc(name, &["role: &str", "policy_arn: &str", "()"], what).set_into_module(
            iam,
            move |ctx: NativeCallContext, role: &str, policy: &str| -> Result {
                let position = ctx.call_position();
                journaled(
                    &h,
                    position,
                    Change::new(format!("iam::{name} {role} {policy}")).on(format!("role/{role}")),
                    None,
                    || {
                        call(&h, position, || async {
                            if name == "attach_role_policy" {
                                c.attach_role_policy(role, policy).await
                            } else {
                                c.detach_role_policy(role, policy).await
                            }
                        })
                    },
                )
                .map(|()| unit())
            },
        );
    }
}

fn install_delete(iam: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "delete_role",
        &["name: &str", "()"],
        "Deletes a role (its policies detached first: IAM refuses otherwise).",
    )
    .set_into_module(iam, move |ctx: NativeCallContext, name: &str| -> Result {
        let position = ctx.call_position();
        journaled(
            &h,
            position,
            Change::new(format!("iam::delete_role {name}")).on(format!("role/{name}")),
            None,
            || call(&h, position, || c.delete_role(name)),
        )
        .map(|()| unit())
    });
}
