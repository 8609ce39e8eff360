//! TLS to the database through rustls (ring as its crypto, already in phonelogs' graph): the
//! server's certificate is verified against the CA file the connection string names
//! (`sslrootcert`), else the system's CAs, and its name against the host.

use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject as _;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The connector every connection of a store uses, or why there is none.
pub(crate) fn connector(root_cert: Option<&Path>) -> Result<MakeRustlsConnect, String> {
    let mut roots = RootCertStore::empty();
    match root_cert {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path).map_err(|error| {
                format!("sslrootcert {} cannot be read: {error}", path.display())
            })?;
            for cert in certs {
                let cert = cert.map_err(|error| {
                    format!(
                        "sslrootcert {} holds no PEM certificate: {error}",
                        path.display()
                    )
                })?;
                roots
                    .add(cert)
                    .map_err(|error| format!("sslrootcert {}: {error}", path.display()))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            for error in &found.errors {
                tracing::debug!(%error, "a system CA certificate could not be loaded");
            }
            let (added, _) = roots.add_parsable_certificates(found.certs);
            tracing::debug!(added, "system CA certificates for TLS to PostgreSQL");
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| format!("TLS cannot be set up: {error}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}
