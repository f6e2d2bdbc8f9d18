//! What EC2's actions read from a query-protocol request and write back alike: required
//! parameters, `TagSpecification` tags and the `Name` tag set, and what a Describe action
//! asks for (ids in `GroupId.N`, values of the `Filter.N`s it knows), read the same way by
//! every Describe action.

use std::collections::BTreeMap;

use super::error::AwsError;
use super::wire::{Xml, members, numbered};

pub(super) type Params = BTreeMap<String, String>;

pub(super) fn required<'a>(params: &'a Params, key: &str) -> Result<&'a str, AwsError> {
    params.get(key).map(String::as_str).ok_or_else(|| {
        AwsError::new(
            400,
            "MissingParameter",
            format!("The request must contain the parameter {key}"),
        )
    })
}

/// The `Name` tag of `TagSpecification.N.Tag.M`.
pub(super) fn name_tag(params: &Params) -> Option<String> {
    tags(params)
        .into_iter()
        .find(|(k, _)| k == "Name")
        .map(|(_, v)| v)
}

pub(super) fn tags(params: &Params) -> Vec<(String, String)> {
    members(params, "TagSpecification")
        .iter()
        .flat_map(|spec| spec.members("Tag"))
        .filter_map(|tag| Some((tag.get("Key")?.clone(), tag.text("Value"))))
        .collect()
}

pub(super) fn name_xml(xml: &mut Xml, name: &str) {
    xml.open("tagSet")
        .open("item")
        .leaf("key", "Name")
        .leaf("value", name)
        .close("item")
        .close("tagSet");
}

/// `Filter.N.Name` / `Filter.N.Value.M` pairs.
fn filters(params: &Params) -> Vec<(String, Vec<String>)> {
    members(params, "Filter")
        .iter()
        .filter_map(|filter| Some((filter.get("Name")?.clone(), filter.values("Value"))))
        .collect()
}

/// The values a Describe call names for one field of its items, in the order named; naming
/// none means any.
#[derive(Debug, Clone, Default)]
pub(super) struct Wanted(Vec<String>);

impl Wanted {
    /// `List.1`, `List.2`, ... (`GroupId.1`).
    pub(super) fn listed(params: &Params, list: &str) -> Self {
        Self(numbered(params, list))
    }

    /// The values of the `Filter.N`s called `name` (`vpc-id`).
    pub(super) fn filtered(params: &Params, name: &str) -> Self {
        Self::default().or_filtered(params, name)
    }

    /// These, then the values of the `Filter.N`s called `name`.
    pub(super) fn or_filtered(mut self, params: &Params, name: &str) -> Self {
        for (filter, values) in filters(params) {
            if filter == name {
                self.0.extend(values);
            }
        }
        self
    }

    pub(super) fn values(&self) -> &[String] {
        &self.0
    }

    pub(super) fn accepts(&self, value: &str) -> bool {
        self.0.is_empty() || self.0.iter().any(|wanted| wanted == value)
    }

    /// The first value named that `exists` does not know, refused with `missing`.
    pub(super) fn all_exist(
        &self,
        exists: impl Fn(&str) -> bool,
        missing: impl FnOnce(&str) -> AwsError,
    ) -> Result<(), AwsError> {
        match self.0.iter().find(|value| !exists(value)) {
            Some(unknown) => Err(missing(unknown)),
            None => Ok(()),
        }
    }
}
