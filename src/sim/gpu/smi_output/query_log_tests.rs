//! The twin's `nvidia-smi -q` log: its values in one column, as the real tool aligns them.

use super::*;

fn host() -> GpuHost {
    GpuHost::a10g("node", 5, "Mon Nov 30 04:43:45 2026")
}

#[test]
fn query_values_sit_in_one_column() {
    let text = query(&host(), None);
    assert!(text.starts_with("\n==============NVSMI LOG==============\n\nTimestamp"));
    for line in text.lines().filter(|l| l.contains(" : ")) {
        assert_eq!(line.find(" : "), Some(41), "{line:?}");
    }
    assert!(text.contains("    Product Name                          : NVIDIA A10G\n"));
    assert!(text.contains("        Current                           : N/A\n"));
    assert!(text.contains("    Processes                             : None\n"));
}
