//! Elastic IPs over EC2's query protocol: AllocateAddress, DescribeAddresses and
//! ReleaseAddress, with AWS's refusal to release an address a NAT gateway still holds (it lets
//! go once the NAT gateway is deleted).

use super::ec2_query::{Params, Wanted, name_tag, name_xml, required};
use super::error::AwsError;
use super::state::{Address, AwsState};
use super::wire::Xml;
use crate::lab;

fn missing(id: &str) -> AwsError {
    AwsError::new(
        400,
        "InvalidAllocationID.NotFound",
        format!("The allocation ID '{id}' does not exist"),
    )
}

/// An address a new NAT gateway may take: it exists and nothing holds it.
pub(super) fn check_free(state: &AwsState, allocation_id: &str) -> Result<(), AwsError> {
    let address = state
        .addresses
        .get(allocation_id)
        .ok_or_else(|| missing(allocation_id))?;
    match &address.nat_gateway {
        Some(nat) => Err(AwsError::new(
            400,
            "Resource.AlreadyAssociated",
            format!("Elastic IP address [{allocation_id}] is already associated with {nat}"),
        )),
        None => Ok(()),
    }
}

fn address_xml(xml: &mut Xml, address: &Address) {
    xml.leaf("allocationId", &address.allocation_id)
        .leaf("publicIp", &address.public_ip)
        .leaf("domain", "vpc")
        .leaf("publicIpv4Pool", "amazon")
        .leaf("networkBorderGroup", lab::REGION);
    if let Some(nat) = &address.nat_gateway {
        // AWS shows the NAT gateway's network interface; the twin names the gateway.
        xml.leaf("associationId", format!("eipassoc-{}", &nat[4..]))
            .leaf("networkInterfaceOwnerId", "amazon-elb");
    }
    name_xml(xml, &address.name);
}

pub(super) fn allocate_address(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let id = state.next_id("eipalloc");
    let n = state.addresses.len() + 1;
    let address = Address {
        allocation_id: id.clone(),
        public_ip: format!("3.38.{}.{}", 121 + n / 250, n % 250 + 1),
        name: name_tag(params).unwrap_or_default(),
        nat_gateway: None,
    };
    xml.leaf("publicIp", &address.public_ip)
        .leaf("allocationId", &id)
        .leaf("domain", "vpc")
        .leaf("publicIpv4Pool", "amazon")
        .leaf("networkBorderGroup", lab::REGION);
    state.addresses.insert(id, address);
    Ok(())
}

pub(super) fn describe_addresses(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let wanted = Wanted::listed(params, "AllocationId");
    wanted.all_exist(|id| state.addresses.contains_key(id), missing)?;
    let names = Wanted::filtered(params, "tag:Name");
    let addresses = state
        .addresses
        .values()
        .filter(|a| wanted.accepts(&a.allocation_id) && names.accepts(&a.name));
    xml.items("addressesSet", addresses, address_xml);
    Ok(())
}

pub(super) fn release_address(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let id = required(params, "AllocationId")?.to_string();
    let address = state.addresses.get(&id).ok_or_else(|| missing(&id))?;
    if let Some(nat) = &address.nat_gateway {
        return Err(AwsError::new(
            400,
            "InvalidIPAddress.InUse",
            format!(
                "Address {} is in use (by NAT gateway {nat}: delete it and wait until it is deleted)",
                address.public_ip
            ),
        ));
    }
    state.addresses.remove(&id);
    xml.leaf("return", true);
    Ok(())
}
