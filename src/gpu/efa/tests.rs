//! The EFA parsers on real outputs (tests/fixtures/real/, sources in its SOURCES.md).

use super::fi_info::parse_fi_info;
use super::pingpong::parse_pingpong;
use crate::gpu::test_fixtures::fixture;

#[test]
fn fi_info_on_a_p4d_lists_its_four_devices() {
    let info = parse_fi_info(&fixture(
        "efa_fi_info_p_efa_t_rdm_p4d_4dev_111.20_fsdp_readme.txt",
    ))
    .unwrap();
    assert_eq!(
        info.devices,
        ["rdmap16s27", "rdmap32s27", "rdmap144s27", "rdmap160s27"]
    );
    assert_eq!(info.version.as_deref(), Some("111.20"));
    assert_eq!(info.endpoints.len(), 4);
    assert_eq!(info.endpoints[2].fabric, "EFA-fe80::102f:29ff:fe3d:1685");
    assert!(
        info.endpoints
            .iter()
            .all(|e| e.endpoint_type == "FI_EP_RDM")
    );
    assert_eq!(info.error, None);
}

#[test]
fn fi_info_of_libfabric_2_counts_a_device_once_across_its_fabrics() {
    // efa-direct and efa RDM endpoints and the DGRAM one: three entries, one device.
    let info = parse_fi_info(&fixture(
        "efa_fi_info_p_efa_1dev_efa_direct_201.0_eks_pod.txt",
    ))
    .unwrap();
    assert_eq!(info.endpoints.len(), 3);
    assert_eq!(info.devices, ["rdmap47s0"]);
    assert_eq!(info.endpoints[0].fabric, "efa-direct");
    assert_eq!(info.endpoints[2].endpoint_type, "FI_EP_DGRAM");
    assert_eq!(info.version.as_deref(), Some("201.0"));
}

#[test]
fn fi_info_of_2020_with_the_rxd_layer_is_one_device() {
    let info = parse_fi_info(&fixture("efa_fi_info_p_efa_1dev_2.0_rxd_libfabric5689.txt")).unwrap();
    assert_eq!(info.devices, ["efa_0"]);
    assert_eq!(info.endpoints[2].provider, "efa;ofi_rxd");
    assert_eq!(info.endpoints[2].protocol, "FI_PROTO_RXD");
}

#[test]
fn fi_info_without_a_provider_says_so_and_a_cut_entry_is_an_error() {
    // The words the p4d README (fixture above's source) gives for a host without EFA.
    let none = parse_fi_info("fi_getinfo: -61\n").unwrap();
    assert!(none.devices.is_empty());
    assert_eq!(none.error.as_deref(), Some("fi_getinfo: -61"));
    let cut = "provider: efa\n    fabric: efa\n    domain: rdmap47s0-rdm\n";
    let error = parse_fi_info(cut).unwrap_err().to_string();
    assert!(error.contains("no `version:` line"), "{error}");
}

#[test]
fn the_loopback_table_of_efa_test_reads_row_by_row() {
    let run = parse_pingpong(&fixture(
        "efa_fi_pingpong_loopback_efa_test_p4d_fsdp_readme.txt",
    ))
    .unwrap();
    assert_eq!(run.rows.len(), 6);
    assert!(run.errors.is_empty());
    let first = &run.rows[0];
    assert_eq!((first.bytes, first.sent, first.acked), (64, 10, 10));
    assert_eq!(first.usec_per_xfer, 1579.10);
    let largest = run.largest().unwrap();
    assert_eq!(largest.bytes, 1 << 20);
    assert_eq!(largest.mb_per_sec, 2614.25);
    assert_eq!(largest.usec_per_xfer, 401.10);
    assert_eq!(largest.seconds, 0.01);
    let other = parse_pingpong(&fixture("efa_fi_pingpong_loopback_efa_test_cdi_sdk.txt")).unwrap();
    assert_eq!(other.largest().unwrap().mb_per_sec, 2359.00);
}

#[test]
fn a_server_table_with_a_leading_space_reads_too() {
    let run = parse_pingpong(&fixture(
        "efa_fi_pingpong_server_2node_libfabric1.18_magic_castle331.txt",
    ))
    .unwrap();
    assert_eq!(run.rows.len(), 6);
    assert_eq!(run.rows[4].bytes, 64 << 10);
    assert_eq!(run.largest().unwrap().mb_per_sec, 2185.67);
}

#[test]
fn a_client_that_cannot_reach_its_server_has_no_rows_and_says_why() {
    let run = parse_pingpong(&fixture(
        "efa_fi_pingpong_client_failed_to_connect_libfabric11256_excerpt.txt",
    ))
    .unwrap();
    assert!(run.rows.is_empty());
    assert_eq!(
        run.errors,
        ["[error] util/pingpong.c:373 : failed to connect: Connection refused"]
    );
}

#[test]
fn a_row_that_is_not_the_table_is_an_error_naming_it() {
    let text = "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec\n1m      10      ?10      20m\n";
    let error = parse_pingpong(text).unwrap_err().to_string();
    assert!(error.contains("1m      10      ?10"), "{error}");
}
