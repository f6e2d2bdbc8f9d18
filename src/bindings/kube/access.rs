//! `k8s::whoami` and `k8s::can_i`: the run's own Kubernetes identity and what it may do, as
//! the API server answers (a drill can check its RBAC before it needs it).

use std::sync::Arc;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext};

use crate::bindings::shared::args::kube_error;
use crate::bindings::shared::options::Spec;
use crate::clients::kube::{AccessQuestion, KubeClient};
use crate::script::{Host, documented as doc, from_json};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

pub(super) fn install_access(m: &mut Module, client: &Arc<KubeClient>, host: &Arc<Host>) {
    let (kube, h) = (client.clone(), host.clone());
    doc("whoami", &["Map"], "Who the API server takes this run for: #{ username, groups, extra } (extra.arn is the IAM\nprincipal behind an EKS token).")
        .set_into_module(m, move |ctx: NativeCallContext| -> Result {
            let position = ctx.call_position();
            let user = h.block_on(position, kube.whoami())?.map_err(|e| kube_error(e, position))?;
            Ok(from_json(&user))
        });
    let (kube, h) = (client.clone(), host.clone());
    let ask =
        move |ctx: &NativeCallContext, verb: &str, resource: &str, options: &Map| -> Result<bool> {
            let position = ctx.call_position();
            let s = Spec::new(
                options,
                "k8s::can_i",
                &["namespace", "name", "as_user"],
                position,
            )?;
            let question = AccessQuestion {
                verb: verb.to_string(),
                resource: resource.to_string(),
                namespace: s.string("namespace")?,
                name: s.string("name")?,
                as_user: s.string("as_user")?,
            };
            h.block_on(position, kube.can_i(&question))?
                .map_err(|e| kube_error(e, position))
        };
    let ask2 = ask.clone();
    doc("can_i", &["verb: &str", "resource: &str", "bool"], "Whether this run may `verb` the `resource` (\"pods\", \"pods/exec\", \"deployments.apps\"),\nas `kubectl auth can-i` asks the API server (cluster-wide).")
        .set_into_module(m, move |ctx: NativeCallContext, verb: &str, resource: &str| -> Result<bool> {
            ask2(&ctx, verb, resource, &Map::new())
        });
    doc(
        "can_i",
        &["verb: &str", "resource: &str", "options: Map", "bool"],
        "The same in `namespace`, for the object `name`, or `as_user` another\n(\"system:serviceaccount:NS:NAME\" for a ServiceAccount; this run must be allowed to\nimpersonate it, as with `kubectl auth can-i --as`).",
    )
    .set_into_module(
        m,
        move |ctx: NativeCallContext, verb: &str, resource: &str, options: Map| -> Result<bool> {
            ask(&ctx, verb, resource, &options)
        },
    );
}
