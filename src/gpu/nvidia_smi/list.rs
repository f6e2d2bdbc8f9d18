//! `nvidia-smi -L`: one line per GPU, with its MIG devices indented below it.

use serde::Serialize;

use super::error::ParseError;

/// A `GPU <n>: <name> (UUID: GPU-...)` line and the MIG devices listed under it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListedGpu {
    pub index: u32,
    pub name: String,
    pub uuid: String,
    pub mig_devices: Vec<MigDevice>,
}

/// A `  MIG <profile> Device <n>: (UUID: MIG-...)` line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MigDevice {
    pub profile: String,
    pub device: u32,
    pub uuid: String,
}

const GPU_SHAPE: &str = "\"GPU <index>: <name> (UUID: GPU-...)\"";
const MIG_SHAPE: &str = "\"MIG <profile> Device <n>: (UUID: MIG-...)\" under a GPU line";

/// Every GPU in `nvidia-smi -L` output. `No devices were found` is an empty list.
pub fn parse_list(text: &str) -> Result<Vec<ListedGpu>, ParseError> {
    let mut gpus: Vec<ListedGpu> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with("No devices were found") {
            continue;
        }
        let unexpected = |expected: &str| ParseError::Unexpected {
            line: line_no,
            text: raw.to_string(),
            expected: expected.to_string(),
        };
        if let Some(rest) = line.strip_prefix("GPU ") {
            gpus.push(parse_gpu(rest).ok_or_else(|| unexpected(GPU_SHAPE))?);
        } else if let Some(rest) = line.strip_prefix("MIG ") {
            let device = parse_mig(rest).ok_or_else(|| unexpected(MIG_SHAPE))?;
            gpus.last_mut()
                .ok_or_else(|| unexpected(MIG_SHAPE))?
                .mig_devices
                .push(device);
        } else {
            return Err(unexpected(GPU_SHAPE));
        }
    }
    Ok(gpus)
}

/// `0: NVIDIA H200 (UUID: GPU-...)`
fn parse_gpu(rest: &str) -> Option<ListedGpu> {
    let (index, rest) = rest.split_once(':')?;
    let (name, uuid) = split_uuid(rest)?;
    Some(ListedGpu {
        index: index.trim().parse().ok()?,
        name: name.to_string(),
        uuid,
        mig_devices: Vec::new(),
    })
}

/// `1c.3g.71gb  Device  0: (UUID: MIG-...)`
fn parse_mig(rest: &str) -> Option<MigDevice> {
    let (profile, rest) = rest.split_once(" Device ")?;
    let (device, rest) = rest.split_once(':')?;
    let (nothing, uuid) = split_uuid(rest)?;
    if !nothing.is_empty() {
        return None;
    }
    Some(MigDevice {
        profile: profile.trim().to_string(),
        device: device.trim().parse().ok()?,
        uuid,
    })
}

/// `<before> (UUID: <uuid>)` -> (`<before>` trimmed, `<uuid>`).
fn split_uuid(text: &str) -> Option<(&str, String)> {
    let (before, after) = text.rsplit_once("(UUID:")?;
    let uuid = after.trim().strip_suffix(')')?.trim();
    (!uuid.is_empty()).then(|| (before.trim(), uuid.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::test_fixtures::fixture;

    #[test]
    fn single_gpus() {
        for (file, name) in [
            ("nvidia_smi_L_h100_590.txt", "NVIDIA H100 80GB HBM3"),
            ("nvidia_smi_L_h200_590.txt", "NVIDIA H200"),
        ] {
            let text = fixture(file);
            let gpus = parse_list(&text).unwrap();
            assert_eq!(gpus.len(), 1, "{file}");
            assert_eq!(gpus[0].index, 0);
            assert_eq!(gpus[0].name, name);
            assert_eq!(gpus[0].uuid, "GPU-00000000-0000-0000-0000-000000000000");
            assert!(gpus[0].mig_devices.is_empty());
        }
    }

    #[test]
    fn h200_mig_devices() {
        let text = fixture("nvidia_smi_L_h200_mig_590.txt");
        let gpus = parse_list(&text).unwrap();
        assert_eq!(gpus.len(), 1);
        let migs = &gpus[0].mig_devices;
        assert_eq!(migs.len(), 5);
        assert_eq!(
            migs[0],
            MigDevice {
                profile: "1c.3g.71gb".into(),
                device: 0,
                uuid: "MIG-00000000-0000-0000-0000-000000000000".into()
            }
        );
        assert_eq!(migs[2].profile, "2g.35gb");
        assert_eq!(migs[4].profile, "1g.18gb");
        assert_eq!(migs[4].device, 4);
        assert_eq!(migs[4].uuid, "MIG-00000004-0000-0000-0000-000000000004");
    }

    #[test]
    fn several_gpus_and_old_mig_uuids() {
        let text = "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-aaaa)\n  \
                    MIG 3g.20gb Device 0: (UUID: MIG-GPU-aaaa/1/0)\n\
                    GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-bbbb)\n";
        let gpus = parse_list(text).unwrap();
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[0].mig_devices[0].uuid, "MIG-GPU-aaaa/1/0");
        assert_eq!(gpus[1].index, 1);
        assert!(gpus[1].mig_devices.is_empty());
    }

    #[test]
    fn no_devices() {
        assert!(parse_list("No devices were found\n").unwrap().is_empty());
        assert!(parse_list("").unwrap().is_empty());
    }

    #[test]
    fn errors_name_line_and_shape() {
        let err =
            parse_list("GPU 0: NVIDIA A10G (UUID: GPU-1)\nNVIDIA-SMI has failed\n").unwrap_err();
        assert!(
            matches!(err, ParseError::Unexpected { line: 2, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("NVIDIA-SMI has failed"), "{err}");
        let err = parse_list("  MIG 1g.10gb Device 0: (UUID: MIG-1)\n").unwrap_err();
        assert!(err.to_string().contains("under a GPU line"), "{err}");
        let err = parse_list("GPU x: NVIDIA A10G (UUID: GPU-1)\n").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("line 1: expected \"GPU <index>"),
            "{err}"
        );
    }
}
