//! The twin's GPU hosts for catalog types other than the lab's g5.xlarge, read back through
//! the project's own nvidia-smi parsers: the counts, names, memory and links they report are
//! the catalog's.

use super::gpu_model::GpuHost;
use super::node_faults::NodeFaults;
use super::smi_output;
use crate::gpu::nvidia_smi::csv::parse_csv;
use crate::gpu::nvidia_smi::list::parse_list;
use crate::gpu::nvidia_smi::nvlink::parse_nvlink_status;
use crate::gpu::nvidia_smi::table::parse_table;
use crate::gpu::nvidia_smi::topology::parse_topology;
use crate::gpu::nvidia_smi::xml::parse_xml;
use crate::lab::gpu_catalog::find;

fn host(instance_type: &str) -> GpuHost {
    let row = find(instance_type).expect("a catalog type");
    GpuHost::of_type(row, "ip-10-1-2-3", 42, "Fri Dec  4 21:00:00 2026").expect("a board")
}

fn smi(host: &GpuHost, args: &[&str]) -> String {
    let out = smi_output::run(host, args);
    assert_eq!(out.exit_code, 0, "{args:?}: {}", out.stderr);
    out.stdout
}

#[test]
fn a_p5_shows_eight_h100s_in_every_format_the_parsers_read() {
    let row = find("p5.48xlarge").unwrap();
    let host = host("p5.48xlarge");
    let table = parse_table(&smi(&host, &[])).unwrap();
    assert_eq!(table.gpus.len(), 8);
    for gpu in &table.gpus {
        assert_eq!(gpu.name, row.gpu.smi_name);
        assert_eq!(gpu.memory_total_mib, row.gpu.smi_memory_mib);
        assert_eq!(gpu.mig_mode.as_deref(), Some("Disabled"));
    }
    assert_eq!(table.gpus[7].bus_id, "00000000:DB:00.0");
    let listed = parse_list(&smi(&host, &["-L"])).unwrap();
    assert_eq!(listed.len(), 8);
    let xml = parse_xml(&smi(&host, &["-q", "-x"])).unwrap();
    assert_eq!(xml.gpus.len(), 8);
    assert_eq!(xml.gpus[0].product_architecture.as_deref(), Some("Hopper"));
    let csv = parse_csv(
        &smi(
            &host,
            &["--query-gpu=index,name,memory.total", "--format=csv"],
        ),
        None,
    )
    .unwrap();
    assert_eq!(csv.len(), 8);
    assert_eq!(csv[3]["memory.total"], 81559);
}

#[test]
fn the_nvlink_types_show_their_switch_fabric_and_links() {
    for (instance_type, links, speed) in [("p5.48xlarge", 18, 26.562), ("p4d.24xlarge", 12, 25.0)] {
        let host = host(instance_type);
        let topology = parse_topology(&smi(&host, &["topo", "-m"])).unwrap();
        assert_eq!(topology.gpus().count(), 8, "{instance_type}");
        assert_eq!(topology.nvlinks("GPU0", "GPU7"), Some(links));
        assert_eq!(topology.nvlinks("GPU5", "GPU2"), Some(links));
        let first = topology.gpus().next().unwrap();
        let last = topology.gpus().last().unwrap();
        assert_eq!(first.numa_affinity.as_deref(), Some("0"));
        assert_eq!(last.numa_affinity.as_deref(), Some("1"));
        let efa = find(instance_type).unwrap().efa_interfaces as usize;
        assert_eq!(topology.nic_names.len(), efa, "{instance_type}");
        let status = parse_nvlink_status(&smi(&host, &["nvlink", "-s"])).unwrap();
        assert_eq!(status.len(), 8);
        assert!(status.iter().all(|g| g.links.len() == links as usize));
        assert_eq!(
            status[4].links[17.min(links as usize - 1)].gbps,
            Some(speed)
        );
    }
    let p5 = host("p5.48xlarge");
    assert_eq!(p5.cpus_of(0), "0-47,96-143");
    assert_eq!(p5.cpus_of(1), "48-95,144-191");
}

#[test]
fn a_pcie_host_has_no_nvlink_and_its_real_bus_layout() {
    let host = host("g6e.48xlarge");
    let topology = parse_topology(&smi(&host, &["topo", "-m"])).unwrap();
    assert_eq!(topology.nvlinks("GPU0", "GPU1"), None);
    assert_eq!(topology.link("GPU0", "GPU1"), Some("NODE"));
    assert_eq!(topology.link("GPU0", "GPU7"), Some("SYS"));
    let status = parse_nvlink_status(&smi(&host, &["nvlink", "-s"])).unwrap();
    assert!(status.iter().all(|g| g.links.is_empty()));
    let table = parse_table(&smi(&host, &[])).unwrap();
    assert_eq!(table.gpus[4].bus_id, "00000000:C6:00.0");
    assert_eq!(table.gpus[0].name, "NVIDIA L40S");
    let p4d = parse_table(&smi(&self::host("p4d.24xlarge"), &[])).unwrap();
    assert_eq!(p4d.gpus[1].bus_id, "00000000:10:1D.0");
}

#[test]
fn a_link_down_shows_in_the_matrix_and_the_link_status() {
    let mut host = host("p5.48xlarge");
    host.gpus[2].nvlink_down = true;
    let topology = parse_topology(&smi(&host, &["topo", "-m"])).unwrap();
    assert_eq!(topology.nvlinks("GPU2", "GPU3"), None);
    assert_eq!(topology.link("GPU2", "GPU3"), Some("NODE"));
    assert_eq!(topology.link("GPU2", "GPU6"), Some("SYS"));
    assert_eq!(topology.nvlinks("GPU0", "GPU1"), Some(18));
    let status = parse_nvlink_status(&smi(&host, &["nvlink", "-s"])).unwrap();
    assert_eq!(status[2].inactive().count(), 18);
    assert_eq!(status[3].inactive().count(), 0);
}

#[test]
fn per_gpu_faults_land_on_their_gpu() {
    let mut faults = NodeFaults::default();
    faults.gpu_mut(3).xids.push((79, std::time::Duration::ZERO));
    let host = host("p5.48xlarge");
    let log = super::kernel_log::dmesg(std::time::Duration::ZERO, &host.gpus, Some(&faults), &[]);
    assert!(log.contains("NVRM: Xid (PCI:0000:5d:00): 79"), "{log}");
    assert!(!log.contains("PCI:0000:18:00"), "{log}");
}
