//! The create, delete and wait half of `ec2::`: VPCs, subnets, NAT gateways, security groups,
//! and the Elastic IP a NAT gateway needs. Every change journaled before it is sent.

use std::sync::Arc;
use std::time::Duration;

use rhai::{Map, Module, NativeCallContext};

use super::call::{Result, call, json, unit, waiter};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::aws::{AwsClients, SubnetSpec};
use crate::guard::Change;
use crate::script::{Host, documented as doc};

const MINUTE: Duration = Duration::from_secs(60);

pub(super) fn install(ec2: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "create_vpc",
        &["spec: Map", "String"],
        "Creates a VPC: #{ cidr, name }; returns its id.",
    )
    .set_into_module(
        ec2,
        move |ctx: NativeCallContext, spec: Map| -> Result<String> {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "ec2::create_vpc", &["cidr", "name"], position)?;
            let (cidr, name) = (s.required("cidr")?, s.string("name")?.unwrap_or_default());
            journaled(
                &h,
                position,
                named_create("ec2::create_vpc", "vpc", &name, &cidr),
                None,
                || call(&h, position, || c.create_vpc(&cidr, &name)),
            )
        },
    );
    let (c, h) = (clients.clone(), host.clone());
    doc("create_subnet", &["spec: Map", "String"], "Creates a subnet: #{ vpc, cidr, zone, name, role: \"public\" | \"private\" }; returns its id. Public ones get the\nkubernetes.io/role/elb tag, private ones kubernetes.io/role/internal-elb.")
        .set_into_module(ec2, move |ctx: NativeCallContext, spec: Map| -> Result<String> {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "ec2::create_subnet", &["vpc", "cidr", "zone", "name", "role"], position)?;
            let public = match s.string("role")?.as_deref() {
                None | Some("private") => false,
                Some("public") => true,
                Some(other) => return Err(s.error(format!("`role` is \"public\" or \"private\", got {other}"))),
            };
            let subnet = SubnetSpec {
                vpc: s.required("vpc")?,
                cidr: s.required("cidr")?,
                zone: s.required("zone")?,
                name: s.string("name")?.unwrap_or_default(),
                public,
            };
            journaled(&h, position, named_create("ec2::create_subnet", "subnet", &subnet.name, &subnet.cidr), None, || call(&h, position, || c.create_subnet(&subnet)))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc("create_nat_gateway", &["spec: Map", "String"], "Creates a public NAT gateway: #{ subnet, name, allocation_id } (real AWS needs the Elastic IP's\nallocation_id); returns its id. ec2::wait_nat_gateway_available waits for it.")
        .set_into_module(ec2, move |ctx: NativeCallContext, spec: Map| -> Result<String> {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "ec2::create_nat_gateway", &["subnet", "name", "allocation_id"], position)?;
            let (subnet, name, allocation) = (s.required("subnet")?, s.string("name")?.unwrap_or_default(), s.string("allocation_id")?);
            journaled(&h, position, Change::new(format!("ec2::create_nat_gateway {name} in {subnet}")).on(format!("nat/{name}")), None, || call(&h, position, || c.create_nat_gateway(&subnet, &name, allocation.as_deref())))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "nat_gateways",
        &["Array"],
        "NAT gateways: #{ nat_gateway_id, state, subnet_id, vpc_id, name }.",
    )
    .set_into_module(ec2, move |ctx: NativeCallContext| -> Result {
        Ok(json(&serde_json::json!(call(
            &h,
            ctx.call_position(),
            || c.nat_gateways()
        )?)))
    });
    waiter!(
        ec2,
        clients,
        host,
        "wait_nat_gateway_available",
        15 * MINUTE,
        "the NAT gateway is available",
        (id) => id,
        wait_nat_gateway_available
    );
    let (c, h) = (clients.clone(), host.clone());
    doc("create_security_group", &["spec: Map", "String"], "Creates a security group: #{ name, description, vpc }; returns its id. It starts with AWS's\nallow-all egress rule.")
        .set_into_module(ec2, move |ctx: NativeCallContext, spec: Map| -> Result<String> {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "ec2::create_security_group", &["name", "description", "vpc"], position)?;
            let (name, description, vpc) = (s.required("name")?, s.required("description")?, s.required("vpc")?);
            journaled(&h, position, Change::new(format!("ec2::create_security_group {name}")).on(format!("sg/{name}")), None, || call(&h, position, || c.create_security_group(&name, &description, &vpc)))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "security_groups",
        &["Array"],
        "Every security group: #{ group_id, group_name, description, vpc_id }.",
    )
    .set_into_module(ec2, move |ctx: NativeCallContext| -> Result {
        Ok(json(&serde_json::json!(call(
            &h,
            ctx.call_position(),
            || c.security_groups()
        )?)))
    });
    for (name, what) in [
        (
            "delete_vpc",
            "a VPC (its subnets and groups must be gone: DependencyViolation otherwise)",
        ),
        (
            "delete_subnet",
            "a subnet (no instance or NAT gateway may use it)",
        ),
        ("delete_nat_gateway", "a NAT gateway"),
        (
            "delete_security_group",
            "a security group (nothing may use or reference it)",
        ),
    ] {
        let (c, h) = (clients.clone(), host.clone());
        doc(name, &["id: &str", "()"], &format!("Deletes {what}.")).set_into_module(
            ec2,
            move |ctx: NativeCallContext, id: &str| -> Result {
                let position = ctx.call_position();
                let outcome = match name {
                    "delete_vpc" => journaled(
                        &h,
                        position,
                        Change::new(format!("ec2::delete_vpc {id}")).on(format!("vpc/{id}")),
                        None,
                        || call(&h, position, || c.delete_vpc(id)),
                    ),
                    "delete_subnet" => journaled(
                        &h,
                        position,
                        Change::new(format!("ec2::delete_subnet {id}")).on(format!("subnet/{id}")),
                        None,
                        || call(&h, position, || c.delete_subnet(id)),
                    ),
                    "delete_nat_gateway" => journaled(
                        &h,
                        position,
                        Change::new(format!("ec2::delete_nat_gateway {id}"))
                            .on(format!("nat/{id}")),
                        None,
                        || call(&h, position, || c.delete_nat_gateway(id)),
                    ),
                    _ => journaled(
                        &h,
                        position,
                        Change::new(format!("ec2::delete_security_group {id}"))
                            .on(format!("sg/{id}")),
                        None,
                        || call(&h, position, || c.delete_security_group(id)),
                    ),
                };
                outcome.map(|()| unit())
            },
        );
    }
    addresses(ec2, clients, host);
}

fn addresses(ec2: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
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
        .map(|()| unit())
    });
}

/// A VPC or subnet about to be made: named by its Name tag, or by its CIDR when it has none.
fn named_create(action: &str, kind: &str, name: &str, cidr: &str) -> Change {
    let id = if name.is_empty() { cidr } else { name };
    Change::new(format!("{action} {}", format!("{name} {cidr}").trim())).on(format!("{kind}/{id}"))
}
