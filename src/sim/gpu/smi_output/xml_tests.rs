//! The twin's `nvidia-smi -q -x`: well-formed, in the element order of a real v12 document,
//! with an A10G's clock lists.

use super::super::super::gpu_model::GpuProcess;
use super::super::super::test_support::fixture;
use super::*;

/// Checks that every tag closes in order; returns `(depth, name)` of each element.
fn well_formed(doc: &str) -> Result<Vec<(usize, String)>, String> {
    let mut stack: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut rest = doc;
    while let Some(start) = rest.find('<') {
        let text = &rest[..start];
        if text.contains('>') || text.contains("& ") {
            return Err(format!("bad text {text:?}"));
        }
        let end = rest[start..].find('>').ok_or("unclosed <")? + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().ok_or(format!("stray </{name}>"))?;
            if open != name {
                return Err(format!("<{open}> closed by </{name}>"));
            }
        } else {
            let name = tag
                .trim_end_matches('/')
                .split_whitespace()
                .next()
                .unwrap_or("");
            names.push((stack.len(), name.to_owned()));
            if !tag.ends_with('/') {
                stack.push(name.to_owned());
            }
        }
    }
    if stack.is_empty() {
        Ok(names)
    } else {
        Err(format!("unclosed {stack:?}"))
    }
}

/// The elements of the first `<gpu>`, less the children of `prune` and the clock lists
/// (checked on their own).
fn first_gpu(names: &[(usize, String)], prune: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut pruning: Option<usize> = None;
    let body = names.iter().skip_while(|(_, n)| n != "gpu").skip(1);
    for (depth, name) in body.take_while(|(_, n)| n != "gpu") {
        if pruning.is_some_and(|d| *depth > d) {
            continue;
        }
        pruning = prune.contains(&name.as_str()).then_some(*depth);
        let clock_list = ["supported_mem_clock", "value", "supported_graphics_clock"];
        if !clock_list.contains(&name.as_str()) {
            out.push((*depth, name.clone()));
        }
    }
    out
}

fn host() -> GpuHost {
    GpuHost::a10g("node", 11, "Mon Nov 30 04:43:45 2026")
}

#[test]
fn document_is_well_formed_and_has_our_versions() {
    let mut host = host();
    host.add_process(GpuProcess {
        gpu_index: 0,
        pid: 77,
        process_type: "C".to_owned(),
        name: "a<b>&c".to_owned(),
        used_memory_mib: 10,
    });
    let doc = render(&host);
    well_formed(&doc).unwrap();
    assert!(doc.contains("<driver_version>580.95.05</driver_version>"));
    assert!(doc.contains("<cuda_version>13.0</cuda_version>"));
    assert!(doc.contains(r#"<gpu id="00000000:00:1E.0">"#));
    assert!(doc.contains("<current_mig>N/A</current_mig>"));
    assert!(doc.contains("<process_name>a&lt;b&gt;&amp;c</process_name>"));
    assert!(render(&self::host()).contains("<processes />"));
}

#[test]
fn elements_follow_the_real_v12_document_in_order() {
    let real = fixture("nvidia_smi_q_x_a100_sxm4_telegraf.xml");
    // The real GPU is in MIG mode (an A10G has none) and so reports its rows as N/A.
    let prune = ["mig_devices", "remapped_rows"];
    let theirs = first_gpu(&well_formed(&real).unwrap(), &prune);
    let ours = first_gpu(&well_formed(&render(&host())).unwrap(), &prune);
    assert_eq!(ours, theirs);
}

#[test]
fn supported_clocks_are_the_a10g_list() {
    let real = fixture("nvidia_smi_q_x_a10g_telegraf.xml");
    let clocks = |doc: &str| -> Vec<String> {
        doc.lines()
            .filter(|l| l.contains("supported_graphics_clock") || l.contains("<value>"))
            .map(|l| l.trim().to_owned())
            .collect()
    };
    assert_eq!(clocks(&render(&host())), clocks(&real));
}
