//! TLS to the shared store with the rustls (and ring) the rest of the binary uses, checking
//! what each libpq `sslmode` checks: the chain to the given CA (`verify-ca`, and `require`
//! with a CA, as libpq), the chain and the host name (`verify-full`), or nothing but the
//! handshake's own signatures (`prefer` and `require` without a CA: encryption only).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::url::SslMode;
use crate::store::StoreError;

pub(super) fn connector(
    mode: SslMode,
    root_cert: Option<&Path>,
) -> Result<MakeRustlsConnect, StoreError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier: Arc<dyn ServerCertVerifier> = match (mode, root_cert) {
        (SslMode::VerifyFull, Some(ca)) => chain(ca, &provider)?,
        (SslMode::VerifyCa | SslMode::Require, Some(ca)) => Arc::new(AnyName {
            chain: chain(ca, &provider)?,
        }),
        (SslMode::VerifyFull | SslMode::VerifyCa, None) => match default_root_cert() {
            Some(ca) => return connector(mode, Some(&ca)),
            None => {
                return Err(StoreError::Tls(
                    "sslmode=verify-full and verify-ca check the server against a CA: give sslrootcert=FILE \
                     (for RDS and Aurora, AWS's global-bundle.pem) or put it at ~/.postgresql/root.crt"
                        .into(),
                ));
            }
        },
        (SslMode::Disable | SslMode::Prefer | SslMode::Require, _) => Arc::new(EncryptionOnly {
            provider: provider.clone(),
        }),
    };
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::Tls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// libpq's default CA file.
fn default_root_cert() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty())?;
    let path = PathBuf::from(home).join(".postgresql/root.crt");
    path.exists().then_some(path)
}

fn chain(
    ca: &Path,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, StoreError> {
    let unreadable = |why: String| StoreError::Tls(format!("sslrootcert {}: {why}", ca.display()));
    // Read as runbook reads its own files: bounded, and a folder or device refused.
    let pem = crate::sandbox::read_text_file(ca, 1 << 20).map_err(|e| unreadable(e.to_string()))?;
    let certificates = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| unreadable(e.to_string()))?;
    let mut roots = rustls::RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(certificates);
    if added == 0 {
        return Err(unreadable(
            "holds no CA certificate (a PEM file is expected)".into(),
        ));
    }
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| unreadable(e.to_string()))
}

/// `verify-ca`: the chain is checked, the name the server's certificate is for is not.
#[derive(Debug)]
struct AnyName {
    chain: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.chain.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chain.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chain.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.chain.supported_verify_schemes()
    }
}

/// `prefer` and `require` without a CA, as libpq: the connection is encrypted, the server is
/// not checked (the docs say to use verify-full where that matters).
#[derive(Debug)]
struct EncryptionOnly {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for EncryptionOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
