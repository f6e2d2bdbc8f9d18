//! `iam::`: OIDC providers (read, created, removed) and the roles the cluster and its nodes
//! assume, with their managed policies. Every change journaled before it is sent.

use std::sync::Arc;

use rhai::{Map, Module, NativeCallContext};

use super::call::{Result, call, read_only, unit};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::aws::AwsClients;
use crate::guard::Change;
use crate::script::{Host, documented as doc};

pub(super) fn module(c: &Arc<AwsClients>, h: &Arc<Host>) -> Module {
    let mut iam = Module::new();
    read_only!(
        &mut iam,
        c,
        h,
        "oidc_providers",
        [],
        "Array",
        "IAM OIDC providers: #{ arn, url, client_ids, thumbprints }.",
        |clients| clients.oidc_providers()
    );
    read_only!(
        &mut iam,
        c,
        h,
        "oidc_provider_for",
        [issuer],
        "Map",
        "The IAM OIDC provider of a cluster's issuer URL; NoSuchEntity when there is none.",
        |clients| clients.oidc_provider_for(issuer)
    );
    oidc_lifecycle(&mut iam, c, h);
    super::iam_roles::install(&mut iam, c, h);
    iam
}

fn oidc_lifecycle(iam: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc("create_oidc_provider", &["spec: Map", "String"], "Registers an OIDC issuer: #{ url, client_ids: [\"sts.amazonaws.com\"], thumbprints: [...] }; returns the ARN.")
        .set_into_module(iam, move |ctx: NativeCallContext, spec: Map| -> Result<String> {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "iam::create_oidc_provider", &["url", "client_ids", "thumbprints"], position)?;
            let (url, ids, thumbprints) = (s.required("url")?, s.strings("client_ids")?, s.strings("thumbprints")?);
            journaled(&h, position, Change::new(format!("iam::create_oidc_provider {url}")).on(format!("oidc-provider/{url}")), None, || call(&h, position, || c.create_oidc_provider(&url, &ids, &thumbprints)))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "delete_oidc_provider",
        &["arn: &str", "()"],
        "Removes an IAM OIDC provider.",
    )
    .set_into_module(iam, move |ctx: NativeCallContext, arn: &str| -> Result {
        journaled(
            &h,
            ctx.call_position(),
            Change::new(format!("iam::delete_oidc_provider {arn}"))
                .on(format!("oidc-provider/{arn}")),
            None,
            || call(&h, ctx.call_position(), || c.delete_oidc_provider(arn)),
        )
        .map(|()| unit())
    });
}
