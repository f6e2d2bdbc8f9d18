//! `nvidia-smi mig -lgip`: the GPU instance profiles a MIG-capable GPU offers.

use serde::Serialize;

use super::error::ParseError;

/// One profile: its first table row and the `CE JPEG OFA` continuation row under it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MigProfile {
    pub gpu: u32,
    /// As printed, e.g. `MIG 1g.10gb` or `MIG 1g.12gb+me`.
    pub name: String,
    pub id: u32,
    pub instances_free: u32,
    pub instances_total: u32,
    pub memory_gib: f64,
    /// `Yes`/`No`; `None` for anything else.
    pub p2p: Option<bool>,
    pub sm: u32,
    pub dec: u32,
    pub enc: u32,
    pub ce: Option<u32>,
    pub jpeg: Option<u32>,
    pub ofa: Option<u32>,
}

const PROFILE_ROW: &str = "a profile row \"| <gpu>  MIG <name>  <id>  <free>/<total>  <GiB>  <P2P>  <SM>  <DEC>  <ENC> |\" \
     or its \"| <CE> <JPEG> <OFA> |\" continuation";

/// The profiles in `nvidia-smi mig -lgip` output. `No MIG-supported devices found.` and
/// `No MIG-enabled devices found.` are an empty list.
pub fn parse_mig_profiles(text: &str) -> Result<Vec<MigProfile>, ParseError> {
    let mut profiles: Vec<MigProfile> = Vec::new();
    let mut saw_table = false;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let unexpected = |expected: &str| ParseError::Unexpected {
            line: index + 1,
            text: raw.to_string(),
            expected: expected.to_string(),
        };
        if line.is_empty() || line.starts_with('+') || line.starts_with("|=") {
            continue;
        }
        let Some(inner) = line.strip_prefix('|') else {
            if is_no_devices(line) {
                continue;
            }
            return Err(unexpected("the `nvidia-smi mig -lgip` table"));
        };
        saw_table = true;
        let cells: Vec<&str> = inner.trim_end_matches('|').split_whitespace().collect();
        if cells.is_empty() || is_heading(&cells) {
            continue;
        }
        if let Some(profile) = profile_row(&cells) {
            profiles.push(profile);
        } else if let Some([ce, jpeg, ofa]) = continuation_row(&cells)
            && let Some(last) = profiles.last_mut()
            && last.ce.is_none()
        {
            (last.ce, last.jpeg, last.ofa) = (Some(ce), Some(jpeg), Some(ofa));
        } else {
            return Err(unexpected(PROFILE_ROW));
        }
    }
    if !saw_table && !text.lines().any(|l| is_no_devices(l.trim())) {
        return Err(ParseError::Empty {
            expected: "the `nvidia-smi mig -lgip` table or `No MIG-supported devices found.`"
                .into(),
        });
    }
    Ok(profiles)
}

fn is_no_devices(line: &str) -> bool {
    line.starts_with("No MIG-supported devices found")
        || line.starts_with("No MIG-enabled devices found")
}

fn is_heading(cells: &[&str]) -> bool {
    matches!(cells, ["GPU", "instance", "profiles:", ..])
        || matches!(cells, ["GPU", "Name", ..])
        || cells.contains(&"Free/Total")
}

/// `0 MIG 1g.10gb 19 7/7 9.62 No 16 1 0`; the name is every token between the GPU index
/// and the profile id.
fn profile_row(cells: &[&str]) -> Option<MigProfile> {
    let slash = cells.iter().position(|c| c.contains('/'))?;
    let [memory, p2p, sm, dec, enc] = cells.get(slash + 1..)? else {
        return None;
    };
    if slash < 3 {
        return None;
    }
    let (free, total) = cells[slash].split_once('/')?;
    Some(MigProfile {
        gpu: cells[0].parse().ok()?,
        name: cells[1..slash - 1].join(" "),
        id: cells[slash - 1].parse().ok()?,
        instances_free: free.parse().ok()?,
        instances_total: total.parse().ok()?,
        memory_gib: memory.parse().ok()?,
        p2p: match *p2p {
            "Yes" => Some(true),
            "No" => Some(false),
            _ => None,
        },
        sm: sm.parse().ok()?,
        dec: dec.parse().ok()?,
        enc: enc.parse().ok()?,
        ce: None,
        jpeg: None,
        ofa: None,
    })
}

fn continuation_row(cells: &[&str]) -> Option<[u32; 3]> {
    let [ce, jpeg, ofa] = cells else { return None };
    Some([ce.parse().ok()?, jpeg.parse().ok()?, ofa.parse().ok()?])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three of the seven profiles in a published GH200 96GB `mig -lgip` capture.
    const GH200: &str = "\
+-----------------------------------------------------------------------------+
| GPU instance profiles:                                                      |
| GPU   Name             ID    Instances   Memory     P2P    SM    DEC   ENC  |
|                              Free/Total   GiB              CE    JPEG  OFA  |
|=============================================================================|
|   0  MIG 1g.12gb       19     7/7        11.00      No     16     1     0   |
|                                                             1     1     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 1g.12gb+me    20     1/1        11.00      No     16     1     0   |
|                                                             1     1     1   |
+-----------------------------------------------------------------------------+
|   0  MIG 7g.96gb        0     1/1        93.00      No     132    7     0   |
|                                                             8     7     1   |
+-----------------------------------------------------------------------------+
";

    #[test]
    fn profiles_with_continuation_rows() {
        let profiles = parse_mig_profiles(GH200).unwrap();
        assert_eq!(profiles.len(), 3);
        assert_eq!(
            profiles[0],
            MigProfile {
                gpu: 0,
                name: "MIG 1g.12gb".into(),
                id: 19,
                instances_free: 7,
                instances_total: 7,
                memory_gib: 11.0,
                p2p: Some(false),
                sm: 16,
                dec: 1,
                enc: 0,
                ce: Some(1),
                jpeg: Some(1),
                ofa: Some(0),
            }
        );
        assert_eq!(profiles[1].name, "MIG 1g.12gb+me");
        assert_eq!(profiles[1].ofa, Some(1));
        assert_eq!(
            (profiles[2].name.as_str(), profiles[2].id),
            ("MIG 7g.96gb", 0)
        );
        assert_eq!((profiles[2].sm, profiles[2].ce), (132, Some(8)));
    }

    #[test]
    fn wider_newer_layout_without_continuations() {
        let text = "\
| GPU instance profiles:                                                        |
| GPU   Name               ID    Instances   Memory     P2P    SM    DEC   ENC  |
|                                Free/Total   GiB              CE    JPEG  OFA  |
|===============================================================================|
|   1  MIG 1g.64gb          0     1/1        63.00      Yes    70     0     0   |
";
        let profiles = parse_mig_profiles(text).unwrap();
        assert_eq!(profiles[0].gpu, 1);
        assert_eq!(profiles[0].p2p, Some(true));
        assert_eq!(profiles[0].ce, None);
    }

    #[test]
    fn no_mig_devices_is_empty() {
        assert!(
            parse_mig_profiles("No MIG-supported devices found.\n")
                .unwrap()
                .is_empty()
        );
        assert!(
            parse_mig_profiles("No MIG-enabled devices found.\n")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn failures_and_garbled_rows_are_errors() {
        let err = parse_mig_profiles("Failed to display GPU instance profiles: Unknown Error\n")
            .unwrap_err();
        assert!(
            matches!(err, ParseError::Unexpected { line: 1, .. }),
            "{err}"
        );
        let garbled = GH200.replace("11.00      No     16", "11.00      No     xx");
        let err = parse_mig_profiles(&garbled).unwrap_err();
        assert!(
            matches!(err, ParseError::Unexpected { line: 6, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("a profile row"), "{err}");
        assert!(matches!(
            parse_mig_profiles("").unwrap_err(),
            ParseError::Empty { .. }
        ));
    }
}
