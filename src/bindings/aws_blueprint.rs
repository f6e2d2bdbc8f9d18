//! What the blueprint makes in an account beyond the network and the cluster: the IAM roles the
//! cluster and its nodes assume, with their AWS managed policies (`iam::`), the Elastic IP a
//! NAT gateway needs (`ec2::`) and the KMS key for Secrets (`kms::`). Every change journaled
//! before it is sent.

use std::sync::Arc;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext};

use super::aws::{call, json};
use super::journaled::journaled;
use super::options::Spec;
use crate::clients::aws::AwsClients;
use crate::guard::Change;
use crate::script::{Host, documented as doc};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

pub(super) fn install_roles(iam: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
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
                .map(|()| Dynamic::UNIT)
            },
        );
    }
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
        .map(|()| Dynamic::UNIT)
    });
}

pub(super) fn install_addresses(ec2: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc("allocate_address", &["name: &str", "String"], "Allocates an Elastic IP tagged Name = `name` (for a NAT gateway); returns its allocation id.")
        .set_into_module(ec2, move |ctx: NativeCallContext, name: &str| -> Result<String> {
            let position = ctx.call_position();
            journaled(&h, position, Change::new(format!("ec2::allocate_address {name}")).on(format!("eip/{name}")), None, || {
                call(&h, position, || c.allocate_address(name))
            })
        });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "addresses",
        &["Array"],
        "Elastic IPs: #{ allocation_id, public_ip, name, association_id }.",
    )
    .set_into_module(ec2, move |ctx: NativeCallContext| -> Result {
        Ok(json(&serde_json::json!(call(
            &h,
            ctx.call_position(),
            || c.addresses(None)
        )?)))
    });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "release_address",
        &["allocation_id: &str", "()"],
        "Releases an Elastic IP (InvalidIPAddress.InUse while a NAT gateway still holds it).",
    )
    .set_into_module(ec2, move |ctx: NativeCallContext, id: &str| -> Result {
        let position = ctx.call_position();
        journaled(
            &h,
            position,
            Change::new(format!("ec2::release_address {id}")).on(format!("eip/{id}")),
            None,
            || call(&h, position, || c.release_address(id)),
        )
        .map(|()| Dynamic::UNIT)
    });
}

/// `kms::`: the key that encrypts a cluster's Secrets, by alias.
pub(super) fn kms_module(clients: &Arc<AwsClients>, host: &Arc<Host>) -> Module {
    let mut kms = Module::new();
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "create_key",
        &["alias: &str", "description: &str", "String"],
        "Creates a symmetric KMS key named by `alias` (\"alias/eks/myeks5w\"); returns its ARN.",
    )
    .set_into_module(
        &mut kms,
        move |ctx: NativeCallContext, alias: &str, description: &str| -> Result<String> {
            let position = ctx.call_position();
            journaled(
                &h,
                position,
                Change::new(format!("kms::create_key {alias}")).on(format!("key/{alias}")),
                None,
                || call(&h, position, || c.create_key(alias, description)),
            )
        },
    );
    let (c, h) = (clients.clone(), host.clone());
    doc("key", &["key: &str", "Map"], "A key by id, ARN or alias: #{ key_id, arn, state, deletion_date }; NotFoundException when there is none.")
        .set_into_module(&mut kms, move |ctx: NativeCallContext, key: &str| -> Result {
            Ok(json(&call(&h, ctx.call_position(), || c.key(key))?))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc("retire_key", &["alias: &str", "days: i64", "()"], "Removes the alias and schedules its key's deletion in `days` (7 to 30; KMS deletes no key at once).")
        .set_into_module(&mut kms, move |ctx: NativeCallContext, alias: &str, days: i64| -> Result {
            let position = ctx.call_position();
            let days = i32::try_from(days).unwrap_or(i32::MAX);
            journaled(&h, position, Change::new(format!("kms::retire_key {alias}")).on(format!("key/{alias}")), None, || {
                call(&h, position, || c.retire_key(alias, days))
            })
            .map(|()| Dynamic::UNIT)
        });
    kms
}
