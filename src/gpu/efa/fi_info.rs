//! `fi_info -p efa [-t FI_EP_RDM]`: one `provider:` entry per endpoint the provider offers, its
//! fabric, domain (`rdmap16s27-rdm`, `efa_0-dgrm`: the device and the endpoint kind), version,
//! type and protocol, as libfabric's util/info.c prints them. The EFA devices are the distinct
//! domains without their `-rdm`/`-dgrm` suffix, in the order printed.

use serde::Serialize;

use super::error::EfaParseError;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Endpoint {
    pub provider: String,
    pub fabric: String,
    pub domain: String,
    /// The provider's version as printed (`111.20`, `201.0`): EFA's follows libfabric's.
    pub version: String,
    pub endpoint_type: String,
    pub protocol: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FiInfo {
    pub endpoints: Vec<Endpoint>,
    /// The EFA devices: each domain without its endpoint suffix, once, in order.
    pub devices: Vec<String>,
    /// The first entry's provider version.
    pub version: Option<String>,
    /// What fi_info printed instead of entries (`fi_getinfo: -61`: no EFA provider or device).
    pub error: Option<String>,
}

/// The device a domain names: `rdmap16s27-rdm` -> `rdmap16s27`, `efa_0-dgrm` -> `efa_0`.
pub fn device_of(domain: &str) -> &str {
    domain
        .strip_suffix("-rdm")
        .or_else(|| domain.strip_suffix("-dgrm"))
        .unwrap_or(domain)
}

#[derive(Default)]
struct Draft {
    provider: String,
    fields: Vec<(String, String)>,
}

impl Draft {
    fn finish(self, entry: usize) -> Result<Endpoint, EfaParseError> {
        let field = |name: &'static str| {
            self.fields
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
                .ok_or_else(|| EfaParseError::MissingField {
                    entry,
                    provider: self.provider.clone(),
                    field: name,
                })
        };
        Ok(Endpoint {
            fabric: field("fabric")?,
            domain: field("domain")?,
            version: field("version")?,
            endpoint_type: field("type")?,
            protocol: field("protocol")?,
            provider: self.provider.clone(),
        })
    }
}

/// Parses the entries; indentation is not required (copies in documentation lose it).
pub fn parse_fi_info(text: &str) -> Result<FiInfo, EfaParseError> {
    let mut endpoints = Vec::new();
    let mut draft: Option<Draft> = None;
    let mut error = None;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().to_string();
        match key {
            "provider" => {
                if let Some(done) = draft.take() {
                    endpoints.push(done.finish(endpoints.len() + 1)?);
                }
                draft = Some(Draft {
                    provider: value,
                    fields: Vec::new(),
                });
            }
            "fi_getinfo" => error = Some(line.to_string()),
            _ => {
                if let Some(draft) = draft.as_mut() {
                    draft.fields.push((key.to_string(), value));
                }
            }
        }
    }
    if let Some(done) = draft {
        endpoints.push(done.finish(endpoints.len() + 1)?);
    }
    let mut devices: Vec<String> = Vec::new();
    for endpoint in &endpoints {
        let device = device_of(&endpoint.domain);
        if !devices.iter().any(|d| d == device) {
            devices.push(device.to_string());
        }
    }
    Ok(FiInfo {
        version: endpoints.first().map(|e| e.version.clone()),
        devices,
        endpoints,
        error,
    })
}
