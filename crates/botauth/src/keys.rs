//! Ed25519 keys as JWK (RFC 8037) with RFC 7638 thumbprints.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use ed25519_dalek::{SigningKey, VerifyingKey};

use crate::Error;

/// A JSON Web Key. Signing and verifying use Ed25519 (`kty` `OKP`, `crv`
/// `Ed25519`); other key types are read so their thumbprints can be
/// computed and their signatures refused by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Jwk {
    /// The key type: `OKP` for Ed25519.
    pub kty: String,
    #[serde(default)]
    /// The curve: `Ed25519`.
    pub crv: String,
    /// The public key, unpadded base64url (OKP, EC).
    #[serde(default)]
    pub x: String,
    /// EC only.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub y: Option<String>,
    /// RSA modulus and exponent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub n: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    /// RSA exponent (kept for thumbprints of other key types).
    pub e: Option<String>,
    /// The private seed, when this is a private key.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub d: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    /// The directory's own key id (informational: keys are matched by thumbprint).
    pub kid: Option<String>,
    /// The algorithm, from the HTTP Signature Algorithms registry
    /// (`ed25519`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub alg: Option<String>,
    /// The key's use (`sig`).
    #[serde(rename = "use", skip_serializing_if = "Option::is_none", default)]
    pub use_: Option<String>,
}

impl Jwk {
    /// The RFC 7638 SHA-256 thumbprint, unpadded base64url: the members
    /// `crv`, `kty`, `x` in that order, no whitespace.
    pub fn thumbprint(&self) -> String {
        // The required members of each key type.
        let (e, n, y) = (
            self.e.as_deref().unwrap_or(""),
            self.n.as_deref().unwrap_or(""),
            self.y.as_deref().unwrap_or(""),
        );
        let members: &[(&str, &str)] = match self.kty.as_str() {
            "RSA" => &[("e", e), ("kty", "RSA"), ("n", n)],
            "EC" => &[("crv", &self.crv), ("kty", "EC"), ("x", &self.x), ("y", y)],
            _ => &[("crv", &self.crv), ("kty", &self.kty), ("x", &self.x)],
        };
        mannerly_evidence::jcs::jwk_thumbprint(members)
    }

    /// The public key.
    pub fn verifying_key(&self) -> Result<VerifyingKey, Error> {
        if self.kty != "OKP" || self.crv != "Ed25519" {
            return Err(Error::UnsupportedKey {
                kty: self.kty.clone(),
                crv: self.crv.clone(),
            });
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(self.x.trim_end_matches('='))
            .map_err(|source| Error::Base64 { field: "x", source })?;
        let arr: [u8; 32] = bytes
            .try_into()
            .map_err(|_| Error::KeyLength { field: "x" })?;
        VerifyingKey::from_bytes(&arr).map_err(|_| Error::InvalidPoint)
    }
}

/// A signing key with its public JWK and `keyid`.
#[derive(Debug, Clone)]
pub struct KeyPair {
    signing: SigningKey,
}

impl KeyPair {
    /// A new random key (from the operating system's generator).
    pub fn generate() -> KeyPair {
        KeyPair {
            signing: SigningKey::generate(&mut rand_core::OsRng),
        }
    }

    /// The key with this 32-byte secret seed.
    pub fn from_seed(seed: [u8; 32]) -> KeyPair {
        KeyPair {
            signing: SigningKey::from_bytes(&seed),
        }
    }

    /// From a private JWK (with `d`).
    pub fn from_jwk(jwk: &Jwk) -> Result<KeyPair, Error> {
        let d = jwk.d.as_deref().ok_or(Error::NoPrivateKey)?;
        let bytes = URL_SAFE_NO_PAD
            .decode(d.trim_end_matches('='))
            .map_err(|source| Error::Base64 { field: "d", source })?;
        let seed: [u8; 32] = bytes
            .try_into()
            .map_err(|_| Error::KeyLength { field: "d" })?;
        let pair = KeyPair::from_seed(seed);
        if pair.public_jwk().x != jwk.x {
            return Err(Error::KeyMismatch);
        }
        Ok(pair)
    }

    /// From a PKCS#8 PEM private key.
    pub fn from_pkcs8_pem(pem: &str) -> Result<KeyPair, Error> {
        if !pem.contains("-----BEGIN ") {
            return Err(Error::NotPem);
        }
        SigningKey::from_pkcs8_pem(pem)
            .map(|signing| KeyPair { signing })
            .map_err(|e| match other_algorithm(pem) {
                Some("encrypted") => Error::Encrypted,
                Some(name) => Error::OtherAlgorithm(name),
                None => Error::Pkcs8(e),
            })
    }

    /// As PKCS#8 PEM, in the v1 form (RFC 5208: the private key alone),
    /// which OpenSSL 3 and Python's `cryptography` read; the v2 form with
    /// the public key beside it is refused by both.
    pub fn to_pkcs8_pem(&self) -> Result<String, Error> {
        ed25519_dalek::pkcs8::KeypairBytes {
            secret_key: self.signing.to_bytes(),
            public_key: None,
        }
        .to_pkcs8_pem(Default::default())
        .map(|z| z.to_string())
        .map_err(Error::Pkcs8Encode)
    }

    /// The public key as a JWK (no `d`), as a directory publishes it:
    /// `kid` is its thumbprint, `alg` `ed25519`, `use` `sig` (the
    /// editor's copy, §5.5).
    pub fn public_jwk(&self) -> Jwk {
        let bare = Jwk {
            kty: "OKP".into(),
            crv: "Ed25519".into(),
            x: URL_SAFE_NO_PAD.encode(self.signing.verifying_key().as_bytes()),
            ..Jwk::default()
        };
        Jwk {
            kid: Some(bare.thumbprint()),
            alg: Some("ed25519".into()),
            use_: Some("sig".into()),
            ..bare
        }
    }

    /// The private key as a JWK (with `d`): keep it secret.
    pub fn private_jwk(&self) -> Jwk {
        Jwk {
            d: Some(URL_SAFE_NO_PAD.encode(self.signing.to_bytes())),
            ..self.public_jwk()
        }
    }

    /// The `keyid`: the public JWK's thumbprint.
    pub fn keyid(&self) -> String {
        self.public_jwk().thumbprint()
    }

    /// Signs bytes of another format than an HTTP message signature base
    /// (a crawler's evidence checkpoints). The message must open with a
    /// context string of its own, so that no signature made here can
    /// pass for a signature of a request.
    pub fn sign_bytes(&self, message: &[u8]) -> [u8; 64] {
        self.sign(message)
    }

    /// Signs raw bytes (for conformance tests that re-sign a known base).
    #[doc(hidden)]
    pub fn sign_for_test(&self, message: &[u8]) -> [u8; 64] {
        self.sign(message)
    }

    pub(crate) fn sign(&self, message: &[u8]) -> [u8; 64] {
        use ed25519_dalek::Signer;
        self.signing.sign(message).to_bytes()
    }
}

/// The RFC 9421 Appendix B.1.4 test key's public half: production
/// verifiers reject it.
pub const RFC9421_TEST_KEY_X: &str = "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs";

/// Why a key file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyFileError {
    /// The file could not be read.
    #[error("cannot read '{}': {source}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is not JSON.
    #[error("'{}' is not JSON: {source}", path.display())]
    NotJson {
        /// The file.
        path: std::path::PathBuf,
        /// Where and why.
        source: serde_json::Error,
    },
    /// It holds no usable Ed25519 key (a JWK without `d` where a private
    /// key is wanted, or PEM that is not PKCS#8 Ed25519).
    #[error("'{}' holds no usable Ed25519 key: {source}", path.display())]
    NoKey {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: Error,
    },
    /// It is JSON, but neither a JWK Set nor a JWK.
    #[error("'{}' holds no JWK Set or JWK: {source}", path.display())]
    NotKeys {
        /// The file.
        path: std::path::PathBuf,
        /// Where and why.
        source: serde_json::Error,
    },
}

/// A key file as one of the two forms `mannerly keys generate` writes
/// and operators keep: a JWK (public, or private with `d`) or a PKCS#8
/// PEM private key.
#[derive(Debug, Clone)]
pub enum KeyFile {
    /// A private key.
    Private(KeyPair),
    /// A public JWK only.
    Public(Jwk),
}

impl KeyFile {
    /// Reads a key file: JSON is a JWK, anything else PKCS#8 PEM.
    pub fn read(path: &std::path::Path) -> Result<KeyFile, KeyFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeyFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let no_key = |source| KeyFileError::NoKey {
            path: path.to_path_buf(),
            source,
        };
        if !text.trim_start().starts_with('{') {
            return KeyPair::from_pkcs8_pem(&text)
                .map(KeyFile::Private)
                .map_err(no_key);
        }
        let jwk: Jwk = serde_json::from_str(&text).map_err(|source| KeyFileError::NotKeys {
            path: path.to_path_buf(),
            source,
        })?;
        match jwk.d {
            Some(_) => KeyPair::from_jwk(&jwk)
                .map(KeyFile::Private)
                .map_err(no_key),
            None => Ok(KeyFile::Public(jwk)),
        }
    }

    /// Its public JWK.
    pub fn public_jwk(&self) -> Jwk {
        match self {
            KeyFile::Private(pair) => pair.public_jwk(),
            KeyFile::Public(jwk) => jwk.clone(),
        }
    }

    /// Its private key, or `NoPrivateKey` for a public JWK.
    pub fn into_private(self, path: &std::path::Path) -> Result<KeyPair, KeyFileError> {
        match self {
            KeyFile::Private(pair) => Ok(pair),
            KeyFile::Public(_) => Err(KeyFileError::NoKey {
                path: path.to_path_buf(),
                source: Error::NoPrivateKey,
            }),
        }
    }
}

/// The keys of a file holding a JWK Set (`{"keys": [...]}`) or one JWK:
/// the one reader of key files (`--wba-keys`, the gate's `--keys`,
/// `mannerly verify --key`).
pub fn read_jwk_file(path: &std::path::Path) -> Result<Vec<Jwk>, KeyFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| KeyFileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|source| KeyFileError::NotJson {
            path: path.to_path_buf(),
            source,
        })?;
    match v.get("keys") {
        Some(list) => serde_json::from_value(list.clone()),
        None => serde_json::from_value(v).map(|k| vec![k]),
    }
    .map_err(|source| KeyFileError::NotKeys {
        path: path.to_path_buf(),
        source,
    })
}

/// The algorithm of a PEM private key that is not Ed25519, by its label
/// or its PKCS#8 algorithm identifier, when it is one of the usual ones.
fn other_algorithm(pem: &str) -> Option<&'static str> {
    use base64::Engine;
    for (label, name) in [
        ("RSA PRIVATE KEY", "an RSA"),
        ("EC PRIVATE KEY", "an EC"),
        ("DSA PRIVATE KEY", "a DSA"),
        ("ENCRYPTED PRIVATE KEY", "encrypted"),
        ("OPENSSH PRIVATE KEY", "an OpenSSH-format"),
    ] {
        if pem.contains(&format!("-----BEGIN {label}-----")) {
            return Some(name);
        }
    }
    let body: String = pem
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect::<Vec<_>>()
        .concat();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body.trim())
        .ok()?;
    // DER object identifiers of the usual private-key algorithms.
    let oids: [(&[u8], &str); 4] = [
        (
            &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01],
            "an RSA",
        ),
        (&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01], "an EC"),
        (&[0x2b, 0x65, 0x71], "an Ed448"),
        (&[0x2b, 0x65, 0x6e], "an X25519"),
    ];
    oids.iter()
        .find(|(oid, _)| der.windows(oid.len()).any(|w| w == *oid))
        .map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_that_is_not_ed25519_is_named() {
        // A throwaway P-256 key (openssl genpkey -algorithm EC).
        let ec = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgh/hIwvjVkF5egs7R\n9bCywnH7fDWgD6iwEf7eaHkatDShRANCAATapIRjBLFOp4Xu/mUzWmAG0t1CDXJa\niZkp9v1nLIhhI00kPbiJ9Eo1cvXxFdJvY37wJjzy1vR8LIoS4wznO8Xo\n-----END PRIVATE KEY-----\n";
        let named = |pem: &str| KeyPair::from_pkcs8_pem(pem).err().map(|e| e.to_string());
        assert!(named(ec).is_some_and(|e| e.contains("an EC private key, not Ed25519")));
        let rsa = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n";
        assert!(named(rsa).is_some_and(|e| e.contains("an RSA private key")));
        assert!(named("hello\n").is_some_and(|e| e.contains("not a PEM file")));
        let encrypted =
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n";
        assert!(named(encrypted).is_some_and(|e| e.contains("encrypted")));
        let own = KeyPair::from_seed([7; 32]).to_pkcs8_pem().expect("pem");
        assert!(KeyPair::from_pkcs8_pem(&own).is_ok());
    }

    #[test]
    fn rfc8037_thumbprint() {
        let jwk = Jwk {
            kty: "OKP".into(),
            crv: "Ed25519".into(),
            x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo".into(),
            ..Jwk::default()
        };
        assert_eq!(
            jwk.thumbprint(),
            "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
        );
    }

    #[test]
    fn round_trips() {
        let k = KeyPair::generate();
        let again = KeyPair::from_jwk(&k.private_jwk()).expect("jwk");
        assert_eq!(again.keyid(), k.keyid());
        let pem = k.to_pkcs8_pem().expect("pem");
        // PKCS#8 v1: version 0 and no public key ([1]) after the key.
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{pem}");
        assert_eq!(pem.lines().count(), 3, "48 bytes of DER, one line: {pem}");
        assert_eq!(
            KeyPair::from_pkcs8_pem(&pem).expect("pem").keyid(),
            k.keyid()
        );
        let mut bad = k.private_jwk();
        bad.x = KeyPair::generate().public_jwk().x;
        assert!(KeyPair::from_jwk(&bad).is_err());
    }

    #[test]
    fn key_files_are_read_in_either_form_and_their_problems_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pair = KeyPair::from_seed([7; 32]);
        let public = dir.path().join("public.jwk.json");
        std::fs::write(
            &public,
            serde_json::to_string(&pair.public_jwk()).expect("json"),
        )
        .expect("write");
        let file = KeyFile::read(&public).expect("reads");
        assert_eq!(
            file.public_jwk().thumbprint(),
            pair.public_jwk().thumbprint()
        );
        assert!(matches!(
            file.into_private(&public),
            Err(KeyFileError::NoKey {
                source: Error::NoPrivateKey,
                ..
            })
        ));
        assert_eq!(read_jwk_file(&public).expect("one JWK").len(), 1);
        let pem = dir.path().join("private.pem");
        std::fs::write(&pem, "-----BEGIN PRIVATE KEY-----\nnot base64\n").expect("write");
        assert!(matches!(
            KeyFile::read(&pem),
            Err(KeyFileError::NoKey { .. })
        ));
        let junk = dir.path().join("junk.json");
        std::fs::write(&junk, "{\"keys\": 7}").expect("write");
        assert!(matches!(
            read_jwk_file(&junk),
            Err(KeyFileError::NotKeys { .. })
        ));
        let missing = dir.path().join("missing.json");
        assert!(matches!(
            read_jwk_file(&missing),
            Err(KeyFileError::Read { .. })
        ));
    }
}
