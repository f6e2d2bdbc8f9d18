//! The twin's nvidia-smi command line: outputs, errors and exit codes per argv.

use super::super::super::gpu_model::GpuHost;
use super::*;

fn host() -> GpuHost {
    GpuHost::a10g("ip-192-168-12-34", 2024, "Mon Nov 30 04:43:45 2026")
}

#[test]
fn no_arguments_is_the_table() {
    let out = run(&host(), &[]);
    assert_eq!(out.exit_code, 0);
    assert!(out.stdout.contains("NVIDIA A10G"));
    assert!(out.stdout.contains("No running processes found"));
}

#[test]
fn list_gpus() {
    let host = host();
    let out = run(&host, &["-L"]);
    assert_eq!(
        out.stdout,
        format!("GPU 0: NVIDIA A10G (UUID: {})\n", host.gpus[0].uuid)
    );
    assert_eq!(run(&host, &["--list-gpus"]), out);
}

#[test]
fn query_gpu_csv() {
    let out = run(
        &host(),
        &[
            "--query-gpu=name,memory.total,mig.mode.current",
            "--format=csv",
        ],
    );
    assert_eq!(out.exit_code, 0);
    assert_eq!(
        out.stdout,
        "name, memory.total [MiB], mig.mode.current\nNVIDIA A10G, 23028 MiB, [N/A]\n"
    );
    let bare = run(
        &host(),
        &["--format=csv,noheader,nounits", "--query-gpu=memory.total"],
    );
    assert_eq!(bare.stdout, "23028\n");
}

#[test]
fn unknown_field_exits_2() {
    let out = run(&host(), &["--query-gpu=index,foo", "--format=csv"]);
    assert_eq!(out.exit_code, EXIT_INVALID_ARGUMENT);
    assert_eq!(
        out.stdout,
        "Field \"foo\" is not a valid field to query.\n\n"
    );
}

#[test]
fn query_without_format_is_rejected() {
    for args in [
        &["--query-gpu=name"][..],
        &["--format=csv"],
        &["--query-gpu=name", "--format=noheader"],
        &["-x"],
        &["-L", "-q"],
    ] {
        let out = run(&host(), args);
        assert_eq!(out.exit_code, EXIT_INVALID_ARGUMENT, "{args:?}");
        assert_eq!(out.stdout, INVALID_COMBINATION, "{args:?}");
    }
}

#[test]
fn unknown_option_is_named() {
    let out = run(&host(), &["--bogus"]);
    assert_eq!(out.exit_code, EXIT_INVALID_ARGUMENT);
    assert_eq!(
        out.stdout,
        "ERROR: Option --bogus is not recognized. Please run 'nvidia-smi -h' for help.\n"
    );
}

#[test]
fn unsimulated_options_are_a_bad_combination() {
    for args in [
        &["-pm", "1"][..],
        &["-pl", "250"],
        &["dmon"],
        &["nvlink", "-e"],
    ] {
        assert_eq!(run(&host(), args).stdout, INVALID_COMBINATION, "{args:?}");
    }
}

#[test]
fn display_types_select_sections_of_the_query() {
    let mut host = host();
    host.gpus[0].remapped_rows_pending = true;
    let out = run(&host, &["-q", "-d", "ECC,row_remapper,PAGE_RETIREMENT"]);
    assert_eq!(out.exit_code, 0);
    let text = &out.stdout;
    assert!(
        text.contains(
            "Attached GPUs                             : 1\nGPU 00000000:00:1E.0\n    ECC Mode\n"
        ),
        "{text}"
    );
    for section in ["ECC Errors", "Retired Pages", "Remapped Rows"] {
        assert!(
            text.contains(&format!("\n    {section}\n")),
            "{section}: {text}"
        );
    }
    for absent in [
        "Product Name",
        "FB Memory Usage",
        "Temperature",
        "Processes",
    ] {
        assert!(!text.contains(absent), "{absent}: {text}");
    }
    assert!(
        text.contains("        Pending                           : Yes\n"),
        "{text}"
    );
    assert_eq!(
        run(&host, &["-q", "--display=ECC,ROW_REMAPPER,PAGE_RETIREMENT"]),
        out
    );
    // The order of the full log, whatever the order asked.
    assert_eq!(
        run(&host, &["-q", "-d", "PAGE_RETIREMENT,ECC,ROW_REMAPPER"]),
        out
    );
}

#[test]
fn display_types_the_twin_does_not_print_are_a_bad_combination() {
    for args in [
        &["-q", "-d", "POWER"][..],
        &["-q", "-d"],
        &["-d", "ECC"],
        &["-q", "-x", "-d", "ECC"],
    ] {
        assert_eq!(run(&host(), args).stdout, INVALID_COMBINATION, "{args:?}");
    }
}

#[test]
fn remapped_rows_query() {
    let mut host = host();
    host.gpus[0].remapped_rows_pending = true;
    host.gpus[0].remapped_rows_uncorrectable = 2;
    let out = run(
        &host,
        &[
            "--query-remapped-rows=gpu_bus_id,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure",
            "--format=csv",
        ],
    );
    assert_eq!(out.exit_code, 0);
    assert_eq!(
        out.stdout,
        "gpu_bus_id, remapped_rows.correctable, remapped_rows.uncorrectable, remapped_rows.pending, remapped_rows.failure\n\
         00000000:00:1E.0, 0, 2, 1, 0\n"
    );
    let bad = run(
        &host,
        &["--query-remapped-rows=memory.total", "--format=csv"],
    );
    assert_eq!(
        bad.exit_code, EXIT_INVALID_ARGUMENT,
        "a --query-gpu field is not a row field"
    );
    let both = run(
        &host,
        &[
            "--query-remapped-rows=gpu_uuid",
            "--query-gpu=name",
            "--format=csv",
        ],
    );
    assert_eq!(both.stdout, INVALID_COMBINATION);
}

#[test]
fn mig_listing_finds_nothing_on_an_a10g() {
    let out = run(&host(), &["mig", "-lgip"]);
    assert_eq!(out.exit_code, EXIT_NOT_FOUND);
    assert_eq!(out.stdout, "No MIG-supported devices found.\n");
}

#[test]
fn mig_listing_on_a_p5_shows_each_h100s_profiles() {
    let row = crate::lab::gpu_catalog::find("p5.48xlarge").expect("in the catalog");
    let host = GpuHost::of_type(row, "ip-10-0-1-2", 7, "Mon Nov 30 04:43:45 2026").expect("a host");
    let out = run(&host, &["mig", "-lgip"]);
    assert_eq!(out.exit_code, 0);
    let profiles = crate::gpu::nvidia_smi::parse_mig_profiles(&out.stdout).expect("parses");
    assert_eq!(profiles.len(), 8 * 7);
    assert_eq!(profiles[0].name, "MIG 1g.10gb");
    assert_eq!(profiles[6].name, "MIG 7g.80gb");
    assert_eq!(profiles[6].sm, 132);
    let one = run(&host, &["mig", "-i", "3", "-lgip"]);
    let profiles = crate::gpu::nvidia_smi::parse_mig_profiles(&one.stdout).expect("parses");
    assert!(
        profiles.len() == 7 && profiles.iter().all(|p| p.gpu == 3),
        "{}",
        one.stdout
    );
    assert_eq!(
        run(&host, &["mig", "-cgi", "19"]).stdout,
        INVALID_COMBINATION
    );
}

#[test]
fn xml_either_order() {
    let a = run(&host(), &["-q", "-x"]);
    assert_eq!(a.exit_code, 0);
    assert!(a.stdout.starts_with("<?xml"));
    assert_eq!(run(&host(), &["-x", "-q"]), a);
}

#[test]
fn id_selects_a_gpu() {
    let host = host();
    assert_eq!(run(&host, &["-i", "0", "-L"]), run(&host, &["-L"]));
    let uuid = format!("--id={}", host.gpus[0].uuid);
    assert_eq!(run(&host, &[&uuid, "-L"]), run(&host, &["-L"]));
    assert_eq!(run(&host, &["-i", "3", "-L"]).exit_code, EXIT_NOT_FOUND);
}

#[test]
fn version_and_help() {
    let version = run(&host(), &["--version"]);
    assert_eq!(
        version.stdout,
        "NVIDIA-SMI version  : 580.95.05\nNVML version        : 580.95\n\
         DRIVER version      : 580.95.05\nCUDA Version        : 13.0\n"
    );
    let help = run(&host(), &["-h"]);
    assert!(
        help.stdout
            .starts_with("NVIDIA System Management Interface -- v580.95.05\n")
    );
}

#[test]
fn same_input_same_bytes() {
    for args in [
        &[][..],
        &["-q", "-x"],
        &["-q"],
        &["--query-gpu=uuid,serial", "--format=csv"],
    ] {
        assert_eq!(run(&host(), args), run(&host(), args));
    }
}
