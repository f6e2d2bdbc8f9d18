//! The certificate authorities the AWS clients trust instead of the system's roots: the lab
//! twin's own CA, or the bundle `AWS_CA_BUNDLE` names, which the aws CLI reads the same way (a
//! TLS-inspecting proxy's CA; the CA file `lab serve --write-env` writes beside its env file).

use std::path::Path;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// The variable the aws CLI and runbook read a CA bundle's path from.
pub const CA_BUNDLE_VARIABLE: &str = "AWS_CA_BUNDLE";

/// PEM certificates trusted in place of the system's roots.
#[derive(Debug, Clone)]
pub struct TrustedCa {
    pem: String,
    /// Where they came from, for messages.
    pub origin: String,
}

impl TrustedCa {
    /// The lab twin's CA, given by the process that started the twin.
    pub fn lab(pem: &str) -> Self {
        Self {
            pem: pem.to_string(),
            origin: "the lab twin's CA".into(),
        }
    }

    /// The bundle `AWS_CA_BUNDLE` names, when it names one. An unreadable file, or one without
    /// a certificate, is an error naming it: every call would otherwise fail its handshake.
    pub fn from_environment() -> Result<Option<Self>, String> {
        match std::env::var_os(CA_BUNDLE_VARIABLE) {
            Some(path) if !path.is_empty() => Self::from_file(Path::new(&path)).map(Some),
            _ => Ok(None),
        }
    }

    pub fn from_file(path: &Path) -> Result<Self, String> {
        let pem = crate::sandbox::read_text_file(path, crate::sandbox::TEXT_FILE_LIMIT)
            .map_err(|e| {
                format!(
                    "{CA_BUNDLE_VARIABLE}={}: cannot read the CA bundle: {e}; name a PEM file of certificates, or unset it to trust the system's roots",
                    path.display()
                )
            })?;
        let refuse = |why: String| {
            format!(
                "{CA_BUNDLE_VARIABLE}={}: {why}; name a PEM bundle of CA certificates, or unset it to trust the system's roots",
                path.display()
            )
        };
        // Checked here as the SDK will read it, which panics on what it cannot parse.
        let certificates = CertificateDer::pem_slice_iter(pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| refuse(format!("a certificate in it cannot be read ({e})")))?;
        if certificates.is_empty() {
            return Err(refuse(
                "the file holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into(),
            ));
        }
        let mut roots = rustls::RootCertStore::empty();
        for (n, certificate) in certificates.into_iter().enumerate() {
            roots.add(certificate).map_err(|e| {
                refuse(format!(
                    "certificate {} is not one a CA can be ({e})",
                    n + 1
                ))
            })?;
        }
        Ok(Self {
            pem,
            origin: format!("{CA_BUNDLE_VARIABLE}={}", path.display()),
        })
    }

    pub(super) fn pem(&self) -> &str {
        &self.pem
    }

    /// The certificates, for a connection made outside the SDK (the twin's cost meter).
    pub(super) fn certificates(&self) -> Vec<CertificateDer<'static>> {
        CertificateDer::pem_slice_iter(self.pem.as_bytes())
            .filter_map(Result::ok)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_is_read_with_every_certificate_in_it() {
        let dir = tempfile::tempdir().unwrap();
        let certificate = |name: &str| {
            rcgen::generate_simple_self_signed(vec![name.to_string()])
                .unwrap()
                .cert
                .pem()
        };
        let (ca, other) = (certificate("one"), certificate("two"));
        let path = dir.path().join("bundle.pem");
        std::fs::write(&path, format!("{ca}{other}")).unwrap();
        let trusted = TrustedCa::from_file(&path).expect("a bundle of two");
        assert_eq!(trusted.certificates().len(), 2);
        assert!(trusted.origin.contains("bundle.pem"), "{}", trusted.origin);
    }

    #[test]
    fn a_file_without_usable_certificates_or_no_file_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let pem = |body: &str| {
            format!("-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n")
        };
        let cases = [
            (
                "empty.pem",
                Some("not a certificate\n".to_string()),
                "no PEM certificate",
            ),
            ("broken.pem", Some(pem("not base64!")), "cannot be read"),
            ("garbage.pem", Some(pem("AAAA")), "certificate 1"),
            ("missing.pem", None, "cannot read"),
        ];
        for (name, text, why) in cases {
            let path = dir.path().join(name);
            if let Some(text) = text {
                std::fs::write(&path, text).unwrap();
            }
            let error = TrustedCa::from_file(&path).unwrap_err();
            assert!(error.contains(name) && error.contains(why), "{error}");
        }
    }
}
