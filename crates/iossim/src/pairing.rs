//! The pair record: a root certificate, a host certificate and a device certificate, made with
//! rcgen when the simulator starts and served by usbmuxd's `ReadPairRecord`, and the TLS server
//! lockdown runs with the device certificate, accepting only the record's host (or root)
//! certificate from a client, as a phone accepts only a host it trusts.
//!
//! The keys are RSA because libimobiledevice reads the host key with
//! `PEM_read_bio_RSAPrivateKey` (checked in Debian's `libimobiledevice-1.0.so.6`), and a real
//! pair record's keys are RSA 2048. ring signs with RSA but cannot make RSA keys, so three
//! keys are fixed in `src/keys/` (made once with `openssl genpkey`); the certificates, their
//! serials and dates are new on every start.

use std::sync::Arc;

use plist::{Dictionary, Value};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, PKCS_RSA_SHA256, SerialNumber,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName as TlsName, SignatureScheme};

use crate::Error;

const ROOT_KEY: &str = include_str!("keys/root.pem");
const HOST_KEY: &str = include_str!("keys/host.pem");
const DEVICE_KEY: &str = include_str!("keys/device.pem");

/// A generated pairing between the simulated phone and "this computer".
#[derive(Clone)]
pub struct Pairing {
    /// `HostID` (an uppercase UUID).
    pub host_id: String,
    /// `SystemBUID` (what usbmuxd's `ReadBUID` answers).
    pub system_buid: String,
    /// The pair record as usbmuxd stores it.
    pub record: Dictionary,
    /// The TLS server lockdown uses.
    pub(crate) tls: Arc<rustls::ServerConfig>,
}

impl std::fmt::Debug for Pairing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pairing")
            .field("host_id", &self.host_id)
            .finish_non_exhaustive()
    }
}

fn tls_error(e: impl std::fmt::Display) -> Error {
    Error::Tls(e.to_string())
}

fn key(pem: &str) -> Result<KeyPair, Error> {
    KeyPair::from_pkcs8_pem_and_sign_algo(pem, &PKCS_RSA_SHA256).map_err(tls_error)
}

fn params(common_name: &str, serial: u64, ca: bool) -> Result<CertificateParams, Error> {
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(tls_error)?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    params.distinguished_name = name;
    params.serial_number = Some(SerialNumber::from(serial.to_be_bytes().to_vec()));
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(1);
    params.not_after = now + time::Duration::days(3650);
    if ca {
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    } else {
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
    }
    Ok(params)
}

/// An id shaped like a UUID from 128 bits.
fn uuid_of(bits: u128) -> String {
    let hex = format!("{bits:032X}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn seed() -> u128 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    nanos ^ (u128::from(std::process::id()) << 64)
}

impl Pairing {
    /// Makes the certificates and the TLS server for a phone.
    pub fn generate() -> Result<Pairing, Error> {
        let seed = seed();
        let root_key = key(ROOT_KEY)?;
        let host_key = key(HOST_KEY)?;
        let device_key = key(DEVICE_KEY)?;
        let serial = seed as u64;
        let root_params = params("Root Certification Authority", serial, true)?;
        let root_cert = root_params.self_signed(&root_key).map_err(tls_error)?;
        let issuer = Issuer::new(root_params, &root_key);
        let host_cert = params("Host", serial.wrapping_add(1), false)?
            .signed_by(&host_key, &issuer)
            .map_err(tls_error)?;
        let device_cert = params("Device", serial.wrapping_add(2), false)?
            .signed_by(&device_key, &issuer)
            .map_err(tls_error)?;

        let host_id = uuid_of(seed.rotate_left(29));
        let system_buid = uuid_of(seed.rotate_left(71) ^ 0x5A5A);
        let mut record = Dictionary::new();
        let data = |s: String| Value::Data(s.into_bytes());
        record.insert("DeviceCertificate".into(), data(device_cert.pem()));
        record.insert("HostCertificate".into(), data(host_cert.pem()));
        record.insert("HostPrivateKey".into(), data(HOST_KEY.to_owned()));
        record.insert("RootCertificate".into(), data(root_cert.pem()));
        record.insert("RootPrivateKey".into(), data(ROOT_KEY.to_owned()));
        record.insert("HostID".into(), Value::from(host_id.clone()));
        record.insert("SystemBUID".into(), Value::from(system_buid.clone()));
        record.insert("WiFiMACAddress".into(), Value::from("a4:c3:f0:12:34:56"));
        record.insert("EscrowBag".into(), Value::Data(vec![0x44; 32]));

        let trusted = vec![host_cert.der().clone(), root_cert.der().clone()];
        let device_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(device_key.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = Arc::new(TrustedHost {
            trusted,
            provider: provider.clone(),
        });
        let tls = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(tls_error)?
            .with_client_cert_verifier(verifier)
            .with_single_cert(vec![device_cert.der().clone()], device_der)
            .map_err(tls_error)?;
        Ok(Pairing {
            host_id,
            system_buid,
            record,
            tls: Arc::new(tls),
        })
    }

    /// The record as the bytes usbmuxd's `PairRecordData` carries (an XML plist).
    pub fn record_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing a dictionary of strings and data to memory does not fail.
        let _ = plist::to_writer_xml(&mut out, &Value::Dictionary(self.record.clone()));
        out
    }

    /// The device's public key as lockdown's `DevicePublicKey` (PEM).
    pub fn device_public_key(&self) -> Vec<u8> {
        key(DEVICE_KEY)
            .map(|k| k.public_key_pem().into_bytes())
            .unwrap_or_default()
    }
}

/// Accepts a client certificate only when it is this pairing's host or root certificate.
#[derive(Debug)]
struct TrustedHost {
    trusted: Vec<CertificateDer<'static>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl ClientCertVerifier for TrustedHost {
    fn root_hint_subjects(&self) -> &[TlsName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        if self
            .trusted
            .iter()
            .any(|c| c.as_ref() == end_entity.as_ref())
        {
            Ok(ClientCertVerified::assertion())
        } else {
            Err(rustls::Error::General(
                "a certificate this phone never paired with".into(),
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
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
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
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
