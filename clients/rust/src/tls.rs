//! TLS to a referee served with `tavolo serve --tls-cert/--tls-key` (feature `tls`).
//!
//! The certificates of `TAVOLO_TLS_CA` are roots, as for any gRPC client. A referee's
//! certificate that is itself one of them is accepted too, if it names the host: rustls
//! alone refuses a self-signed certificate that says it is a CA (`openssl req -x509`
//! makes those), which gRPC's C core (the Python SDK) accepts.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{WebPkiServerVerifier, verify_server_name};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{DigitallySignedStruct, Error, RootCertStore, SignatureScheme};
use tonic::transport::{ClientTlsConfig, Endpoint};

use crate::runner::ConfigError;

#[derive(Debug)]
struct RootsOrPinned {
    pinned: Vec<CertificateDer<'static>>,
    webpki: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for RootsOrPinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        if self
            .pinned
            .iter()
            .any(|c| c.as_ref() == end_entity.as_ref())
        {
            verify_server_name(&ParsedCertificate::try_from(end_entity)?, server_name)?;
            return Ok(ServerCertVerified::assertion());
        }
        self.webpki
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// The endpoint with TLS whose roots are the PEM certificates `pem`.
pub(crate) fn with_tls(endpoint: Endpoint, pem: &[u8]) -> Result<Endpoint, ConfigError> {
    let fail = |what: String| ConfigError(format!("TAVOLO_TLS_CA: {what}"));
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<_, _>>()
        .map_err(|e| fail(format!("not a PEM file of certificates ({e})")))?;
    if certs.is_empty() {
        return Err(fail("no certificate in the file".into()));
    }
    let mut roots = RootCertStore::empty();
    for cert in &certs {
        roots
            .add(cert.clone())
            .map_err(|e| fail(format!("bad certificate ({e})")))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|e| fail(format!("cannot use these certificates ({e})")))?;
    let verifier = Arc::new(RootsOrPinned {
        pinned: certs,
        webpki,
    });
    let host = endpoint
        .uri()
        .host()
        .unwrap_or_default()
        .trim_matches(['[', ']'])
        .to_string();
    endpoint
        .tls_config_with_verifier(ClientTlsConfig::new().domain_name(host), verifier)
        .map_err(|e| fail(format!("cannot set up TLS ({e})")))
}
