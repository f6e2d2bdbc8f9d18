//! The client: built from the twin's endpoint or a kubeconfig; every call takes kinds by name.

use std::path::Path;
use std::sync::Arc;

use http::Request;
use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, LogParams, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::Discovery;
use serde_json::Value;
use tokio::sync::Mutex;

use super::bearer::{BearerLayer, TokenSource};
use super::error::KubeError;
use super::health::{Health, parse_health};
use super::kinds::{self, Kind};
use super::kubeconfig_error;
use super::list_items::parse_items;
use super::stalled_body::StalledBodyLayer;
use super::transport::{self, Connections, Traffic};
use super::unreachable::{Destination, name_endpoint};

/// The field manager of everything runbooks apply.
pub(super) const FIELD_MANAGER: &str = "runbook";

#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    pub namespace: Option<String>,
    pub labels: Option<String>,
    pub fields: Option<String>,
}

pub struct KubeClient {
    client: kube::Client,
    /// Exec's client (HTTP/1.1, for its upgrade), made on first use from the recipe.
    upgrades: tokio::sync::OnceCell<kube::Client>,
    recipe: Option<Recipe>,
    connections: Connections,
    discovery: Mutex<Option<Discovery>>,
    /// Kinds already resolved, by what the runbook called them.
    resolved: std::sync::Mutex<std::collections::HashMap<String, Kind>>,
    /// Where it points, for messages (`http://127.0.0.1:40123`, or the kubeconfig context).
    pub endpoint: String,
}

/// How a client for `config` is made, kept for the exec client, which is made on first use
/// (a kubeconfig's credential plugin runs as a client is made: once is enough for a run that
/// never execs).
#[derive(Clone)]
struct Recipe {
    config: kube::Config,
    endpoint: String,
    answer_within: Option<std::time::Duration>,
    bearer: Option<Arc<dyn TokenSource>>,
}

impl Recipe {
    /// kube's client for `config`, whose errors name `endpoint`; with `answer_within`, a
    /// request whose answer has not started by then fails (a blackholed server), while an
    /// answer that has started (an exec stream quiet for minutes, a log) is not cut.
    fn client(
        &self,
        traffic: Traffic,
        connections: &Connections,
    ) -> Result<kube::Client, KubeError> {
        let builder = transport::stack(&self.config, traffic, connections).map_err(|e| {
            KubeError::Config(format!("cannot make a client for {}: {e}", self.endpoint))
        })?;
        let endpoint = self.endpoint.trim_end_matches('/');
        let name = name_endpoint(Destination {
            endpoint: endpoint.to_string(),
            connect_within: self.config.connect_timeout,
            answer_within: self.answer_within,
        });
        let bearer = tower::util::option_layer(self.bearer.clone().map(BearerLayer));
        Ok(match self.answer_within {
            Some(limit) => builder
                .with_layer(&tower::timeout::TimeoutLayer::new(limit))
                .with_layer(&StalledBodyLayer::new(limit, endpoint))
                .with_layer(&bearer)
                .with_layer(&name)
                .build(),
            None => builder.with_layer(&bearer).with_layer(&name).build(),
        })
    }
}

/// The DER certificates of a base64 PEM bundle (an EKS cluster's `certificateAuthority.data`).
fn certificates(ca: &str) -> Result<Vec<Vec<u8>>, KubeError> {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    let bad = |why: String| {
        KubeError::Config(format!(
            "the cluster's certificate authority is not a base64 PEM bundle: {why}"
        ))
    };
    let pem = STANDARD.decode(ca.trim()).map_err(|e| bad(e.to_string()))?;
    let pem = String::from_utf8(pem).map_err(|_| bad("not text".into()))?;
    let mut certificates = Vec::new();
    let mut body: Option<String> = None;
    for line in pem.lines().map(str::trim) {
        if line == "-----BEGIN CERTIFICATE-----" {
            body = Some(String::new());
        } else if line == "-----END CERTIFICATE-----" {
            let text = body.take().unwrap_or_default();
            certificates.push(STANDARD.decode(text).map_err(|e| bad(e.to_string()))?);
        } else if let Some(text) = body.as_mut() {
            text.push_str(line);
        }
    }
    if certificates.is_empty() {
        return Err(bad("no CERTIFICATE block".into()));
    }
    Ok(certificates)
}

impl KubeClient {
    /// A client for the twin on loopback: trusting its CA (DER), with a bearer token.
    pub fn for_endpoint(
        url: &str,
        ca: Option<Vec<u8>>,
        bearer: Option<Arc<dyn TokenSource>>,
    ) -> Result<Self, KubeError> {
        let uri = url
            .parse()
            .map_err(|e| KubeError::Config(format!("`{url}` is not a Kubernetes API URL: {e}")))?;
        let mut config = kube::Config::new(uri);
        config.root_cert = ca.map(|der| vec![der]);
        Self::from_recipe(Recipe {
            config,
            endpoint: url.to_string(),
            answer_within: None,
            bearer,
        })
    }

    /// A client for an EKS API server at `url`, trusting the cluster's CA (DescribeCluster's
    /// base64 PEM), with tokens from `tokens`.
    pub fn for_eks(
        url: &str,
        ca: Option<&str>,
        tokens: Arc<dyn TokenSource>,
        connect_timeout: std::time::Duration,
        request_timeout: std::time::Duration,
    ) -> Result<Self, KubeError> {
        let uri = url
            .parse()
            .map_err(|e| KubeError::Config(format!("`{url}` is not a Kubernetes API URL: {e}")))?;
        let mut config = kube::Config::new(uri);
        if let Some(ca) = ca.filter(|c| !c.is_empty()) {
            config.root_cert = Some(certificates(ca)?);
        }
        config.connect_timeout = Some(connect_timeout);
        Self::from_recipe(Recipe {
            config,
            endpoint: url.to_string(),
            answer_within: Some(request_timeout),
            bearer: Some(tokens),
        })
    }

    /// A client from a kubeconfig file (or the default chain when `path` is None) and context.
    pub async fn from_kubeconfig(
        path: Option<&Path>,
        context: Option<&str>,
        connect_timeout: std::time::Duration,
        request_timeout: std::time::Duration,
    ) -> Result<Self, KubeError> {
        let options = KubeConfigOptions {
            context: context.map(str::to_string),
            ..Default::default()
        };
        let (config, file) = match path {
            Some(path) => {
                // Bounded before kube reads it (`--kubeconfig /dev/zero` never ends); a missing
                // file gets kube's own error, which the message below explains.
                if let Err(e) = crate::sandbox::check_file(path, crate::sandbox::TEXT_FILE_LIMIT)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    return Err(KubeError::Config(format!(
                        "cannot read the kubeconfig {}: {e}",
                        path.display()
                    )));
                }
                let kubeconfig = Kubeconfig::read_from(path)
                    .map_err(|e| KubeError::Config(kubeconfig_error::unreadable(path, &e)))?;
                let config = kube::Config::from_custom_kubeconfig(kubeconfig.clone(), &options)
                    .await
                    .map_err(|e| {
                        KubeError::Config(kubeconfig_error::unusable(
                            path,
                            &kubeconfig,
                            context,
                            &e,
                        ))
                    })?;
                (config, Some((path, kubeconfig)))
            }
            None => (
                kube::Config::from_kubeconfig(&options)
                    .await
                    .map_err(|e| KubeError::Config(format!("cannot load the kubeconfig: {e}")))?,
                None,
            ),
        };
        // Reads keep kube's long default: an exec of `dcgmi diag -r 3` is quiet for minutes.
        let mut config = config;
        config.connect_timeout = Some(connect_timeout);
        let endpoint = config.cluster_url.to_string();
        // kube starts a credential plugin (`exec:`) as the client is made.
        let recipe = Recipe {
            config,
            endpoint,
            answer_within: Some(request_timeout),
            bearer: None,
        };
        Self::from_recipe(recipe).map_err(|e| match (&e, &file) {
            (KubeError::Config(text), Some((path, kubeconfig))) => {
                kubeconfig_error::plugin_failure(path, kubeconfig, context, text)
                    .map_or(e, KubeError::Config)
            }
            _ => e,
        })
    }

    /// A client for a configuration made here (in-cluster), with the same timeouts as one from
    /// a kubeconfig.
    pub(super) fn from_config(
        mut config: kube::Config,
        connect_timeout: std::time::Duration,
        request_timeout: std::time::Duration,
    ) -> Result<Self, KubeError> {
        config.connect_timeout = Some(connect_timeout);
        let endpoint = config.cluster_url.to_string();
        Self::from_recipe(Recipe {
            config,
            endpoint,
            answer_within: Some(request_timeout),
            bearer: None,
        })
    }

    /// A client that is never meant to be called: the bindings over it list their docs and
    /// signatures (`check`, `docs`). It makes no TLS setup (with no CA given, kube would load
    /// the machine's whole trust store, 150 files here, on every `check`), and each request
    /// fails saying so.
    pub fn unconnected() -> Self {
        let service = tower::service_fn(|_request: Request<kube::client::Body>| async {
            Err::<http::Response<kube::client::Body>, _>(std::io::Error::other(
                "this Kubernetes client only lists the bindings; it reaches no cluster",
            ))
        });
        Self::with_client(
            kube::Client::new(service, "default"),
            "(no cluster)".to_string(),
        )
    }

    fn from_recipe(recipe: Recipe) -> Result<Self, KubeError> {
        let connections = Connections::default();
        let client = recipe.client(Traffic::Requests, &connections)?;
        let endpoint = recipe.endpoint.clone();
        let mut made = Self::with_client(client, endpoint);
        made.recipe = Some(recipe);
        made.connections = connections;
        Ok(made)
    }

    fn with_client(client: kube::Client, endpoint: String) -> Self {
        Self {
            client,
            upgrades: tokio::sync::OnceCell::new(),
            recipe: None,
            connections: Connections::default(),
            discovery: Mutex::new(None),
            resolved: Default::default(),
            endpoint,
        }
    }

    /// Resolves a kind, running discovery again once if it is unknown (a CRD may be new).
    pub(super) async fn kind(&self, wanted: &str) -> Result<Kind, KubeError> {
        if let Some(kind) = self.resolved_kinds().get(wanted) {
            return Ok(kind.clone());
        }
        let kind = self.discover(wanted).await?;
        self.resolved_kinds()
            .insert(wanted.to_string(), kind.clone());
        Ok(kind)
    }

    fn resolved_kinds(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Kind>> {
        self.resolved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn discover(&self, wanted: &str) -> Result<Kind, KubeError> {
        let mut cached = self.discovery.lock().await;
        if let Some(discovery) = cached.as_ref()
            && let Some(kind) = kinds::resolve(discovery, wanted)
        {
            return Ok(kind);
        }
        // Aggregated discovery: two requests for every group, where the legacy documents take
        // one per group version (14 on the lab) one after another. Servers before 1.26 do
        // not have it; they get the legacy walk.
        // A server that could not be reached at all is not asked a second way.
        let discovery = match Discovery::new(self.client.clone()).run_aggregated().await {
            Ok(discovery) => discovery,
            Err(e @ (kube::Error::Service(_) | kube::Error::HyperError(_))) => return Err(e.into()),
            Err(_) => Discovery::new(self.client.clone()).run().await?,
        };
        let found =
            kinds::resolve(&discovery, wanted).ok_or_else(|| kinds::unknown(wanted, &discovery));
        *cached = Some(discovery);
        found
    }

    pub(super) fn api(&self, kind: &Kind, namespace: Option<&str>) -> Api<DynamicObject> {
        match (kind.namespaced, namespace) {
            (true, Some(ns)) => Api::namespaced_with(self.client.clone(), ns, &kind.resource),
            (true, None) => Api::all_with(self.client.clone(), &kind.resource),
            (false, _) => Api::all_with(self.client.clone(), &kind.resource),
        }
    }

    /// The client for exec: HTTP/1.1, since exec's WebSocket is an upgrade of it.
    pub(super) async fn for_upgrades(&self) -> Result<&kube::Client, KubeError> {
        let Some(recipe) = &self.recipe else {
            return Ok(&self.client);
        };
        self.upgrades
            .get_or_try_init(|| async { recipe.client(Traffic::Upgrades, &self.connections) })
            .await
    }

    /// kube's own client, for typed APIs (the lock's Lease).
    pub(super) fn kube_client(&self) -> kube::Client {
        self.client.clone()
    }

    /// TCP connections this client has opened to the API server so far.
    pub fn connections(&self) -> &Connections {
        &self.connections
    }

    /// A response body as it came, without the copy and UTF-8 pass `request_text` makes; an
    /// error status becomes the apiserver's `Status` error, as kube reports it.
    pub(super) async fn fetch(&self, request: Request<Vec<u8>>) -> Result<bytes::Bytes, KubeError> {
        let (status, body) = self.answer(request).await?;
        if status.is_success() {
            return Ok(body);
        }
        Err(api_error(status, &body))
    }

    /// The status and body of a request's answer, whatever the status.
    async fn answer(
        &self,
        request: Request<Vec<u8>>,
    ) -> Result<(http::StatusCode, bytes::Bytes), KubeError> {
        let response = self
            .client
            .send(request.map(kube::client::Body::from))
            .await?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| super::unreachable::describe(&e))?
            .to_bytes();
        Ok((status, body))
    }

    /// GET a health endpoint with `?verbose`; a failing check is a result, not an error. An
    /// answer that lists no checks and is no success (401 for a bad token, 403 for a user not
    /// allowed `/readyz`) is the API's refusal, said as such: not "readyz failing: []".
    pub async fn health(&self, endpoint: &str) -> Result<Health, KubeError> {
        let request = Request::get(format!("/{endpoint}?verbose"))
            .body(Vec::new())
            .map_err(|e| KubeError::Invalid(e.to_string()))?;
        let (status, body) = self.answer(request).await?;
        let health = parse_health(&String::from_utf8_lossy(&body), status.is_success());
        if !status.is_success() && health.checks.is_empty() {
            return Err(api_error(status, &body));
        }
        Ok(health)
    }

    /// Whether the API server takes this client's credential: `GET /api`, which any
    /// authenticated user may read (`system:discovery`) and an anonymous one may not.
    pub async fn authenticated(&self) -> Result<(), KubeError> {
        let request = Request::get("/api")
            .body(Vec::new())
            .map_err(|e| KubeError::Invalid(e.to_string()))?;
        self.fetch(request).await.map(|_| ())
    }

    pub async fn version(&self) -> Result<Value, KubeError> {
        let info = self.client.apiserver_version().await?;
        serde_json::to_value(info).map_err(|e| KubeError::Invalid(e.to_string()))
    }

    pub async fn get(
        &self,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
    ) -> Result<Value, KubeError> {
        self.get_as(kind, name, namespace).await
    }

    /// One object deserialized straight into `T`.
    pub async fn get_as<T: serde::de::DeserializeOwned>(
        &self,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
    ) -> Result<T, KubeError> {
        let kind = self.kind(kind).await?;
        let api = self.api(&kind, Some(namespace.unwrap_or("default")));
        // Straight into JSON: a typed detour through DynamicObject would parse twice.
        let request = kube::core::Request::new(api.resource_url())
            .get(name, &Default::default())
            .map_err(|e| KubeError::Invalid(e.to_string()))?;
        Ok(self.client.request::<T>(request).await?)
    }

    /// `get` that answers `None` for NotFound.
    pub async fn get_opt(
        &self,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
    ) -> Result<Option<Value>, KubeError> {
        match self.get(kind, name, namespace).await {
            Ok(object) => Ok(Some(object)),
            Err(KubeError::Api { code: 404, .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }

    pub async fn list(&self, kind: &str, options: &ListOptions) -> Result<Vec<Value>, KubeError> {
        self.list_as(kind, options).await
    }

    /// A list deserialized straight into `T` (JSON values, or a script's own value type), so
    /// that thousands of items are parsed once.
    pub async fn list_as<T: serde::de::DeserializeOwned + Send + 'static>(
        &self,
        kind: &str,
        options: &ListOptions,
    ) -> Result<Vec<T>, KubeError> {
        let kind = self.kind(kind).await?;
        let api = self.api(&kind, options.namespace.as_deref());
        let mut params = ListParams::default();
        if let Some(labels) = &options.labels {
            params = params.labels(labels);
        }
        if let Some(fields) = &options.fields {
            params = params.fields(fields);
        }
        let request = kube::core::Request::new(api.resource_url())
            .list(&params)
            .map_err(|e| KubeError::Invalid(e.to_string()))?;
        let body = self.fetch(request).await?;
        parse_items(body).map_err(|e| {
            KubeError::Invalid(format!(
                "the list of {} from {} is not valid JSON: {e}",
                kind.resource.plural, self.endpoint
            ))
        })
    }

    /// The metadata of every object of a kind (`as=PartialObjectMetadataList`): names,
    /// labels and owners without the rest, so that a Secret's data is never sent.
    pub async fn list_metadata(
        &self,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<Value>, KubeError> {
        let kind = self.kind(kind).await?;
        let api = self.api(&kind, namespace);
        let request = kube::core::Request::new(api.resource_url())
            .list_metadata(&ListParams::default())
            .map_err(|e| KubeError::Invalid(e.to_string()))?;
        let body = self.fetch(request).await?;
        parse_items(body).map_err(|e| {
            KubeError::Invalid(format!(
                "the metadata list of {} from {} is not valid JSON: {e}",
                kind.resource.plural, self.endpoint
            ))
        })
    }

    /// Server-side apply of each object (field manager `runbook`, conflicts forced).
    pub async fn apply(
        &self,
        objects: &[Value],
        namespace: Option<&str>,
    ) -> Result<Vec<Value>, KubeError> {
        let mut applied = Vec::new();
        for object in objects {
            let api_version = object["apiVersion"].as_str().unwrap_or_default();
            let kind_name = object["kind"].as_str().unwrap_or_default();
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            if api_version.is_empty() || kind_name.is_empty() || name.is_empty() {
                return Err(KubeError::Invalid(format!(
                    "cannot apply an object without apiVersion, kind and metadata.name (got apiVersion={api_version:?}, kind={kind_name:?}, name={name:?})"
                )));
            }
            let kind = self.kind(&format!("{api_version}/{kind_name}")).await?;
            let ns = object["metadata"]["namespace"]
                .as_str()
                .or(namespace)
                .unwrap_or("default");
            let api = self.api(&kind, Some(ns));
            let params = PatchParams::apply(FIELD_MANAGER).force();
            applied.push(to_value(
                api.patch(name, &params, &Patch::Apply(object)).await?,
            )?);
        }
        Ok(applied)
    }

    /// PATCH with a JSON merge patch (`merge`), a strategic merge patch or a JSON patch.
    pub async fn patch(
        &self,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        patch: &Value,
        patch_type: &str,
    ) -> Result<Value, KubeError> {
        let kind = self.kind(kind).await?;
        let api = self.api(&kind, Some(namespace.unwrap_or("default")));
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..Default::default()
        };
        let patched = match patch_type {
            "merge" => api.patch(name, &params, &Patch::Merge(patch)).await?,
            "strategic" => api.patch(name, &params, &Patch::Strategic(patch)).await?,
            "json" => {
                let operations: json_patch::Patch = serde_json::from_value(patch.clone())
                    .map_err(|e| KubeError::Invalid(format!("invalid JSON patch: {e}")))?;
                api.patch(name, &params, &Patch::<Value>::Json(operations))
                    .await?
            }
            other => {
                return Err(KubeError::Invalid(format!(
                    "unknown patch type `{other}`: use merge, strategic or json"
                )));
            }
        };
        to_value(patched)
    }

    pub async fn delete(
        &self,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
    ) -> Result<(), KubeError> {
        let kind = self.kind(kind).await?;
        let api = self.api(&kind, Some(namespace.unwrap_or("default")));
        api.delete(name, &DeleteParams::background()).await?;
        Ok(())
    }

    pub async fn logs(
        &self,
        pod: &str,
        namespace: Option<&str>,
        params: &LogParams,
    ) -> Result<String, KubeError> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace.unwrap_or("default"));
        Ok(api.logs(pod, params).await?)
    }
}

fn to_value(object: DynamicObject) -> Result<Value, KubeError> {
    serde_json::to_value(object).map_err(|e| KubeError::Invalid(e.to_string()))
}

/// The API's refusal of a request, from its Status body (or its text, when it sent none).
fn api_error(status: http::StatusCode, body: &[u8]) -> KubeError {
    let text = String::from_utf8_lossy(body);
    let error = serde_json::from_str::<kube::core::Status>(&text).unwrap_or_else(|_| {
        kube::core::Status::failure(text.trim(), "Failed to parse error data")
            .with_code(status.as_u16())
    });
    kube::Error::Api(error.boxed()).into()
}
