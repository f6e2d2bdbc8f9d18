//! The aws CLI against `runbook lab serve` on EKS where an independent probe (#54) found the
//! twin answering otherwise than EKS: UpdateNodegroupVersion and UpdateClusterConfig served,
//! add-on versions held to the catalog, `maxUnavailable` held to the maximum size, each in
//! EKS's words (sources in src/sim/aws/eks_versions.rs, eks_cluster_config.rs,
//! addon_catalog.rs and nodegroup_update_config.rs).

use crate::aws_conformance::{CLUSTER, json, lab, refused};

#[test]
fn eks_serves_node_group_version_and_cluster_config_updates_in_eks_words() {
    let Some(lab) = lab() else { return };
    let version = |cluster: &str, ng: &str, extra: &[&str]| {
        let base = [
            "eks",
            "update-nodegroup-version",
            "--cluster-name",
            cluster,
            "--nodegroup-name",
            ng,
        ];
        lab.aws(&[&base[..], extra].concat())
    };
    refused(
        &version(CLUSTER, "nosuch-ng", &[]),
        "ResourceNotFoundException",
        "No node group found for name: nosuch-ng.",
    );
    refused(
        &version("nosuch-cluster", "gpu", &[]),
        "ResourceNotFoundException",
        "No cluster found for name: nosuch-cluster.",
    );
    refused(
        &version(CLUSTER, "gpu", &["--kubernetes-version", "1.99"]),
        "InvalidParameterException",
        "Requested Nodegroup version 1.99 is invalid. Allowed version is 1.35",
    );
    refused(
        &version(CLUSTER, "gpu", &["--release-version", "1.31.3-20250103"]),
        "InvalidParameterException",
        "Requested release version 1.31.3-20250103 is not valid for kubernetes version 1.35.",
    );
    let update = json(&version(
        CLUSTER,
        "primary",
        &["--kubernetes-version", "1.35"],
    ))["update"]
        .clone();
    assert_eq!(
        (update["type"].as_str(), update["status"].as_str()),
        (Some("VersionUpdate"), Some("InProgress"))
    );
    refused(
        &version(CLUSTER, "primary", &[]),
        "ResourceInUseException",
        "Nodegroup primary is currently being updated",
    );
    lab.admin("advance?by=10m");
    let id = update["id"].as_str().unwrap_or_default();
    let done = json(&lab.aws(&[
        "eks",
        "describe-update",
        "--name",
        CLUSTER,
        "--nodegroup-name",
        "primary",
        "--update-id",
        id,
    ]));
    assert_eq!(done["update"]["status"], "Successful");
    let ng = json(&lab.aws(&[
        "eks",
        "describe-nodegroup",
        "--cluster-name",
        CLUSTER,
        "--nodegroup-name",
        "primary",
    ]));
    assert_eq!(
        (
            ng["nodegroup"]["version"].as_str(),
            ng["nodegroup"]["releaseVersion"].as_str(),
            ng["nodegroup"]["status"].as_str()
        ),
        (Some("1.35"), Some("1.35.3-20260320"), Some("ACTIVE"))
    );

    // UpdateClusterConfig: logging, then endpoint access, one kind a call.
    let config = |name: &str, extra: &[&str]| {
        lab.aws(&[&["eks", "update-cluster-config", "--name", name][..], extra].concat())
    };
    let logging = r#"{"clusterLogging":[{"types":["api","audit"],"enabled":true}]}"#;
    refused(
        &config("nosuch-cluster", &["--logging", logging]),
        "ResourceNotFoundException",
        "No cluster found for name: nosuch-cluster.",
    );
    refused(
        &config(
            CLUSTER,
            &[
                "--logging",
                r#"{"clusterLogging":[{"types":["api"],"enabled":true}]}"#,
            ],
        ),
        "InvalidParameterException",
        "No changes needed for the logging config provided",
    );
    let logged = json(&config(CLUSTER, &["--logging", logging]))["update"].clone();
    assert_eq!(
        (logged["type"].as_str(), logged["status"].as_str()),
        (Some("LoggingUpdate"), Some("InProgress"))
    );
    refused(
        &config(
            CLUSTER,
            &["--resources-vpc-config", "endpointPublicAccess=false"],
        ),
        "ResourceInUseException",
        "Cannot EndpointAccessUpdate because cluster myeks5w currently has update in progress",
    );
    lab.admin("advance?by=5m");
    let cluster =
        json(&lab.aws(&["eks", "describe-cluster", "--name", CLUSTER]))["cluster"].clone();
    assert_eq!(cluster["status"], "ACTIVE");
    assert_eq!(
        cluster["logging"]["clusterLogging"][0],
        serde_json::json!({"types": ["api", "audit", "scheduler"], "enabled": true})
    );
    refused(
        &config(
            CLUSTER,
            &[
                "--resources-vpc-config",
                "endpointPublicAccess=true,endpointPrivateAccess=true",
            ],
        ),
        "InvalidParameterException",
        "Cluster is already at the desired configuration with endpointPrivateAccess: true , endpointPublicAccess: true, and Public Endpoint Restrictions: [0.0.0.0/0]",
    );
    let endpoint = json(&config(
        CLUSTER,
        &["--resources-vpc-config", "endpointPublicAccess=false"],
    ))["update"]
        .clone();
    assert_eq!(endpoint["type"], "EndpointAccessUpdate");
    lab.admin("advance?by=5m");
    let cluster =
        json(&lab.aws(&["eks", "describe-cluster", "--name", CLUSTER]))["cluster"].clone();
    assert_eq!(cluster["resourcesVpcConfig"]["endpointPublicAccess"], false);
}

#[test]
fn eks_checks_add_on_versions_and_max_unavailable_in_eks_words() {
    let Some(lab) = lab() else { return };
    refused(
        &lab.aws(&[
            "eks",
            "create-addon",
            "--cluster-name",
            CLUSTER,
            "--addon-name",
            "eks-node-monitoring-agent",
            "--addon-version",
            "v0.0.1-eksbuild.1",
        ]),
        "InvalidParameterException",
        "Addon version specified is not supported",
    );
    refused(
        &lab.aws(&[
            "eks",
            "update-addon",
            "--cluster-name",
            CLUSTER,
            "--addon-name",
            "cert-manager",
            "--addon-version",
            "v0.0.1-eksbuild.1",
        ]),
        "InvalidParameterException",
        "Addon version specified is not supported",
    );
    let exists = lab.aws(&[
        "eks",
        "create-addon",
        "--cluster-name",
        CLUSTER,
        "--addon-name",
        "cert-manager",
    ]);
    refused(
        &exists,
        "ResourceInUseException",
        "operation: Addon already exists.",
    );
    let offered = json(&lab.aws(&[
        "eks",
        "describe-addon-versions",
        "--addon-name",
        "cert-manager",
    ]));
    assert_eq!(
        offered["addons"][0]["addonVersions"][0]["addonVersion"],
        "v1.19.1-eksbuild.1"
    );
    let created = json(&lab.aws(&[
        "eks",
        "create-addon",
        "--cluster-name",
        CLUSTER,
        "--addon-name",
        "eks-node-monitoring-agent",
        "--addon-version",
        "v1.4.0-eksbuild.2",
    ]));
    assert_eq!(created["addon"]["addonVersion"], "v1.4.0-eksbuild.2");

    let node_group = |name: &str, extra: &[&str]| {
        let base = [
            "eks",
            "create-nodegroup",
            "--cluster-name",
            CLUSTER,
            "--nodegroup-name",
            name,
            "--subnets",
            "subnet-0abc9012",
            "--node-role",
            "arn:aws:iam::123456789012:role/node",
            "--scaling-config",
            "minSize=1,maxSize=2,desiredSize=1",
        ];
        lab.aws(&[&base[..], extra].concat())
    };
    let words = "max-unavailable must be within the range 1 and max size of the node group";
    refused(
        &node_group("mu3", &["--update-config", "maxUnavailable=3"]),
        "InvalidParameterException",
        words,
    );
    let kept = json(&node_group("mu2", &["--update-config", "maxUnavailable=2"]));
    assert_eq!(kept["nodegroup"]["updateConfig"]["maxUnavailable"], 2);
    refused(
        &lab.aws(&[
            "eks",
            "update-nodegroup-config",
            "--cluster-name",
            CLUSTER,
            "--nodegroup-name",
            "gpu",
            "--update-config",
            "maxUnavailable=100",
        ]),
        "InvalidParameterException",
        words,
    );
}
