//! The objects the API serves and the rules they are kept by: the store and the cluster's
//! state, the kinds served, the verbs on the store, defaults, validation (field validation
//! too), patches, selectors, owner references, quantities, and the apiserver's errors.

pub(crate) mod api;
pub(crate) mod changes;
pub(crate) mod defaults;
pub(crate) mod fields;
pub(crate) mod kind_defaults;
pub(crate) mod label_values;
pub(crate) mod managed;
pub(crate) mod memory;
pub(crate) mod ownership;
pub(crate) mod patch;
pub(crate) mod priority;
pub(crate) mod quantity;
pub(crate) mod resources;
pub(crate) mod selectors;
pub(crate) mod service_allocation;
pub(crate) mod state;
pub(crate) mod status;
pub(crate) mod store;
pub(crate) mod structural_defaults;
pub(crate) mod validation;
pub(crate) mod warnings;
