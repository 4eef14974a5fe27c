//! The forward-auth endpoint: every request the server hands over is
//! answered from memory (keys, ranges, reverse DNS and buckets are all
//! cached), except the first request naming a key directory not yet
//! fetched. Any path is the decision endpoint; `/healthz` answers 200.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{HeaderMap, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use mannerly_audit::{Agent, Catalogue, Checked, Identity as Checks};
use mannerly_botauth::fcrdns::IpRanges;
use mannerly_botauth::VerifyConfig;
use mannerly_time::{Clock, SystemClock, UnixMillis};

use crate::class::Visitor;
use crate::decide::{Asked, Decision, Gate, Verdict};
use crate::forwarded::Original;
use crate::keys::Keys;
use crate::ranges::Ranges;
use crate::rdns::ReverseDns;
use crate::tally::Tally;

/// How the gate answers, besides its policy.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Peers whose `X-Forwarded-*` headers are believed.
    pub trusted: IpRanges,
    /// Verify signatures on plain-http requests.
    pub allow_http: bool,
    /// Answer a slow-down `403` (nginx's `auth_request` passes only 2xx,
    /// 401 and 403), with `X-Mannerly-Action: slow` and `Retry-After`.
    pub nginx: bool,
}

/// Everything a decision reads.
pub struct Door {
    /// The crawler catalogue.
    pub catalogue: &'static Catalogue,
    /// The policy and its buckets.
    pub gate: Mutex<Gate>,
    /// Verifying keys.
    pub keys: Arc<Keys>,
    /// Operators' ranges.
    pub ranges: Arc<Ranges>,
    /// Reverse DNS, when there is a resolver.
    pub rdns: Option<ReverseDns>,
    /// How to answer.
    pub settings: Settings,
    /// Decisions counted by class and action.
    pub tally: Tally,
}

impl Door {
    /// The decision for one request handed over by `peer`.
    pub async fn decide(
        &self,
        method: &str,
        uri: &str,
        headers: &HeaderMap,
        peer: IpAddr,
    ) -> Decision {
        let arrived = std::time::Instant::now();
        let now = SystemClock.now();
        let original = Original::read(method, uri, headers, peer, &self.settings.trusted);
        let ua = headers
            .get("user-agent")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let agent = self.catalogue.classify(ua);
        let signature = match headers.contains_key("signature") {
            true => self.signature(&original, headers, now).await,
            false => None,
        };
        let mut checked = Checked {
            signature,
            ..Checked::default()
        };
        if let (Agent::Bot { token, known, .. }, Some(ip)) = (&agent, original.client) {
            checked.in_ranges = self.ranges.contains(token, *known, ua, ip);
            let bot = known.and_then(|i| Some((i, self.catalogue.get(i)?)));
            if let (Some(rdns), Some((i, k)), false) =
                (&self.rdns, bot, checked.in_ranges == Some(true))
            {
                if !k.rdns.is_empty() {
                    checked.rdns = rdns.known(i, ip, &k.rdns);
                }
            }
        }
        let identity = Visitor::of(agent, checked);
        let asked = Asked {
            target: &original.uri,
            client: original.client,
            user_agent: ua,
        };
        let decision = self
            .gate
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .decide(identity, asked, now);
        self.tally
            .count(decision.identity.class, decision.verdict, arrived.elapsed());
        decision
    }

    async fn signature(
        &self,
        original: &Original,
        headers: &HeaderMap,
        now: UnixMillis,
    ) -> Option<Checks> {
        if original.proto != "https" && !self.settings.allow_http {
            return None;
        }
        let mut config = VerifyConfig::at(now);
        config.allow_http = self.settings.allow_http;
        let outcome = self.keys.verify(&original.message(headers), &config).await;
        mannerly_identity::signature_identity(&outcome)
    }

    /// The answer to the server.
    pub fn answer(&self, d: &Decision) -> Response<Full<Bytes>> {
        let (status, retry) = match d.verdict {
            Verdict::Allow => (StatusCode::OK, None),
            Verdict::Deny => (StatusCode::FORBIDDEN, None),
            Verdict::Slow { retry_after } if self.settings.nginx => {
                (StatusCode::FORBIDDEN, Some(retry_after))
            }
            Verdict::Slow { retry_after } => (StatusCode::TOO_MANY_REQUESTS, Some(retry_after)),
        };
        let mut r = Response::builder()
            .status(status)
            .header("X-Mannerly-Identity", d.identity.header())
            .header("X-Mannerly-Action", d.verdict.as_str())
            .header("Cache-Control", "no-store");
        if let Some(s) = retry {
            r = r.header("Retry-After", s.to_string());
        }
        r.body(Full::new(Bytes::from_static(b"")))
            .unwrap_or_else(|_| Response::new(Full::default()))
    }
}

/// Serves the gate on `listener` until the task is dropped.
pub async fn serve(listener: tokio::net::TcpListener, door: Arc<Door>) -> std::io::Result<()> {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(s) => s,
            Err(e) if is_transient(&e) => {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let _ = stream.set_nodelay(true);
        let door = door.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req: Request<Incoming>| {
                let door = door.clone();
                async move { Ok::<_, Infallible>(handle(&door, req, peer).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

async fn handle(door: &Door, req: Request<Incoming>, peer: SocketAddr) -> Response<Full<Bytes>> {
    if req.uri().path() == "/healthz" && !req.headers().contains_key("x-forwarded-uri") {
        return Response::new(Full::new(Bytes::from_static(b"ok\n")));
    }
    let uri = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let d = door
        .decide(req.method().as_str(), &uri, req.headers(), peer.ip())
        .await;
    door.answer(&d)
}

/// Errors of one accept that leave the listener usable (a client gone,
/// file descriptors short for a moment).
fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock
    ) || e.raw_os_error() == Some(24)
}
