//! The Kubernetes half of the twin's world: the registry, the store, pod runtimes, health
//! switches and the timers controllers ask for.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use serde_json::Value;

use super::memory::Memory;
use super::resources::{Registry, ResourceType};
use super::store::Store;
use crate::sim::kube::programs::{Context, Output};

/// Something a controller wants to happen later on the virtual clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Timer {
    /// A pod's containers have started.
    PodStarted {
        namespace: String,
        name: String,
        uid: String,
    },
    /// A pod's program has finished.
    PodFinished {
        namespace: String,
        name: String,
        uid: String,
    },
    /// A Job's `activeDeadlineSeconds` has passed.
    JobDeadline {
        namespace: String,
        name: String,
        uid: String,
    },
    /// A node whose link is down has posted no status for the node-monitor grace period.
    NodeStatusStale { node: String },
    /// A NodeClaim whose launch failed is due for another try.
    KarpenterRetry { nodeclaim: String },
    /// A Karpenter node has been empty for its pool's `consolidateAfter`.
    KarpenterEmpty { nodeclaim: String },
    /// A deleted namespace's contents are gone: the namespace controller removes it.
    NamespaceFinalize { name: String },
    /// The EKS node monitoring agent on a node applies what it found to the node's conditions
    /// (its report interval after the finding).
    AgentReport { node: String },
    /// A node that was rebooting has booted again: its kubelet posts Ready with a new bootID.
    NodeRebooted { node: String },
    /// A pod's toleration of its unreachable node's NoExecute taint has run out.
    TaintEviction {
        namespace: String,
        name: String,
        uid: String,
    },
}

/// What a container's program does in the twin: its output, how long it runs, its exit code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ProgramRun {
    pub(crate) stdout: String,
    pub(crate) exit_code: i32,
    /// `None`: it runs until the pod is deleted.
    pub(crate) duration: Option<Duration>,
    /// Lines it prints later, by time since it started (a program that keeps retrying).
    pub(crate) later: Vec<(Duration, String)>,
}

/// The log of one container, stamped with the virtual time of each line.
#[derive(Debug, Clone, Default)]
pub(crate) struct ContainerLog {
    pub(crate) lines: Vec<(Duration, String)>,
}

/// Decides what a pod's container runs: `(pod, container, world) -> run`.
pub(crate) type ProgramDecider =
    Box<dyn Fn(&Value, &Value, &KubeState) -> ProgramRun + Send + Sync>;
/// Answers an exec: `(argv, where, world) -> output`.
pub(crate) type ExecAnswer =
    Box<dyn Fn(&[String], &Context<'_>, &KubeState) -> Output + Send + Sync>;

pub(crate) struct KubeState {
    pub(crate) registry: Registry,
    pub(crate) store: Store,
    pub(crate) now: Duration,
    /// Health checks made to fail, by name (`etcd`), for `/readyz` and `/livez`.
    pub(crate) failing_checks: BTreeSet<String>,
    /// GPU and NIC faults of nodes, which the GPU programs and the device plugin read.
    pub(crate) hardware: crate::sim::gpu::node_faults::HardwareFaults,
    /// What drills injected into nodes' DCGM and kernel logs since they booted, by node name.
    pub(crate) injected: BTreeMap<String, crate::sim::gpu::injected::Injected>,
    /// Nodes that rebooted: when they booted last and how many times, by node name (others
    /// booted when they joined).
    pub(crate) reboots: BTreeMap<String, (Duration, u32)>,
    /// When the EKS node monitoring agent started on each node and when it last reported.
    pub(crate) monitoring_agents: BTreeMap<String, crate::sim::gpu::monitoring_agent::AgentRun>,
    /// EFA devices of the nodes whose instances the twin launched, by node name: what their
    /// launch template attached (none without one). Other nodes have their type's.
    pub(crate) efa_devices: BTreeMap<String, u32>,
    /// Wall-clock time added to every request (the `kube-latency` fault): an apiserver as far
    /// away as a real one, for runbooks' timeouts and fan-outs.
    pub(crate) latency: std::time::Duration,
    /// `nccl-busbw=SHARE`: the network between GPU nodes delivers that share of its
    /// bandwidth to every NCCL run that crosses it.
    pub(crate) network_share: Option<f64>,
    /// `network-slow=TARGET:SHARE`: the links up the tree from these network nodes (`nn-...`,
    /// or a node named as faults name them, for its block) carry that share of their
    /// bandwidth, so a run with nodes both under one and outside it goes at that share; a run
    /// inside goes at full pace.
    pub(crate) slow_network_nodes: BTreeMap<String, f64>,
    pub(crate) timers: Vec<(Duration, Timer)>,
    /// Logs by (namespace, pod, container); ordered, so a pod's logs go in one range.
    pub(crate) logs: BTreeMap<(String, String, String), ContainerLog>,
    /// Decides what a container runs; the GPU side adds programs such as `nvidia-smi`.
    pub(crate) programs: ProgramDecider,
    /// Answers exec requests (`kubectl exec`, `k8s::exec`).
    pub(crate) exec: ExecAnswer,
    /// Exit codes of running containers by pod uid, in container order, until they finish.
    pub(crate) exit_codes: HashMap<String, Vec<i32>>,
    name_sequence: u64,
    /// The store's resource version when the controllers last came to rest.
    pub(crate) settled_at: u64,
    /// `(namespace, name)` of the GPU Operator's pod when it last ran.
    pub(crate) gpu_operator_pod: Option<(String, String)>,
    /// `(namespace, name)` of the pods waiting for a node: the scheduler's queue.
    pub(crate) unscheduled: BTreeSet<(String, String)>,
    /// What controllers keep between passes (the scheduler's view of each node, Karpenter's
    /// NodeClaims and nominations), each under its own type.
    pub(crate) memory: Memory,
    /// `/version`'s gitVersion and the kubelets': the lab's, or the hybrid lab's 1.36.
    pub(crate) git_version: &'static str,
    /// Nodes whose link to the control plane is cut (the `link-down` fault), since when.
    pub(crate) links_down: BTreeMap<String, Duration>,
    /// Instances the autoscaler asked for and those it gives back, for the twin to carry to
    /// the AWS side.
    pub(crate) launch_requests: Vec<crate::sim::launch::LaunchRequest>,
    pub(crate) terminate_requests: Vec<String>,
}

impl Default for KubeState {
    fn default() -> Self {
        Self {
            registry: Registry::default(),
            store: Store::default(),
            now: Duration::ZERO,
            failing_checks: BTreeSet::new(),
            hardware: Default::default(),
            efa_devices: BTreeMap::new(),
            injected: BTreeMap::new(),
            reboots: BTreeMap::new(),
            monitoring_agents: BTreeMap::new(),
            latency: std::time::Duration::ZERO,
            network_share: None,
            slow_network_nodes: BTreeMap::new(),
            timers: Vec::new(),
            logs: BTreeMap::new(),
            programs: Box::new(crate::sim::kube::programs::container_program),
            exec: Box::new(|argv, context, _| crate::sim::kube::programs::run(argv, context)),
            exit_codes: HashMap::new(),
            name_sequence: 0,
            settled_at: 0,
            gpu_operator_pod: None,
            unscheduled: BTreeSet::new(),
            memory: Memory::default(),
            git_version: crate::lab::SERVER_GIT_VERSION,
            links_down: BTreeMap::new(),
            launch_requests: Vec::new(),
            terminate_requests: Vec::new(),
        }
    }
}

/// The store key of a built-in resource the controllers use, without a registry lookup.
pub(crate) fn built_in_key(plural: &str) -> String {
    let group = match plural {
        "deployments" | "replicasets" | "daemonsets" | "statefulsets" => "apps",
        "jobs" | "cronjobs" => "batch",
        _ => "",
    };
    format!("{group}/{plural}")
}

/// The store key of a resource type: `group/plural`, the same for every version.
pub(crate) fn store_key(resource: &ResourceType) -> String {
    format!("{}/{}", resource.group, resource.plural)
}

impl KubeState {
    pub(crate) fn resource(&self, api_version: &str, kind: &str) -> Option<ResourceType> {
        self.registry.by_kind(api_version, kind).cloned()
    }

    /// A built-in type that the controllers use (panics only on a typo in this crate).
    pub(crate) fn built_in(&self, plural: &str) -> ResourceType {
        self.registry
            .all()
            .iter()
            .find(|t| t.plural == plural && matches!(t.group.as_str(), "" | "apps" | "batch"))
            .cloned()
            .unwrap_or_else(|| panic!("built-in resource {plural} is registered"))
    }

    pub(crate) fn objects(&self, plural: &str, namespace: Option<&str>) -> Vec<Value> {
        self.store
            .list(&built_in_key(plural), namespace)
            .cloned()
            .collect()
    }

    /// Only the objects that match, so controllers do not copy the whole store on every pass.
    pub(crate) fn objects_where(
        &self,
        plural: &str,
        namespace: Option<&str>,
        keep: impl Fn(&Value) -> bool,
    ) -> Vec<Value> {
        self.store
            .list(&built_in_key(plural), namespace)
            .filter(|o| keep(o))
            .cloned()
            .collect()
    }

    /// The `openAPIV3Schema` of the CRD version that serves `resource` (None for a built-in
    /// kind, or a CRD version without one).
    pub(crate) fn crd_schema(&self, resource: &ResourceType) -> Option<&Value> {
        let crds = self.resource("apiextensions.k8s.io/v1", "CustomResourceDefinition")?;
        let crd = self.store.get(
            &store_key(&crds),
            "",
            &format!("{}.{}", resource.plural, resource.group),
        )?;
        let version = crd["spec"]["versions"]
            .as_array()?
            .iter()
            .find(|v| v["name"] == resource.version.as_str())?;
        let schema = &version["schema"]["openAPIV3Schema"];
        schema.is_object().then_some(schema)
    }

    /// Built-in objects owned by `owner_uid` (a ReplicaSet's pods, a Deployment's ReplicaSets).
    pub(crate) fn owned(&self, plural: &str, owner_uid: &str) -> Vec<Value> {
        let key = built_in_key(plural);
        self.store.owned_by(&key, owner_uid).cloned().collect()
    }

    pub(crate) fn object(&self, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        self.store
            .get(&built_in_key(plural), namespace, name)
            .cloned()
    }

    /// [`KubeState::object`] without the copy, for reads under the lock.
    pub(crate) fn object_ref(&self, plural: &str, namespace: &str, name: &str) -> Option<&Value> {
        self.store.get(&built_in_key(plural), namespace, name)
    }

    /// A short deterministic suffix for generated names (`coredns-5d8f7-x2k9q`).
    pub(crate) fn next_suffix(&mut self, length: usize) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        self.name_sequence += 1;
        let mut n = self.name_sequence.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 7;
        (0..length)
            .map(|_| {
                let c = ALPHABET[(n % ALPHABET.len() as u64) as usize] as char;
                n /= ALPHABET.len() as u64;
                c
            })
            .collect()
    }

    /// Moves generated names past those a captured twin made: its controllers named their
    /// objects from the same sequence.
    pub(crate) fn skip_generated_names(&mut self) {
        self.name_sequence += 1 << 24;
    }

    pub(crate) fn schedule(&mut self, after: Duration, timer: Timer) {
        self.timers.push((self.now + after, timer));
    }

    /// Drops the logs of a deleted pod.
    pub(crate) fn forget_logs(&mut self, namespace: &str, pod: &str) {
        let from = (namespace.to_string(), pod.to_string(), String::new());
        let containers: Vec<_> = self
            .logs
            .range(from..)
            .take_while(|((ns, name, _), _)| ns == namespace && name == pod)
            .map(|(key, _)| key.clone())
            .collect();
        for key in containers {
            self.logs.remove(&key);
        }
    }

    pub(crate) fn log_line(&mut self, namespace: &str, pod: &str, container: &str, line: &str) {
        let now = self.now;
        self.log_line_at(namespace, pod, container, now, line);
    }

    /// A log line that appears at `at` (virtual time); readers see it once the clock is there.
    pub(crate) fn log_line_at(
        &mut self,
        namespace: &str,
        pod: &str,
        container: &str,
        at: Duration,
        line: &str,
    ) {
        let now = at;
        self.logs
            .entry((namespace.into(), pod.into(), container.into()))
            .or_default()
            .lines
            .push((now, line.to_string()));
    }
}
