//! The twin as one object: the virtual clock and the world it drives (Kubernetes and AWS).
//! Every change runs the controllers to rest and arms the timers they asked for on the clock.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use crate::clock::{Clock, VirtualClock};
use crate::lab;

use super::audit::Audit;
use super::aws::identity::LAB_USER;
use super::aws::state::{AwsState, AwsTimer, Instance, Nodegroup, Rule};
use super::aws::timers::{instance_running, instance_terminated, on_timer};
use super::gpu;
use super::gpu::programs::Fabric;
use super::kube::auth::request_info::RequestAttributes;
use super::kube::controllers::{fire_timer, reconcile};
use super::kube::programs::{self, container_program};
use super::kube::storage::state::{KubeState, Timer, built_in_key};
use super::scenario::{
    NodeSpec, clear_cluster, configure_addon, install_addon, node_object, uninstall_addon,
};
use super::secrets::{LabSecrets, Refusals};
use crate::lab::reachability::{Endpoint, Peer, SgRule, cidr_contains, efa_reachable, reachable};

pub(crate) struct Twin {
    pub(crate) clock: Arc<VirtualClock>,
    kube: Mutex<KubeState>,
    aws: Mutex<AwsState>,
    /// Timers of both worlds by the virtual instant they are due: one clock event an instant,
    /// which fires them all and runs the controllers once (64 GPU nodes that boot together
    /// join in one pass, not 64).
    due: Mutex<BTreeMap<Duration, Vec<Due>>>,
    this: Weak<Twin>,
    /// How many requests each API has answered (`GET /twin/requests`), for benchmarks that
    /// check a runbook makes only the requests it needs.
    pub(crate) requests: RequestCounts,
    /// The requests answered while a benchmark asked to keep them (`/twin/record`).
    pub(crate) recording: super::recording::Recording,
    /// The RBAC attributes of every Kubernetes request served (`GET /twin/audit`).
    pub(crate) audit: Audit<RequestAttributes>,
    /// The IAM action of every AWS call served (`GET /twin/audit` on the AWS endpoint).
    pub(crate) aws_audit: Audit<String>,
    /// The admin token and the lab user's keys, fresh for this twin.
    pub(crate) secrets: LabSecrets,
    /// `127.0.0.1:PORT` of the AWS endpoint once it listens: the STS an EKS token may name.
    pub(crate) aws_authority: std::sync::OnceLock<String>,
    /// Why credentials were refused (`lab serve` prints them).
    pub(crate) refusals: Refusals,
}

#[derive(Default)]
pub(crate) struct RequestCounts {
    kube: AtomicU64,
    aws: AtomicU64,
    kube_connections: AtomicU64,
    aws_connections: AtomicU64,
}

impl RequestCounts {
    pub(crate) fn count_kube_connection(&self) {
        self.kube_connections.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_aws_connection(&self) {
        self.aws_connections.fetch_add(1, Ordering::Relaxed);
    }

    /// `(kubernetes, aws)` connections accepted so far.
    pub(crate) fn connections(&self) -> (u64, u64) {
        (
            self.kube_connections.load(Ordering::Relaxed),
            self.aws_connections.load(Ordering::Relaxed),
        )
    }

    pub(crate) fn count_kube(&self) {
        self.kube.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_aws(&self) {
        self.aws.fetch_add(1, Ordering::Relaxed);
    }

    /// `(kubernetes, aws)` requests so far.
    pub(crate) fn totals(&self) -> (u64, u64) {
        (
            self.kube.load(Ordering::Relaxed),
            self.aws.load(Ordering::Relaxed),
        )
    }
}

/// A timer of either world.
enum Due {
    Kube(Timer),
    Aws(AwsTimer),
}

thread_local! {
    /// Set while this thread fires the timers of one instant: its changes wait for the one
    /// reconcile at the end. Other threads (requests being served) reconcile as usual.
    static IN_ONE_PASS: Cell<bool> = const { Cell::new(false) };
}

fn unpoison<T>(result: std::sync::LockResult<MutexGuard<'_, T>>) -> MutexGuard<'_, T> {
    result.unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Marks this thread as firing one instant until dropped (a panicking timer included).
struct OnePass;

impl OnePass {
    fn begin() -> Self {
        IN_ONE_PASS.with(|flag| flag.set(true));
        Self
    }
}

impl Drop for OnePass {
    fn drop(&mut self) {
        IN_ONE_PASS.with(|flag| flag.set(false));
    }
}

impl Twin {
    pub(crate) fn new(clock: Arc<VirtualClock>) -> Arc<Self> {
        Arc::new_cyclic(|this| {
            let mut kube = KubeState::default();
            let network = network_of(this.clone());
            kube.programs = Box::new(move |pod, container, state| {
                gpu::programs::container(pod, container, state, &network)
                    .unwrap_or_else(|| container_program(pod, container, state))
            });
            kube.exec = Box::new(|argv, context, state| {
                gpu::programs::exec(argv, context, state)
                    .unwrap_or_else(|| programs::run(argv, context))
            });
            let secrets = LabSecrets::generate();
            let mut aws = AwsState::default();
            aws.identities
                .add_user(LAB_USER, "AIDALABTWINUSER00001".into(), Duration::ZERO);
            aws.identities.add_key(
                LAB_USER,
                secrets.access_key_id.clone(),
                secrets.secret_access_key.clone(),
                Duration::ZERO,
            );
            Self {
                clock,
                kube: Mutex::new(kube),
                aws: Mutex::new(aws),
                due: Mutex::new(BTreeMap::new()),
                this: this.clone(),
                requests: RequestCounts::default(),
                recording: super::recording::Recording::default(),
                audit: Audit::default(),
                aws_audit: Audit::default(),
                secrets,
                aws_authority: std::sync::OnceLock::new(),
                refusals: Refusals::default(),
            }
        })
    }

    /// Changes the Kubernetes world, then lets the controllers react; what the cluster's
    /// autoscaler asked of EC2 meanwhile is carried over.
    pub(crate) fn kube<R>(&self, change: impl FnOnce(&mut KubeState) -> R) -> R {
        let (result, launches, terminations) = self.kube_without_carrying(change);
        self.carry_autoscaler_requests(launches, terminations);
        result
    }

    /// The same, handing back the autoscaler's requests instead of carrying them.
    pub(super) fn kube_without_carrying<R>(
        &self,
        change: impl FnOnce(&mut KubeState) -> R,
    ) -> (R, Vec<crate::sim::launch::LaunchRequest>, Vec<String>) {
        let deferred = IN_ONE_PASS.with(Cell::get);
        let (result, timers, launches, terminations) = {
            let mut state = unpoison(self.kube.lock());
            state.now = self.clock.now();
            let result = change(&mut state);
            if deferred {
                // Within one instant's timers: all of it is taken after the last one.
                return (result, Vec::new(), Vec::new());
            }
            reconcile(&mut state);
            (
                result,
                std::mem::take(&mut state.timers),
                std::mem::take(&mut state.launch_requests),
                std::mem::take(&mut state.terminate_requests),
            )
        };
        self.arm(timers.into_iter().map(|(at, t)| (at, Due::Kube(t))));
        (result, launches, terminations)
    }

    /// An add-on's `configurationValues`, as EKS keeps them.
    fn addon_settings(&self, cluster: &str, addon: &str) -> Option<String> {
        self.read_aws(|state| {
            state
                .clusters
                .get(cluster)
                .and_then(|c| c.addons.get(addon))
                .and_then(|a| a.configuration_values.clone())
        })
    }

    /// Puts autoscaler requests back into the Kubernetes state, for the next change to carry.
    pub(super) fn keep_for_next_change(
        &self,
        launches: Vec<crate::sim::launch::LaunchRequest>,
        terminations: Vec<String>,
    ) {
        let mut state = unpoison(self.kube.lock());
        state.launch_requests.extend(launches);
        state.terminate_requests.extend(terminations);
    }

    /// Puts timers on the clock: the first timer of an instant schedules the event that fires
    /// every timer of that instant.
    fn arm(&self, timers: impl IntoIterator<Item = (Duration, Due)>) {
        let mut due = unpoison(self.due.lock());
        for (at, timer) in timers {
            let slot = due.entry(at).or_default();
            if slot.is_empty() {
                let this = self.this.clone();
                self.clock.schedule_at(at, move |_| {
                    if let Some(twin) = this.upgrade() {
                        twin.fire_instant(at);
                    }
                });
            }
            slot.push(timer);
        }
    }

    /// Fires what is due at `at`, in the order it was asked for, then lets the controllers
    /// react once.
    fn fire_instant(&self, at: Duration) {
        let timers = unpoison(self.due.lock()).remove(&at).unwrap_or_default();
        {
            let _one_pass = OnePass::begin();
            for timer in &timers {
                match timer {
                    Due::Kube(timer) => {
                        self.kube(|state| fire_timer(state, timer));
                        self.after_kube_timer(timer);
                    }
                    Due::Aws(timer) => self.fire_aws(timer),
                }
            }
        }
        self.kube(|_| ());
    }

    /// What a Kubernetes timer means for node auto repair: the agent's report may start or end
    /// a repair's wait, a rebooted node ends its repair.
    fn after_kube_timer(&self, timer: &Timer) {
        match timer {
            Timer::AgentReport { node } => self.repair_watch(node),
            Timer::NodeRebooted { node } => self.repair_finished(node),
            _ => {}
        }
    }

    /// Reads the AWS world as it is now (no timers, no clock: safe inside a Kubernetes change).
    pub(crate) fn read_aws<R>(&self, read: impl FnOnce(&AwsState) -> R) -> R {
        let state = unpoison(self.aws.lock());
        read(&state)
    }

    /// Reads the Kubernetes world as it is now.
    pub(crate) fn read_kube<R>(&self, read: impl FnOnce(&KubeState) -> R) -> R {
        let mut state = unpoison(self.kube.lock());
        state.now = self.clock.now();
        read(&state)
    }

    /// Changes (or reads) the AWS world; timers it asks for are armed on the clock.
    pub(crate) fn aws<R>(&self, change: impl FnOnce(&mut AwsState) -> R) -> R {
        let (result, timers) = {
            let mut state = unpoison(self.aws.lock());
            state.now = self.clock.now();
            let result = change(&mut state);
            (result, std::mem::take(&mut state.timers))
        };
        self.arm(timers.into_iter().map(|(at, t)| (at, Due::Aws(t))));
        result
    }

    /// Virtual time now.
    pub(crate) fn clock_now(&self) -> Duration {
        self.clock.now()
    }

    /// What an AWS timer does, in both worlds: a booted instance's Node joins the cluster, a
    /// terminated one's Node leaves, an add-on's workloads come, change and go with it, a
    /// deleted cluster takes its objects along; the other timers change the AWS side only.
    fn fire_aws(&self, timer: &AwsTimer) {
        match timer {
            AwsTimer::InstanceJoins { instance } => self.instance_joins(instance),
            AwsTimer::InstanceTerminated { instance } => self.instance_terminated(instance),
            AwsTimer::RepairDue { instance } => self.repair_due(instance),
            AwsTimer::RepairScan { nodegroup } => self.repair_scan(nodegroup),
            AwsTimer::InstanceRebooting { instance } => self.instance_rebooting(instance),
            AwsTimer::ClusterDeleted { .. } => {
                self.aws(|state| on_timer(state, timer));
                self.kube(clear_cluster);
            }
            AwsTimer::AddonActive { cluster, addon } => {
                self.aws(|state| on_timer(state, timer));
                self.addon_installed(cluster, addon);
            }
            AwsTimer::AddonConfigured { cluster, addon } => {
                let settings = self.addon_settings(cluster, addon);
                self.kube(|state| configure_addon(state, addon, settings.as_deref()));
            }
            AwsTimer::AddonDeleted { addon, .. } => {
                self.aws(|state| on_timer(state, timer));
                self.kube(|state| uninstall_addon(state, addon));
            }
            AwsTimer::ClusterActive { .. }
            | AwsTimer::NodegroupActive { .. }
            | AwsTimer::NodegroupDeleted { .. }
            | AwsTimer::NatAvailable { .. }
            | AwsTimer::NatDeleted { .. }
            | AwsTimer::UpdateDone { .. } => self.aws(|state| on_timer(state, timer)),
        }
    }

    /// A booted instance runs and its Node joins the cluster (an autoscaler's instance joins
    /// its own way).
    fn instance_joins(&self, instance: &str) {
        if self.autoscaled_node_joins(instance) {
            return;
        }
        let Some((instance, nodegroup)) = self.aws(|state| instance_running(state, instance))
        else {
            return;
        };
        let node = joining_node(&instance, &nodegroup);
        let name = node["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.kube(|state| {
            let now = state.now;
            state.efa_devices.insert(name, instance.efa_interfaces);
            state.store.create(&built_in_key("nodes"), node, now);
        });
        self.repair_finished(&instance.id);
    }

    /// A rebooting instance's Node goes silent for as long as the instance takes to boot.
    fn instance_rebooting(&self, instance: &str) {
        let Some((ip, kind)) = self.read_aws(|state| {
            state
                .instances
                .get(instance)
                .map(|i| (i.private_ip.clone(), i.instance_type.clone()))
        }) else {
            return;
        };
        let name = format!(
            "ip-{}.{}.compute.internal",
            ip.replace('.', "-"),
            lab::REGION
        );
        let takes = super::aws::state::join_delay(&kind);
        self.kube(|state| {
            super::kube::controllers::node_maintenance::reboot(state, &name, takes);
        });
    }

    /// A terminated instance's Node leaves the cluster.
    fn instance_terminated(&self, instance: &str) {
        let Some(ip) = self.aws(|state| instance_terminated(state, instance)) else {
            return;
        };
        let name = format!(
            "ip-{}.{}.compute.internal",
            ip.replace('.', "-"),
            lab::REGION
        );
        self.kube(|state| {
            state.store.remove(&built_in_key("nodes"), "", &name);
            // A later instance may get the same address, so the same node name: it starts
            // with a kernel log and an agent of its own.
            state.injected.remove(&name);
            state.reboots.remove(&name);
            state.monitoring_agents.remove(&name);
        });
    }

    /// An ACTIVE add-on's workloads are installed, with its `configurationValues`.
    fn addon_installed(&self, cluster: &str, addon: &str) {
        let settings = self.addon_settings(cluster, addon);
        self.kube(|state| {
            install_addon(state, addon);
            configure_addon(state, addon, settings.as_deref());
        });
    }
}

/// The labels EKS gives the node of an instance with a network topology:
/// `topology.k8s.aws/network-node-layer-N`, one per network node.
pub(crate) fn network_labels(instance: &Instance) -> Vec<(String, String)> {
    instance
        .network_nodes
        .iter()
        .enumerate()
        .map(|(layer, node)| {
            (
                crate::sim::aws::topology::layer_label(layer + 1),
                node.clone(),
            )
        })
        .collect()
}

/// The Node of an instance that has joined: its node group's labels and taints, its shape.
fn joining_node(instance: &Instance, nodegroup: &Nodegroup) -> serde_json::Value {
    let network = network_labels(instance);
    let labels: Vec<(&str, &str)> = nodegroup
        .labels
        .iter()
        .chain(&network)
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let taints: Vec<(&str, &str, &str)> = nodegroup
        .taints
        .iter()
        .map(|(k, v, e)| (k.as_str(), v.as_str(), e.as_str()))
        .collect();
    node_object(&NodeSpec {
        nodegroup: &nodegroup.name,
        instance_id: &instance.id,
        zone: &instance.zone,
        private_ip: &instance.private_ip,
        shape: lab::shape_of(&instance.instance_type),
        ami: &instance.ami,
        labels: &labels,
        taints: &taints,
        ready: true,
    })
}

/// The network between node addresses, from the EC2 side: NCCL's sockets need TCP 1025-65535
/// to pass both ways between every two ranks, EFA needs All-traffic rules naming the group
/// both ways; judged by the same evaluator as `ec2::reachable`.
///
/// The evaluator sees an address only through its security groups and the CIDR rules that
/// contain it, so addresses alike in both are judged once: 256 nodes in one subnet cost one
/// evaluation and 65,280 lookups, not 65,280 evaluations.
fn network_of(twin: Weak<Twin>) -> gpu::programs::Network {
    Arc::new(move |ips: &[String], fabric: Fabric| {
        let twin = twin.upgrade()?;
        twin.read_aws(|state| first_unreachable(state, ips, fabric))
    })
}

/// The first address that some other of `ips` cannot reach over `fabric` (or that no running
/// instance has), judging each pair of endpoint kinds once.
fn first_unreachable(state: &AwsState, ips: &[String], fabric: Fabric) -> Option<String> {
    let rules: Vec<SgRule> = state.rules.iter().map(sg_rule).collect();
    let (endpoints, kind_of) = endpoint_kinds(state, ips, &rules);
    let mut judged: HashMap<(usize, usize), bool> = HashMap::new();
    let mut blocked = |a: Option<usize>, b: Option<usize>| -> bool {
        let (Some(a), Some(b)) = (a, b) else {
            return true; // no running instance has that address
        };
        *judged
            .entry((a, b))
            .or_insert_with(|| blocked_between(&endpoints[a], &endpoints[b], fabric, &rules))
    };
    (0..ips.len()).find_map(|i| {
        (0..ips.len())
            .filter(|j| *j != i)
            .find(|j| blocked(kind_of[i], kind_of[*j]))
            .map(|j| ips[j].clone())
    })
}

/// One endpoint per kind of address (alike in security groups and in the CIDR rules that
/// contain it), and per address the index of its kind, or None without a running instance.
fn endpoint_kinds(
    state: &AwsState,
    ips: &[String],
    rules: &[SgRule],
) -> (Vec<Endpoint>, Vec<Option<usize>>) {
    let running: HashMap<&str, &Vec<String>> = state
        .instances
        .values()
        .filter(|i| i.state == "running")
        .map(|i| (i.private_ip.as_str(), &i.groups))
        .collect();
    let mut kinds: HashMap<(Vec<String>, Vec<bool>), usize> = HashMap::new();
    let mut endpoints: Vec<Endpoint> = Vec::new();
    let kind_of: Vec<Option<usize>> = ips
        .iter()
        .map(|ip| {
            let groups = running.get(ip.as_str())?;
            let cidrs: Vec<bool> = rules
                .iter()
                .map(|r| matches!(&r.peer, Peer::Cidr(c) if cidr_contains(c, Some(ip))))
                .collect();
            let next = endpoints.len();
            let kind = *kinds.entry(((*groups).clone(), cidrs)).or_insert(next);
            if kind == next {
                endpoints.push(Endpoint {
                    groups: (*groups).clone(),
                    ip: Some(ip.clone()),
                    outside: false,
                });
            }
            Some(kind)
        })
        .collect();
    (endpoints, kind_of)
}

/// Whether traffic over `fabric` fails between two endpoints, one way or the other.
fn blocked_between(a: &Endpoint, b: &Endpoint, fabric: Fabric, rules: &[SgRule]) -> bool {
    match fabric {
        Fabric::Tcp => [1025, 43_000, 65_535].iter().any(|port| {
            !reachable(a, b, "tcp", *port, rules).allowed
                || !reachable(b, a, "tcp", *port, rules).allowed
        }),
        Fabric::Efa => !efa_reachable(a, b, rules).allowed || !efa_reachable(b, a, rules).allowed,
    }
}

fn sg_rule(rule: &Rule) -> SgRule {
    SgRule {
        id: rule.id.clone(),
        group: rule.group_id.clone(),
        egress: rule.egress,
        protocol: rule.protocol.clone(),
        from_port: rule.from_port,
        to_port: rule.to_port,
        peer: match (&rule.cidr, &rule.referenced_group) {
            (_, Some(group)) => Peer::Group(group.clone()),
            (Some(cidr), None) => Peer::Cidr(cidr.clone()),
            (None, None) => Peer::Cidr(String::new()),
        },
    }
}
