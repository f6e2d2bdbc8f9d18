//! The policy's table and its escalations on kernel logs written as dmesg prints them.

use super::*;
use crate::gpu::xid::parse_kernel_log;

fn xid_line(seconds: f64, pci: &str, code: u32) -> String {
    format!("[{seconds:.6}] NVRM: Xid (PCI:{pci}): {code}, pid=1234, name=python, Ch 00000008\n")
}

fn log(lines: &[(f64, &str, u32)]) -> Vec<XidEvent> {
    let text: String = lines
        .iter()
        .map(|(t, pci, code)| xid_line(*t, pci, *code))
        .collect();
    parse_kernel_log(&text).xids
}

fn fired(policy: &Policy, events: &[XidEvent]) -> Vec<(Verdict, Option<String>, String)> {
    policy
        .escalations(events, Some("NVIDIA H100 80GB HBM3"))
        .into_iter()
        .map(|f| (f.verdict, f.gpu, f.observed))
        .collect()
}

const GPU0: &str = "0000:18:00";
const GPU1: &str = "0000:2a:00";

#[test]
fn the_default_table_is_awss_with_the_a100_exceptions() {
    let policy = Policy::default();
    assert_eq!(policy.action(79, None, "").0, Verdict::Reboot);
    assert_eq!(
        policy.action(64, Some("NVIDIA H100 80GB HBM3"), "").0,
        Verdict::Reset
    );
    assert_eq!(
        policy.action(64, Some("NVIDIA A100-SXM4-80GB"), "").0,
        Verdict::Reboot
    );
    assert_eq!(policy.action(13, None, "").0, Verdict::Monitor);
    assert_eq!(
        policy.action(154, None, "to 0x2 (Node Reboot Required)").0,
        Verdict::Reboot
    );
    // A runbook's own table wins.
    let mut mine = Policy::default();
    mine.actions.insert(43, Verdict::Reset);
    mine.actions.remove(&79);
    assert_eq!(mine.action(43, None, "").0, Verdict::Reset);
    assert_eq!(mine.action(79, None, "").0, Verdict::Monitor);
}

#[test]
fn xid_31_twice_on_one_gpu_is_the_gpus_and_on_two_gpus_the_applications() {
    let policy = Policy::default();
    let same = log(&[(100.0, GPU0, 31), (4000.0, GPU0, 31)]);
    assert_eq!(
        fired(&policy, &same),
        [(
            Verdict::Reset,
            Some(GPU0.to_string()),
            "Xid 31 2 times on the same GPU within 24h (RepeatedXID31OnSameGPU)".to_string()
        )]
    );
    let spread = log(&[(100.0, GPU0, 31), (4000.0, GPU1, 31)]);
    assert_eq!(
        fired(&policy, &spread),
        [(
            Verdict::Monitor,
            None,
            "Xid 31 on 2 different GPUs within 24h (RepeatedXID31OnDifferentGPU)".to_string()
        )]
    );
}

#[test]
fn a_burst_counts_once_and_the_window_forgets() {
    let policy = Policy::default();
    // Three lines within NVSentinel's 3-minute burst: one occurrence.
    let burst = log(&[(100.0, GPU0, 31), (130.0, GPU0, 31), (200.0, GPU0, 31)]);
    assert!(fired(&policy, &burst).is_empty());
    // Two days apart: outside the 24-hour window of the latest.
    let apart = log(&[(100.0, GPU0, 31), (100.0 + 2.0 * 86_400.0, GPU0, 31)]);
    assert!(fired(&policy, &apart).is_empty());
}

#[test]
fn a_fatal_xid_five_times_on_one_gpu_replaces_the_instance() {
    let policy = Policy::default();
    let lines: Vec<(f64, &str, u32)> = (0..5).map(|i| (1000.0 * f64::from(i), GPU1, 48)).collect();
    let events = log(&lines);
    let found = fired(&policy, &events);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, Verdict::Isolate);
    assert!(
        found[0]
            .2
            .starts_with("a fatal Xid 5 times on the same GPU"),
        "{found:?}"
    );
    // Four are not yet five.
    assert!(fired(&policy, &events[..4]).is_empty());
}

#[test]
fn a_runbooks_own_rule_counts_its_xid() {
    let mut policy = Policy::default();
    policy.rules.push(Rule {
        name: "mine".into(),
        xids: XidSet::Codes(vec![43]),
        count: 3,
        window: Some(Duration::from_secs(3600)),
        burst: None,
        scope: Scope::Node,
        action: Verdict::Reset,
        source: "the runbook".into(),
    });
    let events = log(&[(10.0, GPU0, 43), (20.0, GPU1, 43), (30.0, GPU0, 43)]);
    assert_eq!(
        fired(&policy, &events),
        [(
            Verdict::Reset,
            None,
            "Xid 43 3 times on the node within 1h (mine)".to_string()
        )]
    );
}
