//! The twin's nvidia-smi text outputs: `topo -m` as the real tool lays it out.

use super::super::super::test_support::fixture;
use super::*;

fn host() -> GpuHost {
    GpuHost::a10g("node", 5, "Mon Nov 30 04:43:45 2026")
}

#[test]
fn topology_has_the_real_layout() {
    let real = fixture("nvidia_smi_topo_m_h100_1gpu_590.txt");
    let mut host = host();
    host.vcpus = 20;
    assert_eq!(topology(&host), real);
}
