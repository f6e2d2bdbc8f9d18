//! The remediation policy as data: the Xid -> action table (AWS's, with its A100 exceptions)
//! and the rules that escalate on repetition, each with a count, a window, a burst and a scope
//! (the same GPU, different GPUs, the node), as NVSentinel's health-events analyzer has them.
//! A runbook reads the default (`nvml::policy()`), changes or extends it, and judges with it.
//! `memory` says what the record of earlier runs escalates (src/health/memory.rs).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use super::memory::Memory;
use super::verdict::{Finding, Verdict};
use super::xid_actions::{self, default_actions};
use crate::gpu::xid::XidEvent;

/// NVSentinel's health-events analyzer, docs/configuration/health-events-analyzer.md @184a613a.
pub const NVSENTINEL: &str = "NVIDIA NVSentinel health-events analyzer (docs/configuration/health-events-analyzer.md @184a613a)";

/// Where a rule counts its occurrences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// `count` occurrences on one GPU.
    SameGpu,
    /// Occurrences on `count` different GPUs of the node.
    DifferentGpus,
    /// `count` occurrences anywhere on the node.
    Node,
}

impl Scope {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "same_gpu" => Some(Self::SameGpu),
            "different_gpus" => Some(Self::DifferentGpus),
            "node" => Some(Self::Node),
            _ => None,
        }
    }

    fn words(self) -> &'static str {
        match self {
            Self::SameGpu => "on the same GPU",
            Self::DifferentGpus => "on different GPUs",
            Self::Node => "on the node",
        }
    }
}

/// Which Xids a rule counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum XidSet {
    Codes(Vec<u32>),
    /// Every code the table sends to RESET or worse (NVSentinel's "fatal XID").
    Fatal,
}

/// One escalation: `count` occurrences of `xids` within `window` (from the latest), bursts
/// closer than `burst` counted once, in `scope`, call for `action`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rule {
    pub name: String,
    pub xids: XidSet,
    pub count: usize,
    pub window: Option<Duration>,
    pub burst: Option<Duration>,
    pub scope: Scope,
    pub action: Verdict,
    pub source: String,
}

/// The table and the rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Xid -> action; a code not here is MONITOR, but Xid 154, whose line says what it needs.
    pub actions: BTreeMap<u32, Verdict>,
    /// Per GPU model (a part of nvidia-smi's name, `A100`), codes whose action differs there.
    pub product_actions: BTreeMap<String, BTreeMap<u32, Verdict>>,
    pub rules: Vec<Rule>,
    /// What the record of earlier runs escalates.
    pub memory: Memory,
}

const DAY: Duration = Duration::from_secs(24 * 3600);

impl Default for Policy {
    fn default() -> Self {
        let rule = |name: &str, xids, count, burst: u64, scope, action| Rule {
            name: name.to_string(),
            xids,
            count,
            window: Some(DAY),
            burst: Some(Duration::from_secs(burst)),
            scope,
            action,
            source: NVSENTINEL.to_string(),
        };
        Self {
            actions: default_actions(),
            product_actions: BTreeMap::from([(
                "A100".to_string(),
                // AWS: "REBOOT on A100" for 64 and 95 (no reset of one GPU alone there).
                BTreeMap::from([(64, Verdict::Reboot), (95, Verdict::Reboot)]),
            )]),
            rules: vec![
                // CONTACT_SUPPORT: the instance goes.
                rule(
                    "RepeatedXIDErrorOnSameGPU",
                    XidSet::Fatal,
                    5,
                    180,
                    Scope::SameGpu,
                    Verdict::Isolate,
                ),
                // RUN_DCGMEUD: out of service until DCGM's diagnostic says (RESET is the
                // nearest verdict: taken out, not replaced).
                rule(
                    "RepeatedXID31OnSameGPU",
                    XidSet::Codes(vec![31]),
                    2,
                    180,
                    Scope::SameGpu,
                    Verdict::Reset,
                ),
                // NONE: an application's fault, not the GPUs'.
                rule(
                    "RepeatedXID31OnDifferentGPU",
                    XidSet::Codes(vec![31]),
                    2,
                    180,
                    Scope::DifferentGpus,
                    Verdict::Monitor,
                ),
                // NVSentinel counts Xid 13 per GPC and TPC; the twin's and dmesg's lines are
                // read per GPU here.
                rule(
                    "RepeatedXID13OnSameGPU",
                    XidSet::Codes(vec![13]),
                    2,
                    15,
                    Scope::SameGpu,
                    Verdict::Reset,
                ),
                rule(
                    "RepeatedXID13OnDifferentGPU",
                    XidSet::Codes(vec![13]),
                    2,
                    15,
                    Scope::DifferentGpus,
                    Verdict::Monitor,
                ),
            ],
            memory: Memory::default(),
        }
    }
}

impl Policy {
    /// What one Xid calls for on a GPU of `product`, with its meaning. `message` is the rest of
    /// the line (Xid 154 says there what the GPU needs).
    pub fn action(
        &self,
        code: u32,
        product: Option<&str>,
        message: &str,
    ) -> (Verdict, &'static str) {
        let (table, meaning) = xid_actions::xid_action(code, product, message);
        let by_product = product.and_then(|p| {
            self.product_actions
                .iter()
                .find(|(part, _)| p.contains(part.as_str()))
                .and_then(|(_, codes)| codes.get(&code))
        });
        let verdict = match (by_product, self.actions.get(&code)) {
            (Some(v), _) | (None, Some(v)) => *v,
            // Not in the table: Xid 154 by its words, the rest MONITOR.
            (None, None) if code == 154 => table,
            (None, None) => Verdict::Monitor,
        };
        (verdict, meaning)
    }

    /// The rules that fire on a node's Xids; `product` decides which codes are fatal.
    pub fn escalations(&self, events: &[XidEvent], product: Option<&str>) -> Vec<Finding> {
        let mut findings = Vec::new();
        for rule in &self.rules {
            let counted: Vec<&XidEvent> = events
                .iter()
                .filter(|e| match &rule.xids {
                    XidSet::Codes(codes) => codes.contains(&e.xid),
                    XidSet::Fatal => self.action(e.xid, product, &e.message).0 >= Verdict::Reset,
                })
                .collect();
            let recent = within_window(&counted, rule.window);
            let mut by_gpu: BTreeMap<&str, usize> = BTreeMap::new();
            for gpu_events in group_by_gpu(&recent).values() {
                let occurrences = bursts(gpu_events, rule.burst);
                by_gpu.insert(gpu_events[0].pci.as_str(), occurrences);
            }
            let fired: Vec<(Option<String>, usize)> = match rule.scope {
                Scope::SameGpu => by_gpu
                    .iter()
                    .filter(|(_, n)| **n >= rule.count)
                    .map(|(gpu, n)| (Some((*gpu).to_string()), *n))
                    .collect(),
                Scope::DifferentGpus if by_gpu.len() >= rule.count => vec![(None, by_gpu.len())],
                Scope::Node if by_gpu.values().sum::<usize>() >= rule.count => {
                    vec![(None, by_gpu.values().sum())]
                }
                _ => Vec::new(),
            };
            for (gpu, seen) in fired {
                let codes = match &rule.xids {
                    XidSet::Codes(codes) => codes
                        .iter()
                        .map(|c| format!("Xid {c}"))
                        .collect::<Vec<_>>()
                        .join("/"),
                    XidSet::Fatal => "a fatal Xid".to_string(),
                };
                let (seen, threshold) = match rule.scope {
                    Scope::DifferentGpus => (
                        format!("on {seen} different GPUs"),
                        format!("on fewer than {} GPUs", rule.count),
                    ),
                    scope => (
                        format!("{seen} times {}", scope.words()),
                        format!("fewer than {} times", rule.count),
                    ),
                };
                findings.push(Finding {
                    verdict: rule.action,
                    gpu,
                    gpu_uuid: None,
                    observed: format!("{codes} {seen}{} ({})", window_words(rule.window), rule.name),
                    threshold,
                    source: "the policy's rule (nvml::policy(); defaults from NVSentinel's health-events analyzer)",
                    check: "xid_repeated",
                });
            }
        }
        findings
    }
}

fn window_words(window: Option<Duration>) -> String {
    window.map_or_else(String::new, |w| {
        format!(" within {}", crate::clock::format_duration(w))
    })
}

/// An event's time in seconds when its timestamp reads as one: dmesg's seconds since boot or an
/// RFC 3339 time (journalctl -o short-iso). Other styles have none.
fn seconds(event: &XidEvent) -> Option<f64> {
    let text = event.timestamp.as_deref()?;
    text.parse::<f64>()
        .ok()
        .or_else(|| crate::clock::dates::parse_rfc3339_utc(text).map(|s| s as f64))
}

/// The events within `window` of the latest; events without a readable time are kept (the log
/// is all since boot, which a window can only shorten).
fn within_window<'a>(events: &[&'a XidEvent], window: Option<Duration>) -> Vec<&'a XidEvent> {
    let Some(window) = window else {
        return events.to_vec();
    };
    let latest = events
        .iter()
        .filter_map(|e| seconds(e))
        .fold(f64::MIN, f64::max);
    events
        .iter()
        .filter(|e| seconds(e).is_none_or(|t| latest - t <= window.as_secs_f64()))
        .copied()
        .collect()
}

fn group_by_gpu<'a>(events: &[&'a XidEvent]) -> BTreeMap<&'a str, Vec<&'a XidEvent>> {
    let mut groups: BTreeMap<&str, Vec<&XidEvent>> = BTreeMap::new();
    for event in events {
        groups.entry(event.pci.as_str()).or_default().push(event);
    }
    groups
}

/// Occurrences, a run of events each within `burst` of the one before counting once.
fn bursts(events: &[&XidEvent], burst: Option<Duration>) -> usize {
    let Some(burst) = burst else {
        return events.len();
    };
    let mut count = 0;
    let mut last: Option<f64> = None;
    for event in events {
        let at = seconds(event);
        let same_burst = matches!((at, last), (Some(t), Some(p)) if t - p <= burst.as_secs_f64());
        if !same_burst {
            count += 1;
        }
        if at.is_some() {
            last = at;
        }
    }
    count
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
