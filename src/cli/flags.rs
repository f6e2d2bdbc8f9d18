//! The flag groups several subcommands share: the guards on what a run may change, what a
//! runbook may read, and the target it acts on.

use std::path::PathBuf;

use clap::Args;

/// Limits on what a run may change, checked before each mutating call is sent; a call that
/// breaks one fails, naming the guard, and the report lists it.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Guards")]
pub struct GuardArgs {
    /// Fail every mutating call before it is sent (verify-only drills).
    #[arg(long)]
    pub read_only: bool,
    /// Fail a call that would size a GPU node group above N nodes.
    #[arg(long, value_name = "N")]
    pub max_gpu_nodes: Option<u32>,
    /// Fail a call that would size a GPU node group to hold more than N GPUs (its nodes times
    /// the instance type's GPUs: 8 per p5.48xlarge).
    #[arg(long, value_name = "N")]
    pub max_gpus: Option<u32>,
    /// Only resources that match a pattern may change (repeatable; `*` matches any run of
    /// characters): nodegroup/CLUSTER/NAME, sg/sg-..., pod/NAMESPACE/NAME, node/NAME,
    /// KIND/NAMESPACE/NAME for other Kubernetes objects.
    #[arg(long = "allow", value_name = "PATTERN")]
    pub allow: Vec<crate::guard::ResourcePattern>,
    /// Let the run disrupt what matches on purpose (repeatable; `*` as in --allow): a fault
    /// drill's injection into a node, gpu-fault/NODE (node auto repair may then reboot or
    /// replace it). Needed outside the embedded lab twin, --yes besides.
    #[arg(long = "disrupt", value_name = "PATTERN")]
    pub disrupt: Vec<crate::guard::ResourcePattern>,
    /// Stop the run (its cleanups run) once the resources it started (node groups'
    /// instances) have cost USD dollars at the price table's rates; a plan shows where.
    #[arg(long, value_name = "USD", value_parser = cost_arg)]
    pub max_cost_usd: Option<f64>,
}

fn cost_arg(text: &str) -> Result<f64, String> {
    match text.trim_start_matches('$').parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd > 0.0 => Ok(usd),
        _ => Err(format!(
            "`{text}` is not an amount of dollars above 0 (e.g. 5 or 0.50)"
        )),
    }
}

impl GuardArgs {
    pub fn guards(&self) -> crate::guard::Guards {
        crate::guard::Guards {
            read_only: self.read_only,
            max_gpu_nodes: self.max_gpu_nodes.map(i64::from),
            max_gpus: self.max_gpus.map(i64::from),
            allow: self.allow.clone(),
            disrupt: self.disrupt.clone(),
            max_cost_usd: self.max_cost_usd,
            embedded: Vec::new(),
        }
    }
}

/// What `read_text` and `--set key=@path` may read besides the runbook's and the snapshot
/// folder (`eval` and `repl`: the current folder).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Reading files")]
pub struct ReadArgs {
    /// Let the runbook read files under DIR too (repeatable); /proc, /sys and /dev never.
    #[arg(long = "allow-read", value_name = "DIR")]
    pub allow_read: Vec<PathBuf>,
    /// The largest file a runbook may read.
    #[arg(long, value_name = "BYTES", default_value_t = crate::sandbox::DEFAULT_MAX_READ_BYTES)]
    pub max_read_bytes: u64,
}

impl ReadArgs {
    /// The sandbox over `folders` and the `--allow-read` ones.
    pub fn sandbox(
        &self,
        folders: impl IntoIterator<Item = PathBuf>,
    ) -> crate::sandbox::ReadSandbox {
        crate::sandbox::ReadSandbox::new(
            folders.into_iter().chain(self.allow_read.iter().cloned()),
            self.max_read_bytes,
        )
    }
}

/// Where runbooks act: the embedded lab twin (default), a cluster from a kubeconfig, an EKS
/// cluster by name, or the cluster a pod runs in.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Target")]
pub struct TargetArgs {
    /// Use the cluster of this kubeconfig (a real cluster, or `runbook lab serve`) instead of
    /// the embedded lab twin.
    #[arg(long, value_name = "PATH", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use [default: its current context].
    #[arg(long, value_name = "NAME", requires = "kubeconfig", global = true)]
    pub context: Option<String>,
    /// Use this EKS cluster with no kubeconfig: its endpoint and CA from DescribeCluster, and an
    /// EKS token signed with the AWS credentials (--profile, the default chain), renewed
    /// before it expires.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "kubeconfig",
        global = true
    )]
    pub cluster: Option<String>,
    /// Use the cluster this pod runs in: the API server every pod is given
    /// (KUBERNETES_SERVICE_HOST) and the pod's ServiceAccount token; AWS credentials from the
    /// chain (IRSA or EKS Pod Identity in a pod).
    #[arg(long, conflicts_with_all = ["kubeconfig", "cluster"], global = true)]
    pub in_cluster: bool,
    /// With --in-cluster: where the ServiceAccount's token, ca.crt and namespace are mounted
    /// [default: /var/run/secrets/kubernetes.io/serviceaccount].
    #[arg(long, value_name = "DIR", requires = "in_cluster", global = true)]
    pub service_account_dir: Option<PathBuf>,
    /// With --cluster: reach its Kubernetes API at this URL instead of the DescribeCluster
    /// endpoint (a tunnel to a private endpoint; `lab serve`'s env file names its own).
    #[arg(long, value_name = "URL", env = "RUNBOOK_KUBE_SERVER", global = true)]
    pub kube_server: Option<String>,
    /// Send eks::, ec2:: and iam:: calls to this endpoint, signed with the credential chain's
    /// keys (another process's `runbook lab serve`: source its env file; an AWS emulator such
    /// as moto_server).
    #[arg(long, value_name = "URL", global = true)]
    pub aws_endpoint: Option<String>,
    /// The lab twin's admin token, for its cost meter behind --aws-endpoint (in the env file
    /// `lab serve --write-env` writes).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "RUNBOOK_LAB_TOKEN",
        hide_env_values = true,
        global = true
    )]
    pub lab_token: Option<String>,
    /// The AWS profile for eks::, ec2:: and iam:: with --kubeconfig or --cluster [default: the
    /// credential chain's].
    #[arg(long, value_name = "NAME", global = true)]
    pub profile: Option<String>,
    /// The AWS region with --kubeconfig or --cluster [default: the profile's].
    #[arg(long, value_name = "REGION", global = true)]
    pub region: Option<String>,
    /// The lab twin's starting state: `deployed` (after the lab's Terraform apply), `hybrid`
    /// (the lab as an EKS Hybrid Nodes cluster), `empty`, or `@FILE`, a lab captured by
    /// `runbook state capture`.
    #[arg(
        long,
        default_value = "deployed",
        conflicts_with_all = ["kubeconfig", "cluster", "in_cluster"],
        global = true
    )]
    pub scenario: String,
    /// The helm binary for helm:: [default: RUNBOOK_HELM, then PATH, then .tools/bin/helm].
    #[arg(long, value_name = "PATH", global = true)]
    pub helm: Option<PathBuf>,
    /// Attempts per AWS call (the first and its retries) when AWS throttles or fails on its
    /// side; backoff doubles up to 20 s, on the run's clock.
    #[arg(
        long,
        value_name = "N",
        default_value_t = crate::clients::aws::DEFAULT_MAX_ATTEMPTS,
        value_parser = clap::value_parser!(u32).range(1..=100),
        global = true
    )]
    pub aws_max_attempts: u32,
    /// How long connecting to the Kubernetes API or AWS may take on a real clock ("5s").
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = duration_arg, global = true)]
    pub connect_timeout: std::time::Duration,
    /// How long one AWS call attempt may take on a real clock, from sending to the whole
    /// answer, and a Kubernetes request until its answer starts ("30s"); a throttled AWS
    /// call's retries get their own.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration_arg, global = true)]
    pub request_timeout: std::time::Duration,
    /// After an error's one line, print what it came from: every layer's own message (the
    /// SDK's, the HTTP stack's, the operating system's), the HTTP status and request id.
    #[arg(long, short, global = true)]
    pub verbose: bool,
    /// Switch a fault on in the lab twin (repeatable): check=NAME, nodegroup-never-joins=NAME,
    /// aws-throttle=RATE, aws-5xx=RATE, aws-latency=DURATION,
    /// kube-latency=DURATION, nccl-busbw=SHARE (and a GPU node's hardware: see the README).
    #[arg(
        long = "fault",
        value_name = "NAME=VALUE",
        conflicts_with_all = ["kubeconfig", "cluster", "in_cluster"],
        global = true
    )]
    pub faults: Vec<String>,
}

impl TargetArgs {
    /// Whether they name a cluster outside this process (a kubeconfig, an EKS cluster, the
    /// pod's own cluster) rather than the embedded twin.
    pub fn names_a_cluster(&self) -> bool {
        self.kubeconfig.is_some() || self.cluster.is_some() || self.in_cluster
    }
}

/// A duration such as "5s" or "2m", above zero.
fn duration_arg(text: &str) -> Result<std::time::Duration, String> {
    match crate::clock::parse_duration(text) {
        Ok(d) if d.is_zero() => Err("must be above zero".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}
