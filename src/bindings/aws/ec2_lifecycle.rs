//! The create, delete and wait half of `ec2::`: VPCs, subnets, NAT gateways, security groups,
//! and the Elastic IP a NAT gateway needs. Every change journaled before it is sent.

use std::sync::Arc;
use std::time::Duration;

use rhai::{Map, Module, NativeCallContext, Position};

use super::call::{Result, call, json, unit, waiter};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::aws::{AwsClients, SubnetSpec};
use crate::guard::Change;
use crate::script::{Host, documented as doc};

const MINUTE: Duration = Duration::from_secs(60);

pub(super) fn install(ec2: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    install_networks(ec2, clients, host);
    install_nat_gateways(ec2, clients, host);
    install_security_groups(ec2, clients, host);
    install_deletes(ec2, clients, host);
    addresses(ec2, clients, host);
}

/// Registers creating VPCs and subnets.
fn install_networks(ec2: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
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
            let subnet = subnet_spec(&spec, position)?;
            journaled(&h, position, named_create("ec2::create_subnet", "subnet", &subnet.name, &subnet.cidr), None, || call(&h, position, || c.create_subnet(&subnet)))
        });
}

/// A subnet as `ec2::create_subnet` takes it; private unless its role says public.
fn subnet_spec(spec: &Map, position: Position) -> Result<SubnetSpec> {
    let s = Spec::new(
        spec,
        "ec2::create_subnet",
        &["vpc", "cidr", "zone", "name", "role"],
        position,
    )?;
    let public = match s.string("role")?.as_deref() {
        None | Some("private") => false,
        Some("public") => true,
        Some(other) => {
            return Err(s.error(format!("`role` is \"public\" or \"private\", got {other}")));
        }
    };
    Ok(SubnetSpec {
        vpc: s.required("vpc")?,
        cidr: s.required("cidr")?,
        zone: s.required("zone")?,
        name: s.string("name")?.unwrap_or_default(),
        public,
    })
}

/// Registers creating, listing and waiting for NAT gateways.
fn install_nat_gateways(ec2: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
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
}

/// Registers creating and listing security groups.
fn install_security_groups(ec2: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
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
}

/// Registers `delete_vpc`, `delete_subnet`, `delete_nat_gateway` and `delete_security_group`.
fn install_deletes(ec2: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
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
                delete(&h, &c, ctx.call_position(), name, id).map(|()| unit())
            },
        );
    }
}

/// One of the deletes `install_deletes` registers, by its name, journaled on what it deletes.
fn delete(h: &Host, c: &AwsClients, position: Position, name: &str, id: &str) -> Result<()> {
    let kind = match name {
        "delete_vpc" => "vpc",
        "delete_subnet" => "subnet",
        "delete_nat_gateway" => "nat",
        _ => "sg",
    };
    let change = Change::new(format!("ec2::{name} {id}")).on(format!("{kind}/{id}"));
    journaled(h, position, change, None, || match name {
        "delete_vpc" => call(h, position, || c.delete_vpc(id)),
        "delete_subnet" => call(h, position, || c.delete_subnet(id)),
        "delete_nat_gateway" => call(h, position, || c.delete_nat_gateway(id)),
        _ => call(h, position, || c.delete_security_group(id)),
    })
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
