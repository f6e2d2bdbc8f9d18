//! The SDK's shared HTTPS client with the first request going alone (see
//! `clients::first_alone`): a run's first AWS calls start at once (the lab report's seven
//! DescribeAddon, the security-group reads), and without the wait each opened a connection
//! before the first had said it speaks HTTP/2, three where one does.

use std::sync::Arc;

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_runtime_api::client::runtime_components::{
    RuntimeComponents, RuntimeComponentsBuilder,
};
use aws_smithy_runtime_api::shared::IntoShared;
use aws_smithy_types::config_bag::ConfigBag;

use crate::clients::first_alone::{Gate, OpenOnDrop};

/// `inner`, whose connectors all hold to one gate.
pub(super) fn first_alone(inner: SharedHttpClient) -> SharedHttpClient {
    FirstAloneClient {
        inner,
        gate: Arc::default(),
    }
    .into_shared()
}

#[derive(Debug)]
struct FirstAloneClient {
    inner: SharedHttpClient,
    gate: Arc<Gate>,
}

impl HttpClient for FirstAloneClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        FirstAloneConnector {
            inner: self.inner.http_connector(settings, components),
            gate: self.gate.clone(),
        }
        .into_shared()
    }

    fn validate_base_client_config(
        &self,
        components: &RuntimeComponentsBuilder,
        cfg: &ConfigBag,
    ) -> Result<(), BoxError> {
        self.inner.validate_base_client_config(components, cfg)
    }

    fn validate_final_config(
        &self,
        components: &RuntimeComponents,
        cfg: &ConfigBag,
    ) -> Result<(), BoxError> {
        self.inner.validate_final_config(components, cfg)
    }

    fn connector_metadata(
        &self,
    ) -> Option<aws_smithy_runtime_api::client::connector_metadata::ConnectorMetadata> {
        self.inner.connector_metadata()
    }
}

#[derive(Debug)]
struct FirstAloneConnector {
    inner: SharedHttpConnector,
    gate: Arc<Gate>,
}

impl HttpConnector for FirstAloneConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        if self.gate.is_open() {
            return self.inner.call(request);
        }
        if self.gate.take_first() {
            let answer = self.inner.call(request);
            let opens = OpenOnDrop::new(self.gate.clone());
            return HttpConnectorFuture::new(async move {
                let answer = answer.await;
                drop(opens);
                answer
            });
        }
        let (inner, gate) = (self.inner.clone(), self.gate.clone());
        HttpConnectorFuture::new(async move {
            gate.wait().await;
            inner.call(request).await
        })
    }
}
