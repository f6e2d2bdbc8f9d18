//! The AWS bindings as one [`Extension`]: `eks::`, `ec2::`, `iam::`, `kms::` and `cost::` over
//! one set of clients, each module in a file of its own.

use std::sync::Arc;

use rhai::Engine;

use crate::clients::aws::AwsClients;
use crate::script::{Extension, Host};

pub struct AwsBindings {
    clients: Arc<AwsClients>,
}

impl AwsBindings {
    pub fn new(clients: Arc<AwsClients>) -> Self {
        Self { clients }
    }
}

impl Extension for AwsBindings {
    fn install(&self, engine: &mut Engine, host: &Arc<Host>) {
        let c = &self.clients;
        engine.register_static_module("eks", super::eks::module(c, host).into());
        engine.register_static_module("ec2", super::ec2::module(c, host).into());
        engine.register_static_module("iam", super::iam::module(c, host).into());
        engine.register_static_module("cost", super::cost::module(c, host).into());
        engine.register_static_module("kms", super::kms::module(c, host).into());
        // Seed facts for audits, with the AWS modules as they always came.
        engine.register_static_module("facts", crate::bindings::facts::module().into());
    }
}
