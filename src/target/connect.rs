//! Where a run acts: the embedded lab twin on a virtual clock (the default), or a cluster from
//! a kubeconfig on the real clock. Builds the clock, the clients and the bindings for either.

use std::sync::Arc;

use super::eks_cluster;

use super::scenario;
use crate::auth::secret::Secret;
use crate::bindings::{AwsBindings, GpuBindings, HelmBindings, KubeBindings};
use crate::cli::{ClockKind, TargetArgs};
use crate::clients::aws::{AwsClients, RetryPolicy, Timeouts, TrustedCa};
use crate::clients::kube::{Fixed, KubeClient, SERVICE_ACCOUNT_DIR};
use crate::clock::{Clock, RealClock, VirtualClock};
use crate::error::Error;
use crate::script::Extension;
use crate::sim::Twin;

/// The clients of a target outside this process (`recover` undoes through them).
#[derive(Clone)]
pub(crate) struct TargetClients {
    pub(crate) aws: Arc<AwsClients>,
    pub(crate) kube: Arc<KubeClient>,
}

/// The APIs a run's connections are counted for: the report's key, and its name in words.
const COUNTED_APIS: [(&str, &str); 3] = [
    ("kubernetes", "Kubernetes"),
    ("kubernetes_exec", "Kubernetes exec"),
    ("aws", "AWS"),
];

impl TargetClients {
    /// The TCP connections the clients opened so far, by API, for the run's report (those
    /// with none left out).
    pub(crate) fn connections(&self) -> std::collections::BTreeMap<String, u64> {
        let kube = self.kube.connections();
        let opened = [kube.requests(), kube.upgrades(), self.aws.connections()];
        COUNTED_APIS
            .iter()
            .zip(opened)
            .filter(|(_, opened)| *opened > 0)
            .map(|((api, _), opened)| (api.to_string(), opened))
            .collect()
    }
}

/// `connections opened: Kubernetes 1, Kubernetes exec 3, AWS 2`, for `--verbose`.
pub(crate) fn connections_line(connections: &std::collections::BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = COUNTED_APIS
        .iter()
        .filter_map(|(api, name)| connections.get(*api).map(|n| format!("{name} {n}")))
        .collect();
    let parts = if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    };
    format!("connections opened: {parts}")
}

pub(crate) struct Target {
    pub(crate) clock: Arc<dyn Clock>,
    /// What names this target in journals and locks: the Kubernetes API and the AWS endpoint.
    pub(crate) key: String,
    /// What names this target in the run history: the same lab from run to run (the embedded
    /// twin of any process, with its scenario), where `key` is this process's own.
    pub(crate) history_key: String,
    /// The clients of either kind of target.
    pub(crate) clients: TargetClients,
    pub(crate) extensions: Vec<Arc<dyn Extension>>,
    /// The twin's clock, when the target is the twin.
    pub(crate) virtual_clock: Option<Arc<VirtualClock>>,
    /// Where calls go, in words.
    pub(crate) description: String,
    /// The EKS cluster named by `--cluster`.
    pub(crate) cluster: Option<String>,
    /// Its ARN, when the run reached it by `--cluster` (DescribeCluster gave it).
    pub(crate) eks_arn: Option<String>,
    /// The embedded twin in words, without its URL: `the lab twin (deployed scenario)`.
    pub(crate) twin_name: Option<String>,
    /// Keeps the in-process twin alive for the run.
    twin: Option<Arc<Twin>>,
    /// AWS calls go to `--aws-endpoint` (an emulator) beside the embedded twin.
    aws_emulated: bool,
}

impl Target {
    /// The worlds that are the embedded lab twin: its Kubernetes side, and its AWS side unless
    /// `--aws-endpoint` sent AWS calls to an emulator.
    pub(crate) fn embedded_worlds(&self) -> Vec<crate::guard::World> {
        match &self.twin {
            None => Vec::new(),
            Some(_) if self.aws_emulated => vec![crate::guard::World::Kubernetes],
            Some(_) => vec![crate::guard::World::Kubernetes, crate::guard::World::Aws],
        }
    }

    /// The clients of a target outside this process; None for the embedded twin, which lives
    /// and dies with the process (nothing to recover there).
    pub(crate) fn outside(&self) -> Option<&TargetClients> {
        self.twin.is_none().then_some(&self.clients)
    }
}

pub(crate) fn connect(
    runtime: &tokio::runtime::Runtime,
    args: &TargetArgs,
    clock: Option<ClockKind>,
) -> Result<Target, Error> {
    // kube's client spawns its buffer task on the current runtime.
    let _entered = runtime.enter();
    if !args.names_a_cluster() {
        if args.profile.is_some() || args.region.is_some() {
            return Err(Error::Usage(
                "--profile and --region choose the AWS account of a real target: add --kubeconfig, --cluster or --in-cluster".into(),
            ));
        }
        let scenario = scenario::parse(&args.scenario)?;
        let name = scenario::describe(&args.scenario);
        return embedded_twin(runtime, args, clock, &scenario, &name);
    }
    if clock == Some(ClockKind::Virtual) {
        return Err(Error::Usage(
            "a real cluster runs on the real clock; drop --clock virtual".into(),
        ));
    }
    let aws = Arc::new(outside_aws(args)?);
    let (kube, description, eks_arn) = outside_kube(runtime, args, &aws)?;
    let key = format!("Kubernetes {} with AWS {}", kube.endpoint, aws.endpoint);
    let kube = Arc::new(kube);
    Ok(Target {
        clock: Arc::new(RealClock::new()),
        history_key: key.clone(),
        key,
        clients: TargetClients {
            aws: aws.clone(),
            kube: kube.clone(),
        },
        extensions: extensions(kube, aws, args.helm.clone()),
        virtual_clock: None,
        description,
        cluster: args.cluster.clone(),
        eks_arn,
        twin_name: None,
        twin: None,
        aws_emulated: false,
    })
}

/// The AWS clients of a real target: `--aws-endpoint`'s, or AWS's own from the credential
/// chain (`--profile`, `--region`).
fn outside_aws(args: &TargetArgs) -> Result<AwsClients, Error> {
    // As the aws CLI does: a TLS-inspecting proxy's CA, or `lab serve`'s CA file.
    let trusted_ca = TrustedCa::from_environment().map_err(Error::Usage)?;
    Ok(match &args.aws_endpoint {
        Some(endpoint) => AwsClients::for_endpoint(
            endpoint,
            args.region.as_deref().unwrap_or(crate::lab::REGION),
        ),
        None => AwsClients::from_environment(args.profile.as_deref(), args.region.as_deref()),
    }
    .with_retry(RetryPolicy {
        max_attempts: args.aws_max_attempts,
        virtual_clock: None,
    })
    .with_timeouts(timeouts(args))
    .with_lab_token(args.lab_token.clone().map(Secret::new))
    .with_trusted_ca(trusted_ca))
}

/// The Kubernetes client of a real target, where its calls go in words, and the EKS
/// cluster's ARN where it was described: this pod's cluster (`--in-cluster`), an EKS cluster
/// by name, or a kubeconfig's.
fn outside_kube(
    runtime: &tokio::runtime::Runtime,
    args: &TargetArgs,
    aws: &Arc<AwsClients>,
) -> Result<(KubeClient, String, Option<String>), Error> {
    let (client, description) = match (&args.kubeconfig, &args.cluster) {
        _ if args.in_cluster => in_cluster(runtime, args)?,
        (None, Some(cluster)) => {
            let (client, arn) = runtime.block_on(eks_cluster::connect(aws, cluster, args))?;
            let description = format!("EKS cluster {cluster} ({})", aws.endpoint);
            return Ok((client, description, arn));
        }
        (path, _) => from_kubeconfig(runtime, args, path.as_deref())?,
    };
    Ok((client, description, None))
}

fn in_cluster(
    runtime: &tokio::runtime::Runtime,
    args: &TargetArgs,
) -> Result<(KubeClient, String), Error> {
    let dir = args
        .service_account_dir
        .clone()
        .unwrap_or_else(|| SERVICE_ACCOUNT_DIR.into());
    let client = runtime
        .block_on(KubeClient::in_cluster(
            &dir,
            args.connect_timeout,
            args.request_timeout,
        ))
        .map_err(|e| Error::Usage(e.to_string()))?;
    let description = format!("the cluster of this pod ({})", client.endpoint);
    Ok((client, description))
}

/// `path`'s cluster (the default kubeconfig's without one), in `--context` when given.
fn from_kubeconfig(
    runtime: &tokio::runtime::Runtime,
    args: &TargetArgs,
    path: Option<&std::path::Path>,
) -> Result<(KubeClient, String), Error> {
    let client = runtime
        .block_on(KubeClient::from_kubeconfig(
            path,
            args.context.as_deref(),
            args.connect_timeout,
            args.request_timeout,
        ))
        .map_err(|e| Error::Usage(e.to_string()))?;
    let description = format!(
        "the cluster of {}{}",
        path.map_or("the default kubeconfig".into(), |p| p.display().to_string()),
        args.context
            .as_ref()
            .map(|c| format!(" (context {c})"))
            .unwrap_or_default()
    );
    Ok((client, description))
}

/// A twin in this process started from a capture of a real target, on the virtual clock, with
/// the target's faults and timeouts but none of its endpoints: a rehearsal calls nothing
/// outside this process.
pub(crate) fn twin_of(
    runtime: &tokio::runtime::Runtime,
    args: &TargetArgs,
    capture: crate::lab_state::LabState,
    name: &str,
) -> Result<Target, Error> {
    // kube's client spawns its buffer task on the current runtime.
    let _entered = runtime.enter();
    let own = TargetArgs {
        aws_endpoint: None,
        ..args.clone()
    };
    let scenario = crate::sim::Scenario::Captured(Arc::new(capture));
    embedded_twin(runtime, &own, None, &scenario, name)
}

/// The lab twin in this process, on loopback, for this run only; its clients hold its
/// admin token and the lab user's keys.
fn embedded_twin(
    runtime: &tokio::runtime::Runtime,
    args: &TargetArgs,
    clock: Option<ClockKind>,
    scenario: &crate::sim::Scenario,
    name: &str,
) -> Result<Target, Error> {
    let virtual_clock = Arc::new(VirtualClock::new());
    let twin = Twin::new(virtual_clock.clone());
    scenario::load(&twin, scenario);
    for fault in &args.faults {
        crate::sim::apply_fault(&twin, fault).map_err(Error::Usage)?;
    }
    let served = runtime
        .block_on(crate::sim::serve_kube(twin.clone(), 0))
        .map_err(|e| Error::Usage(format!("cannot start the lab twin on 127.0.0.1: {e}")))?;
    let client = KubeClient::for_endpoint(
        &served.url,
        Some(served.ca_der.clone()),
        Some(Arc::new(Fixed(twin.secrets.admin_token.clone()))),
    )
    .map_err(|e| Error::Usage(e.to_string()))?;
    let aws_address = runtime
        .block_on(crate::sim::serve_aws(
            twin.clone(),
            0,
            served.acceptor.clone(),
        ))
        .map_err(|e| {
            Error::Usage(format!(
                "cannot start the lab twin's AWS endpoint on 127.0.0.1: {e}"
            ))
        })?;
    let twin_clock = virtual_clock.clone();
    let clock = run_clock(runtime, virtual_clock, clock);
    let aws_url = format!("https://{aws_address}");
    let aws = aws_of_twin(args, &aws_url, &twin, &served.ca_pem)?
        .with_retry(RetryPolicy {
            max_attempts: args.aws_max_attempts,
            virtual_clock: clock.is_virtual().then(|| twin_clock.clone()),
        })
        .with_timeouts(timeouts(args));
    let twin_name = format!("the lab twin ({name})");
    let description = format!("{twin_name} at {}", served.url);
    let (kube, aws) = (Arc::new(client), Arc::new(aws));
    Ok(Target {
        clock,
        key: format!("the embedded lab twin of process {}", std::process::id()),
        history_key: format!("the embedded lab twin ({name})"),
        clients: TargetClients {
            aws: aws.clone(),
            kube: kube.clone(),
        },
        extensions: extensions(kube, aws, args.helm.clone()),
        virtual_clock: Some(twin_clock),
        description,
        cluster: None,
        eks_arn: None,
        twin_name: Some(twin_name),
        twin: Some(twin),
        aws_emulated: args.aws_endpoint.is_some(),
    })
}

/// The run's clock: the twin's virtual clock, or with `--clock real` the wall clock, which the
/// twin's world then follows, as under `lab serve --speed 1`.
fn run_clock(
    runtime: &tokio::runtime::Runtime,
    virtual_clock: Arc<VirtualClock>,
    clock: Option<ClockKind>,
) -> Arc<dyn Clock> {
    if clock == Some(ClockKind::Real) {
        runtime.spawn(follow_wall_clock(virtual_clock));
        Arc::new(RealClock::new())
    } else {
        virtual_clock
    }
}

/// The AWS clients of a run on the twin: the twin's endpoint (`url`, trusting its CA) with the
/// lab's keys and token, or `--aws-endpoint`'s (an emulator) with keys from the credential chain.
fn aws_of_twin(
    args: &TargetArgs,
    url: &str,
    twin: &Twin,
    ca_pem: &str,
) -> Result<AwsClients, Error> {
    let secrets = &twin.secrets;
    Ok(match &args.aws_endpoint {
        Some(endpoint) => AwsClients::for_endpoint(endpoint, crate::lab::REGION)
            .with_trusted_ca(TrustedCa::from_environment().map_err(Error::Usage)?),
        None => AwsClients::for_endpoint_with_keys(
            url,
            crate::lab::REGION,
            &secrets.access_key_id,
            secrets.secret_access_key.clone(),
        )
        .with_lab_token(Some(secrets.admin_token.clone()))
        .with_trusted_ca(Some(TrustedCa::lab(ca_pem))),
    })
}

fn timeouts(args: &TargetArgs) -> Timeouts {
    Timeouts {
        connect: args.connect_timeout,
        attempt: args.request_timeout,
    }
}

async fn follow_wall_clock(clock: Arc<VirtualClock>) {
    let tick = std::time::Duration::from_millis(20);
    let mut ticker = tokio::time::interval(tick);
    loop {
        ticker.tick().await;
        clock.advance(tick);
    }
}

/// Extensions for listing docs: real bindings over a client that is never called.
pub(crate) fn documentation_extensions(
    runtime: &tokio::runtime::Runtime,
) -> Vec<Arc<dyn Extension>> {
    let _entered = runtime.enter();
    let aws = AwsClients::for_endpoint("http://127.0.0.1:9", crate::lab::REGION);
    extensions(Arc::new(KubeClient::unconnected()), Arc::new(aws), None)
}

/// Every binding module, over one Kubernetes client and one set of AWS clients.
fn extensions(
    kube: Arc<KubeClient>,
    aws: Arc<AwsClients>,
    helm: Option<std::path::PathBuf>,
) -> Vec<Arc<dyn Extension>> {
    vec![
        Arc::new(KubeBindings::new(kube.clone())),
        Arc::new(AwsBindings::new(aws)),
        Arc::new(GpuBindings::new(kube.clone())),
        Arc::new(HelmBindings::new(helm, Some(kube))),
    ]
}
