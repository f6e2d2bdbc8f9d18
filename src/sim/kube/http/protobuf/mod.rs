//! Kubernetes' protobuf request bodies (`application/vnd.kubernetes.protobuf`), read into
//! the JSON the twin handles: built-in objects by the 1.35 definitions, and the reviews and
//! token requests kubectl sends.

pub(crate) mod descriptors;
pub(crate) mod objects;
pub(crate) mod reviews;
pub(crate) mod to_json;
pub(crate) mod wire;
