//! TLS with rustls (ring): the certificate chain and key of `--tls-cert/--tls-key` read from PEM
//! files, made into the acceptor the accept loop ([`crate::listen`]) hands each connection to.

use crate::config::{ServeError, TlsFiles};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// The acceptor for `files`.
pub fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, ServeError> {
    let refuse = |what: &'static str, path: &std::path::Path, detail: String| ServeError::Tls {
        what,
        path: path.display().to_string(),
        detail,
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .map_err(|e| refuse("certificate", &files.cert, e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| refuse("certificate", &files.cert, e.to_string()))?;
    if certs.is_empty() {
        return Err(refuse(
            "certificate",
            &files.cert,
            "no certificate in it".into(),
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| refuse("key", &files.key, e.to_string()))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| refuse("certificate", &files.cert, e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| refuse("key", &files.key, e.to_string()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
