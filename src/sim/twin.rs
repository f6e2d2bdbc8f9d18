//! The twin as one object: the virtual clock and the world it drives (Kubernetes and AWS).
//! Every change runs the controllers to rest and arms the timers they asked for on the clock.

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use crate::clock::{Clock, VirtualClock};
use crate::lab;

use super::aws::eks_lifecycle::on_timer;
use super::aws::state::{AwsState, AwsTimer, Rule};
use super::gpu;
use super::kube::controllers::{fire_timer, reconcile};
use super::kube::programs::{self, container_program};
use super::kube::state::{KubeState, Timer, built_in_key};
use super::scenario::{NodeSpec, clear_cluster, install_addon, node_object, uninstall_addon};
use crate::lab::reachability::{Endpoint, Peer, SgRule, reachable};

pub struct Twin {
    pub clock: Arc<VirtualClock>,
    kube: Mutex<KubeState>,
    aws: Mutex<AwsState>,
    this: Weak<Twin>,
}

fn unpoison<T>(result: std::sync::LockResult<MutexGuard<'_, T>>) -> MutexGuard<'_, T> {
    result.unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Twin {
    pub fn new(clock: Arc<VirtualClock>) -> Arc<Self> {
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
            Self {
                clock,
                kube: Mutex::new(kube),
                aws: Mutex::new(AwsState::default()),
                this: this.clone(),
            }
        })
    }

    /// Changes the Kubernetes world, then lets the controllers react.
    pub fn kube<R>(&self, change: impl FnOnce(&mut KubeState) -> R) -> R {
        let (result, timers) = {
            let mut state = unpoison(self.kube.lock());
            state.now = self.clock.now();
            let result = change(&mut state);
            reconcile(&mut state);
            (result, std::mem::take(&mut state.timers))
        };
        self.arm_kube(timers);
        result
    }

    fn arm_kube(&self, timers: Vec<(Duration, Timer)>) {
        for (at, timer) in timers {
            let this = self.this.clone();
            self.clock.schedule_at(at, move |_| {
                if let Some(twin) = this.upgrade() {
                    twin.kube(|state| fire_timer(state, &timer));
                }
            });
        }
    }

    /// Reads the AWS world as it is now (no timers, no clock: safe inside a Kubernetes change).
    pub fn read_aws<R>(&self, read: impl FnOnce(&AwsState) -> R) -> R {
        let state = unpoison(self.aws.lock());
        read(&state)
    }

    /// Reads the Kubernetes world as it is now.
    pub fn read_kube<R>(&self, read: impl FnOnce(&KubeState) -> R) -> R {
        let mut state = unpoison(self.kube.lock());
        state.now = self.clock.now();
        read(&state)
    }

    /// Changes (or reads) the AWS world; timers it asks for are armed on the clock.
    pub fn aws<R>(&self, change: impl FnOnce(&mut AwsState) -> R) -> R {
        let (result, timers) = {
            let mut state = unpoison(self.aws.lock());
            state.now = self.clock.now();
            let result = change(&mut state);
            (result, std::mem::take(&mut state.timers))
        };
        self.arm_aws(timers);
        result
    }

    fn arm_aws(&self, timers: Vec<(Duration, AwsTimer)>) {
        for (at, timer) in timers {
            let this = self.this.clone();
            self.clock.schedule_at(at, move |_| {
                if let Some(twin) = this.upgrade() {
                    twin.fire_aws(&timer);
                }
            });
        }
    }

    /// Virtual time now.
    pub fn clock_now(&self) -> Duration {
        self.clock.now()
    }

    /// What an AWS timer does, in both worlds: a booted instance's Node joins the cluster, a
    /// terminated one's Node leaves, a finished update turns Successful.
    fn fire_aws(&self, timer: &AwsTimer) {
        match timer {
            AwsTimer::InstanceJoins { instance } => {
                let joined = self.aws(|state| {
                    let nodegroup_name = state.instances.get(instance)?.nodegroup.clone();
                    if state.failing_joins.contains(&nodegroup_name) {
                        return None;
                    }
                    let instance = state.instances.get_mut(instance)?;
                    instance.state = "running".into();
                    let instance = instance.clone();
                    let nodegroup = state
                        .nodegroups
                        .values()
                        .find(|n| n.name == nodegroup_name)?
                        .clone();
                    Some((instance, nodegroup))
                });
                if let Some((instance, nodegroup)) = joined {
                    let shape = if instance.instance_type == lab::G5_XLARGE.instance_type {
                        &lab::G5_XLARGE
                    } else {
                        &lab::T3_MEDIUM
                    };
                    let labels: Vec<(&str, &str)> = nodegroup
                        .labels
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect();
                    let taints: Vec<(&str, &str, &str)> = nodegroup
                        .taints
                        .iter()
                        .map(|(k, v, e)| (k.as_str(), v.as_str(), e.as_str()))
                        .collect();
                    let node = node_object(&NodeSpec {
                        nodegroup: &nodegroup.name,
                        instance_id: &instance.id,
                        zone: &instance.zone,
                        private_ip: &instance.private_ip,
                        shape,
                        ami: &instance.ami,
                        labels: &labels,
                        taints: &taints,
                        ready: true,
                    });
                    self.kube(|state| {
                        let now = state.now;
                        state.store.create(&built_in_key("nodes"), node, now);
                    });
                }
            }
            AwsTimer::InstanceTerminated { instance } => {
                let ip = self.aws(|state| {
                    let now = state.now;
                    state.meter.stop(instance, now);
                    let instance = state.instances.get_mut(instance)?;
                    instance.state = "terminated".into();
                    Some(instance.private_ip.clone())
                });
                if let Some(ip) = ip {
                    let name = format!(
                        "ip-{}.{}.compute.internal",
                        ip.replace('.', "-"),
                        lab::REGION
                    );
                    self.kube(|state| state.store.remove(&built_in_key("nodes"), "", &name));
                }
            }
            AwsTimer::ClusterDeleted { .. } => {
                self.aws(|state| on_timer(state, timer));
                self.kube(clear_cluster);
            }
            AwsTimer::AddonActive { addon, .. } => {
                self.aws(|state| on_timer(state, timer));
                self.kube(|state| install_addon(state, addon));
            }
            AwsTimer::AddonDeleted { addon, .. } => {
                self.aws(|state| on_timer(state, timer));
                self.kube(|state| uninstall_addon(state, addon));
            }
            AwsTimer::ClusterActive { .. }
            | AwsTimer::NodegroupActive { .. }
            | AwsTimer::NodegroupDeleted { .. }
            | AwsTimer::NatAvailable { .. }
            | AwsTimer::NatDeleted { .. } => self.aws(|state| on_timer(state, timer)),
            AwsTimer::UpdateDone { update } => self.aws(|state| {
                let Some(record) = state.updates.get(update).cloned() else {
                    return;
                };
                let Some(nodegroup) = record.nodegroup.clone() else {
                    return;
                };
                let stuck: Vec<String> = state
                    .instances
                    .values()
                    .filter(|i| i.nodegroup == nodegroup && i.state == "pending")
                    .map(|i| i.id.clone())
                    .collect();
                if let Some(u) = state.updates.get_mut(update) {
                    if stuck.is_empty() {
                        u.status = "Successful".into();
                    } else {
                        u.status = "Failed".into();
                        u.errors.push((
                            "NodeCreationFailure".into(),
                            "Instances failed to join the kubernetes cluster".into(),
                            stuck.clone(),
                        ));
                    }
                }
                let stuck = !stuck.is_empty();
                let now = state.now;
                if let Some(ng) = state
                    .nodegroups
                    .get_mut(&(record.cluster.clone(), nodegroup))
                {
                    ng.status = if stuck {
                        "DEGRADED".into()
                    } else {
                        "ACTIVE".into()
                    };
                    ng.modified_at = now;
                }
            }),
        }
    }
}

/// The network between node addresses, from the EC2 side: NCCL needs TCP 1025-65535 to pass
/// both ways, judged by the same evaluator as `ec2::reachable`.
fn network_of(twin: Weak<Twin>) -> gpu::programs::Network {
    Arc::new(move |from: &str, to: &str| {
        let twin = twin.upgrade()?;
        twin.read_aws(|state| {
            let endpoint = |ip: &str| {
                state
                    .instances
                    .values()
                    .find(|i| i.private_ip == ip && i.state == "running")
                    .map(|i| Endpoint {
                        groups: i.groups.clone(),
                        ip: Some(ip.to_string()),
                    })
            };
            let (Some(a), Some(b)) = (endpoint(from), endpoint(to)) else {
                return Some(format!("no running instance has address {from} or {to}"));
            };
            let rules: Vec<SgRule> = state.rules.iter().map(sg_rule).collect();
            [1025, 43_000, 65_535].iter().find_map(|port| {
                let there = reachable(&a, &b, "tcp", *port, &rules);
                let back = reachable(&b, &a, "tcp", *port, &rules);
                (!there.allowed)
                    .then_some(there.reason)
                    .or((!back.allowed).then_some(back.reason))
            })
        })
    })
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
