//! The TLS identity of the twin's Kubernetes API, made fresh for each lab: a CA of its own and
//! a server certificate for 127.0.0.1 and localhost signed by it (ring: see Cargo.toml). Clients trust the CA (the
//! kubeconfig's `certificate-authority-data`, DescribeCluster's `certificateAuthority`); kubectl
//! sends a bearer token over https only, so without TLS nobody could log in.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

pub(crate) struct LabTls {
    /// The CA certificate, PEM: what clients trust.
    pub(crate) ca_pem: String,
    pub(crate) ca_der: Vec<u8>,
    pub(crate) acceptor: TlsAcceptor,
}

impl std::fmt::Debug for LabTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LabTls { .. }")
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum TlsError {
    #[error("cannot make the lab's certificates: {0}")]
    Certificate(#[from] rcgen::Error),
    #[error("cannot set up TLS for the lab: {0}")]
    Rustls(#[from] rustls::Error),
}

impl LabTls {
    pub(crate) fn generate() -> Result<Self, TlsError> {
        let ca_key = KeyPair::generate()?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "runbook lab twin CA");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = ca_params.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca_params, ca_key);
        let server_key = KeyPair::generate()?;
        let mut params = CertificateParams::new(vec![
            "localhost".to_string(),
            "kubernetes".to_string(),
            "kubernetes.default.svc".to_string(),
        ])?;
        params
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        params
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        let server = params.signed_by(&server_key, &issuer)?;
        let chain = vec![server.der().clone(), ca.der().clone()];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key)?;
        // As kube-apiserver offers them: HTTP/2 for clients that take it (kubectl, runbook's
        // requests), HTTP/1.1 for the rest and for upgrades (exec's WebSocket).
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Self {
            ca_pem: ca.pem(),
            ca_der: CertificateDer::from(ca.der().to_vec()).to_vec(),
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }
}
