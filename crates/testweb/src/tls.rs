//! TLS for the simulated web: a throwaway CA that mints a certificate for
//! whatever server name a client asks for, so every scripted or generated
//! host can be reached over https. Clients trust [`TestWeb::ca_der`].
//!
//! [`TestWeb::ca_der`]: crate::TestWeb::ca_der

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair, KeyUsagePurpose};
use tokio_rustls::rustls::crypto::ring::sign::any_supported_type;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::{self, ServerConfig};

pub(crate) struct Minter {
    ca: CertifiedIssuer<'static, KeyPair>,
    minted: Mutex<HashMap<String, Arc<CertifiedKey>>>,
}

impl fmt::Debug for Minter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Minter")
    }
}

impl Minter {
    pub(crate) fn new() -> Result<Minter, rcgen::Error> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "mannerly testweb CA");
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate()?)?;
        Ok(Minter {
            ca,
            minted: Mutex::new(HashMap::new()),
        })
    }

    pub(crate) fn ca_der(&self) -> Vec<u8> {
        self.ca.der().to_vec()
    }

    fn mint(&self, name: &str) -> Option<Arc<CertifiedKey>> {
        let mut minted = self.minted.lock();
        if let Some(k) = minted.get(name) {
            return Some(k.clone());
        }
        let key = KeyPair::generate().ok()?;
        let cert = CertificateParams::new(vec![name.to_owned()])
            .ok()?
            .signed_by(&key, &self.ca)
            .ok()?;
        let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let signer = any_supported_type(&der).ok()?;
        let certified = Arc::new(CertifiedKey::new(
            vec![
                cert.der().clone(),
                CertificateDer::from(self.ca.der().to_vec()),
            ],
            signer,
        ));
        minted.insert(name.to_owned(), certified.clone());
        Some(certified)
    }
}

impl ResolvesServerCert for Minter {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let name = hello
            .server_name()
            .unwrap_or("localhost")
            .to_ascii_lowercase();
        self.mint(&name)
    }
}

pub(crate) fn server_config(minter: Arc<Minter>) -> Arc<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("the ring provider supports the default TLS versions")
        .with_no_client_auth()
        .with_cert_resolver(minter);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}
