//! Interoperability with Cloudflare's `web-bot-auth` crate (0.7), both
//! ways: our signatures verify with it, its signatures verify with us.

use std::time::Duration;

use indexmap::IndexMap;
use mannerly_botauth::UnixMillis;
use mannerly_botauth::{
    sign_request, verify_request, AgentForm, KeyPair, Message, Outcome, SignConfig, StaticKeys,
    VerifyConfig,
};
use web_bot_auth::components::{
    CoveredComponent, DerivedComponent, HTTPField, HTTPFieldParameters, HTTPFieldParametersSet,
};
use web_bot_auth::keyring::{Algorithm, KeyRing};
use web_bot_auth::message_signatures::{MessageSigner, SignedMessage, UnsignedMessage};
use web_bot_auth::WebBotAuthVerifier;

const SEED: [u8; 32] = [7; 32];
const AGENT: &str = "https://crawler.example/.well-known/http-message-signatures-directory";

fn now() -> UnixMillis {
    UnixMillis::now()
}

/// Our message as the other crate sees it.
struct Theirs<'a>(&'a Message);

impl SignedMessage for Theirs<'_> {
    fn lookup_component(&self, name: &CoveredComponent) -> Vec<String> {
        let url = url::Url::parse(&self.0.target_uri).expect("url");
        match name {
            CoveredComponent::HTTP(HTTPField { name, parameters }) => {
                let Some(raw) = self.0.field(name) else {
                    return vec![];
                };
                for p in &parameters.0 {
                    if let HTTPFieldParameters::Key(k) = p {
                        let dict: sfv::Dictionary =
                            sfv::Parser::new(&raw).parse().expect("dictionary");
                        return match dict.get(k.as_str()) {
                            Some(sfv::ListEntry::Item(i)) => vec![sfv::FieldType::serialize(i)],
                            _ => vec![],
                        };
                    }
                }
                vec![raw]
            }
            CoveredComponent::Derived(DerivedComponent::Authority { .. }) => {
                vec![url.host_str().unwrap_or("").to_owned()]
            }
            CoveredComponent::Derived(DerivedComponent::Method { .. }) => {
                vec![self.0.method.clone()]
            }
            CoveredComponent::Derived(DerivedComponent::Path { .. }) => vec![url.path().to_owned()],
            _ => vec![],
        }
    }
}

#[test]
fn our_signatures_verify_with_web_bot_auth() {
    let pair = KeyPair::from_seed(SEED);
    let msg = Message::new("GET", "https://example.com/some/page");
    for agent in [
        AgentForm::dictionary(AGENT),
        AgentForm::Legacy { url: AGENT.into() },
    ] {
        let mut signed = msg.clone();
        signed
            .headers
            .extend(sign_request(&pair, &msg, &SignConfig::new(now(), agent)).expect("sign"));
        let verifier =
            WebBotAuthVerifier::parse(&Theirs(&signed)).expect("their parser accepts our headers");
        let mut ring = KeyRing::default();
        let public = pair.public_jwk();
        let raw =
            base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, &public.x)
                .expect("x");
        ring.import_raw(pair.keyid(), Algorithm::Ed25519, raw);
        verifier
            .verify(&ring, None)
            .expect("their verifier accepts our signature");
    }
}

/// A message for their signer: it covers @authority and our agent member.
struct ToSign {
    input: String,
    signature: String,
}

impl UnsignedMessage for ToSign {
    fn fetch_components_to_cover(&self) -> IndexMap<CoveredComponent, String> {
        IndexMap::from_iter([
            (
                CoveredComponent::Derived(DerivedComponent::Authority { req: false }),
                "example.com".to_owned(),
            ),
            (
                CoveredComponent::HTTP(HTTPField {
                    name: "signature-agent".into(),
                    parameters: HTTPFieldParametersSet(vec![HTTPFieldParameters::Key(
                        "agent1".into(),
                    )]),
                }),
                format!("\"{AGENT}\""),
            ),
        ])
    }

    fn register_header_contents(&mut self, signature_input: String, signature_header: String) {
        self.input = format!("sig1={signature_input}");
        self.signature = format!("sig1={signature_header}");
    }
}

#[test]
fn web_bot_auth_signatures_verify_with_us() {
    let pair = KeyPair::from_seed(SEED);
    let signer = MessageSigner {
        keyid: pair.keyid(),
        nonce: "interop-nonce".into(),
        tag: "web-bot-auth".into(),
    };
    let mut m = ToSign {
        input: String::new(),
        signature: String::new(),
    };
    signer
        .generate_signature_headers_content(
            &mut m,
            Duration::from_secs(60),
            Algorithm::Ed25519,
            &SEED,
        )
        .expect("their signer");
    let msg = Message::new("GET", "https://example.com/x")
        .header("Signature-Agent", &format!("agent1=\"{AGENT}\""))
        .header("Signature-Input", &m.input)
        .header("Signature", &m.signature);
    // Keys as fetched from the agent's JWK Set: the request is attributed
    // to it. (Their signer keys its member `agent1`, not the label `sig1`,
    // as draft -00 senders do; one covered member is still read.)
    let keys = StaticKeys::from_directory(AGENT, vec![pair.public_jwk()]);
    match verify_request(&msg, &keys, &VerifyConfig::at(now())) {
        Outcome::Verified { agent, keyid, .. } => {
            assert_eq!(agent.as_deref(), Some(AGENT));
            assert_eq!(keyid, pair.keyid());
        }
        other => panic!(
            "their signature must verify with us: {other:?}\n{}",
            m.input
        ),
    }
    // And a tampered authority fails with us.
    let mut bad = msg.clone();
    bad.target_uri = "https://other.example/x".into();
    assert!(matches!(
        verify_request(&bad, &keys, &VerifyConfig::at(now())),
        Outcome::Invalid { .. }
    ));
}
