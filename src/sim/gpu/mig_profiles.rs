//! The GPU instance profiles each MIG-capable board offers, as `nvidia-smi mig -lgip` prints
//! them (driver 580's 81-column layout), each table with the real capture it is read from.

/// One profile: its first row and the `CE JPEG OFA` row under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MigProfile {
    /// Without the `MIG ` prefix: `1g.10gb`, `1g.10gb+me`.
    pub(crate) name: &'static str,
    pub(crate) id: u32,
    /// How many fit on an empty GPU (`Free/Total` shows it twice while none is made).
    pub(crate) instances: u32,
    /// GiB as printed (the driver rounds to the hundredth: `9.75`, `140.00`).
    pub(crate) memory_gib: &'static str,
    pub(crate) sm: u32,
    pub(crate) dec: u32,
    pub(crate) enc: u32,
    pub(crate) ce: u32,
    pub(crate) jpeg: u32,
    pub(crate) ofa: u32,
}

/// A board's profiles and where they were read.
pub(crate) struct MigProfiles {
    pub(crate) smi_name: &'static str,
    pub(crate) profiles: &'static [MigProfile],
    /// Where the profiles were read (tests check every table cites one).
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "a citation beside the data, read by people and tests"
        )
    )]
    pub(crate) source: &'static str,
}

const fn profile(
    name: &'static str,
    id: u32,
    instances: u32,
    memory_gib: &'static str,
    [sm, dec, enc]: [u32; 3],
    [ce, jpeg, ofa]: [u32; 3],
) -> MigProfile {
    MigProfile {
        name,
        id,
        instances,
        memory_gib,
        sm,
        dec,
        enc,
        ce,
        jpeg,
        ofa,
    }
}

pub(crate) const TABLES: &[MigProfiles] = &[
    MigProfiles {
        smi_name: "NVIDIA H200",
        profiles: &[
            profile("1g.18gb", 19, 7, "16.00", [16, 1, 0], [1, 1, 0]),
            profile("1g.18gb+me", 20, 1, "16.00", [16, 1, 0], [1, 1, 1]),
            profile("1g.35gb", 15, 4, "32.50", [26, 1, 0], [1, 1, 0]),
            profile("2g.35gb", 14, 3, "32.50", [32, 2, 0], [2, 2, 0]),
            profile("3g.71gb", 9, 2, "69.75", [60, 3, 0], [3, 3, 0]),
            profile("4g.71gb", 5, 1, "69.75", [64, 4, 0], [4, 4, 0]),
            profile("7g.141gb", 0, 1, "140.00", [132, 7, 0], [8, 7, 1]),
        ],
        source: "tests/fixtures/real/nvidia_smi_mig_lgip_h200_580.159_vm.txt (an H200 SXM, driver 580.159.04, captured 2026-12-04)",
    },
    MigProfiles {
        smi_name: "NVIDIA H100 80GB HBM3",
        profiles: &[
            profile("1g.10gb", 19, 7, "9.75", [16, 1, 0], [1, 1, 0]),
            profile("1g.10gb+me", 20, 1, "9.75", [16, 1, 0], [1, 1, 1]),
            profile("1g.20gb", 15, 4, "19.62", [26, 1, 0], [1, 1, 0]),
            profile("2g.20gb", 14, 3, "19.62", [32, 2, 0], [2, 2, 0]),
            profile("3g.40gb", 9, 2, "39.50", [60, 3, 0], [3, 3, 0]),
            profile("4g.40gb", 5, 1, "39.50", [64, 4, 0], [4, 4, 0]),
            profile("7g.80gb", 0, 1, "79.25", [132, 7, 0], [8, 7, 1]),
        ],
        source: "stackhpc/ansible-slurm-appliance@f49fc24f6818ea960a28aa2e41910532c86214f9:docs/mig.md (4x H100 SXM5 80GB, `sudo nvidia-smi mig -lgip`, the 79-column layout of an older driver)",
    },
    MigProfiles {
        smi_name: "NVIDIA A100-SXM4-40GB",
        profiles: &[
            profile("1g.5gb", 19, 7, "4.75", [14, 0, 0], [1, 0, 0]),
            profile("1g.5gb+me", 20, 1, "4.75", [14, 1, 0], [1, 1, 1]),
            profile("1g.10gb", 15, 4, "9.75", [14, 1, 0], [1, 0, 0]),
            profile("2g.10gb", 14, 3, "9.75", [28, 1, 0], [2, 0, 0]),
            profile("3g.20gb", 9, 2, "19.62", [42, 2, 0], [3, 0, 0]),
            profile("4g.20gb", 5, 1, "19.62", [56, 2, 0], [4, 0, 0]),
            profile("7g.40gb", 0, 1, "39.38", [98, 5, 0], [7, 1, 1]),
        ],
        source: "ssup2/blog-software@de1b1fe3b8162a4ef581d0b58ce646f5ef6eae05:content/docs/theory-analysis/nvidia-gpu-sharing/index.md (an A100-SXM4-40GB, driver 580.126.09, `nvidia-smi mig -i 0 -lgip`)",
    },
    MigProfiles {
        smi_name: "NVIDIA A100-SXM4-80GB",
        profiles: &[
            profile("1g.10gb", 19, 7, "9.50", [14, 0, 0], [1, 0, 0]),
            profile("1g.10gb+me", 20, 1, "9.50", [14, 1, 0], [1, 1, 1]),
            profile("2g.20gb", 14, 3, "19.50", [28, 1, 0], [2, 0, 0]),
            profile("3g.40gb", 9, 2, "39.25", [42, 2, 0], [3, 0, 0]),
            profile("4g.40gb", 5, 1, "39.25", [56, 2, 0], [4, 0, 0]),
            profile("7g.80gb", 0, 1, "78.75", [98, 5, 0], [7, 1, 1]),
        ],
        source: "a published HGX A100 8-GPU (A100-80G) `nvidia-smi mig -lgip` capture of a driver before R525 (no 1g.20gb, which R525 added; no driver-580 capture of this board was found): its six profiles as printed there",
    },
    MigProfiles {
        smi_name: "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        profiles: &[
            profile("1g.24gb", 14, 4, "23.62", [46, 1, 1], [1, 1, 0]),
            profile("1g.24gb+me", 21, 1, "23.62", [46, 1, 1], [1, 1, 1]),
            profile("1g.24gb+gfx", 47, 4, "23.62", [46, 1, 1], [1, 1, 0]),
            profile("1g.24gb+me.all", 65, 1, "23.62", [46, 4, 4], [1, 4, 1]),
            profile("1g.24gb-me", 67, 4, "23.62", [46, 0, 0], [1, 0, 0]),
            profile("2g.48gb", 5, 2, "47.38", [94, 2, 2], [2, 2, 0]),
            profile("2g.48gb+gfx", 35, 2, "47.38", [94, 2, 2], [2, 2, 0]),
            profile("2g.48gb+me.all", 64, 1, "47.38", [94, 4, 4], [2, 4, 1]),
            profile("2g.48gb-me", 66, 2, "47.38", [94, 0, 0], [2, 0, 0]),
            profile("4g.96gb", 0, 1, "95.12", [188, 4, 4], [4, 4, 1]),
            profile("4g.96gb+gfx", 32, 1, "95.12", [188, 4, 4], [4, 4, 1]),
        ],
        source: "kubesimplify/website@a50e5db2cb81cf9c55b409acf48ffc455795d0e1:content/blog/slicing-gpus-in-kubernetes-with-nvidia-mig.md (RTX PRO 6000 Blackwell Server Edition, driver 610.43.02, `nvidia-smi mig -i 0 -lgip`); the 1g rows agree with GoogleCloudPlatform/container-engine-accelerators#564",
    },
];

/// The profiles of the board nvidia-smi names `smi_name`; `None` for a GPU without MIG.
pub(crate) fn profiles_of(smi_name: &str) -> Option<&'static MigProfiles> {
    TABLES.iter().find(|t| t.smi_name == smi_name)
}

const RULE: &str =
    "+-------------------------------------------------------------------------------+\n";

/// `nvidia-smi mig -lgip` for GPUs `(index, smi_name)` (every one MIG-capable): the header
/// once, then each GPU's profiles in the table's order.
pub(crate) fn render(gpus: &[(u32, &str)]) -> String {
    let mut out = String::new();
    out.push_str(RULE);
    out.push_str(
        "| GPU instance profiles:                                                        |\n",
    );
    out.push_str(
        "| GPU   Name               ID    Instances   Memory     P2P    SM    DEC   ENC  |\n",
    );
    out.push_str(
        "|                                Free/Total   GiB              CE    JPEG  OFA  |\n",
    );
    out.push_str(
        "|===============================================================================|\n",
    );
    let mut first = true;
    for (index, name) in gpus {
        let Some(table) = profiles_of(name) else {
            continue;
        };
        for p in table.profiles {
            if !first {
                out.push_str(RULE);
            }
            first = false;
            let instances = format!("{}/{}", p.instances, p.instances);
            out.push_str(&format!(
                "|{index:>4}  {:<18}{:>4}     {instances:<11}{:<11}{:<7}{:<7}{:<6}{:<4}|\n",
                format!("MIG {}", p.name),
                p.id,
                p.memory_gib,
                "No",
                p.sm,
                p.dec,
                p.enc,
            ));
            out.push_str(&format!(
                "|{:62}{:>2}     {:<6}{:<4}|\n",
                "", p.ce, p.jpeg, p.ofa
            ));
        }
    }
    out.push_str(RULE);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::nvidia_smi::parse_mig_profiles;
    use crate::sim::gpu::boards::BOARDS;

    #[test]
    fn every_mig_board_has_its_profiles_and_no_other_board_does() {
        for board in BOARDS {
            assert_eq!(
                profiles_of(board.smi_name).is_some(),
                board.mig,
                "{}",
                board.smi_name
            );
        }
        for table in TABLES {
            assert!(!table.source.is_empty(), "{}", table.smi_name);
        }
    }

    #[test]
    fn the_h200_table_is_the_real_capture_byte_for_byte() {
        let real = crate::gpu::test_fixtures::fixture("nvidia_smi_mig_lgip_h200_580.159_vm.txt");
        assert_eq!(render(&[(0, "NVIDIA H200")]), real);
    }

    #[test]
    fn every_table_reads_back_through_the_parser_as_it_was_written() {
        for table in TABLES {
            let text = render(&[(0, table.smi_name), (1, table.smi_name)]);
            assert!(text.lines().all(|l| l.chars().count() == 81), "{text}");
            let parsed = parse_mig_profiles(&text).expect("parses");
            assert_eq!(parsed.len(), table.profiles.len() * 2, "{}", table.smi_name);
            for (read, written) in parsed.iter().zip(table.profiles.iter().cycle()) {
                assert_eq!(read.name, format!("MIG {}", written.name));
                assert_eq!(read.id, written.id);
                assert_eq!(read.instances_total, written.instances);
                assert_eq!(read.sm, written.sm);
                assert_eq!(read.ofa, Some(written.ofa));
                assert_eq!(
                    read.memory_gib,
                    written.memory_gib.parse::<f64>().expect("a number")
                );
            }
            assert_eq!(parsed.last().map(|p| p.gpu), Some(1));
        }
    }
}
