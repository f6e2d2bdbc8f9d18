//! `kms::`: the lab's optional key for encrypting Secrets: made with an alias, read, retired
//! (KMS schedules a deletion, never deletes at once).

use std::sync::Arc;

use rhai::{Module, NativeCallContext};

use super::call::{Result, call, json, unit};
use crate::bindings::shared::journaled::journaled;
use crate::clients::aws::AwsClients;
use crate::guard::Change;
use crate::script::{Host, documented as doc};

pub(super) fn module(clients: &Arc<AwsClients>, host: &Arc<Host>) -> Module {
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
            .map(|()| unit())
        });
    kms
}
