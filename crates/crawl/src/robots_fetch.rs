//! robots.txt as the crawl fetches it: through `mannerly-fetch`'s cache,
//! with every fetch archived to WARC and reported to the loop
//! ([`RecordingFetcher`]), and a redirect to another host held to that
//! host's pacing ([`LoopGate`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mannerly_fetch::policy::{FetchOutcome, NetworkError};
use mannerly_fetch::{Fetcher, HopGate, HttpFetcher, Origin, RobotsCache, Validators};
use mannerly_polite::controller::Outcome;
use mannerly_polite::frontier::{Begin, Frontier};
use mannerly_time::UnixMillis;
use tokio::sync::mpsc;

use crate::backend::CrawlFrontier;
use crate::error::CrawlError;
use crate::page::{request_head, response_head};
use crate::warc::{Exchange, WarcWriter};

/// A robots.txt fetch the cache made, as the recording fetcher saw it.
pub(crate) struct RobotsFetch {
    /// Its latency counts to the end of the fetch (see `paced`).
    pub(crate) outcome: Outcome,
    pub(crate) done_at: Instant,
    /// The network error, when there was no response.
    pub(crate) error: Option<String>,
}

/// The robots.txt fetches made and not yet handled by the loop, by origin.
pub(crate) type Made = Arc<Mutex<HashMap<Origin, RobotsFetch>>>;

/// Wraps the robots.txt fetcher: archives every fetch and tells the engine
/// whether the cache made a request.
pub(crate) struct RecordingFetcher {
    pub(crate) inner: HttpFetcher,
    /// Each request's own header fields as they went, for its WARC record.
    pub(crate) sent: Arc<SentFields>,
    /// The crawl's evidence: each request's record goes into its WARC
    /// exchange.
    pub(crate) witness: Option<Arc<crate::witness::Witness>>,
    pub(crate) user_agent: String,
    pub(crate) made: Made,
    pub(crate) warc: Arc<Mutex<WarcWriter>>,
}

impl Fetcher for RecordingFetcher {
    async fn fetch(&self, origin: &Origin, validators: &Validators) -> FetchOutcome {
        let start = Instant::now();
        let date = UnixMillis::now();
        let outcome = self.inner.fetch(origin, validators).await;
        let latency = start.elapsed().as_millis() as u64;
        self.archive(&outcome, date);
        let polite = match &outcome {
            FetchOutcome::Response { response, .. } => Outcome::Status {
                status: response.status,
                latency,
                retry_after: response.header("retry-after").map(str::to_owned),
            },
            FetchOutcome::TooManyRedirects { redirects, .. } => Outcome::Status {
                status: redirects.last().map_or(310, |h| h.status),
                latency,
                retry_after: None,
            },
            FetchOutcome::Network {
                error: NetworkError::Stalled,
                ..
            } => Outcome::Stalled { latency },
            FetchOutcome::Network { .. } => Outcome::Failed { latency },
        };
        let error = match &outcome {
            FetchOutcome::Network { error, detail, .. } => {
                Some(format!("{}: {detail}", error.describe()))
            }
            _ => None,
        };
        if let Ok(mut m) = self.made.lock() {
            let fetch = RobotsFetch {
                outcome: polite,
                done_at: Instant::now(),
                error,
            };
            m.insert(origin.clone(), fetch);
        }
        outcome
    }
}

impl RecordingFetcher {
    /// Writes a fetch's redirects and its response to WARC. A failed write
    /// is reported when the engine next writes.
    fn archive(&self, outcome: &FetchOutcome, date: UnixMillis) {
        let hops = match outcome {
            FetchOutcome::Response { redirects, .. }
            | FetchOutcome::TooManyRedirects { redirects, .. }
            | FetchOutcome::Network { redirects, .. } => redirects.as_slice(),
        };
        for hop in hops {
            // A redirect's body is not read: the head is what there is.
            let head = response_head(hop.status, &hop.headers, &["transfer-encoding"], "");
            let has_body = hop.headers.iter().any(|(k, v)| {
                k == "transfer-encoding" || (k == "content-length" && v.trim() != "0")
            });
            self.write(&hop.url, date, &head, &[], has_body);
        }
        if let FetchOutcome::Response { response, .. } = outcome {
            // The body is stored decoded: the head says so by dropping
            // Content-Encoding and giving the stored length.
            let length = format!("content-length: {}\r\n", response.body.len());
            let skip = ["content-encoding", "content-length", "transfer-encoding"];
            let head = response_head(response.status, &response.headers, &skip, &length);
            self.write(
                &response.url,
                date,
                &head,
                &response.body,
                response.body_cut,
            );
        }
    }

    fn write(&self, url: &str, date: UnixMillis, head: &str, body: &[u8], truncated: bool) {
        let request = request_head(url, &self.user_agent, &self.sent.take(url));
        let evidence = self.witness.as_ref().and_then(|w| w.take_line(url));
        if let Ok(mut w) = self.warc.lock() {
            let _ = w.exchange(&Exchange {
                url,
                date,
                ip: None,
                request_head: request.as_bytes(),
                response_head: head.as_bytes(),
                body,
                truncated,
                evidence: evidence.as_deref(),
            });
            // Written now: the robots.txt cache may keep the answer before
            // the loop's turn ends.
            let _ = w.flush();
        }
    }
}

/// A robots.txt fetch's hop to another host, asking the loop (which owns
/// the frontier) for that host's slot, or giving it back.
pub(crate) enum GateMsg {
    Enter {
        from: String,
        to: String,
        reply: tokio::sync::oneshot::Sender<Begin>,
    },
    Leave {
        from: String,
        to: String,
        outcome: Outcome,
    },
}

/// Holds a robots.txt redirect to another host to that host's pacing, as
/// the frontier keeps it: a hop goes out only when the frontier says the
/// host may be fetched, and takes the host's slot while it is out. A hop
/// that cannot go out within `patience` is not sent (the robots.txt fetch
/// then fails closed, and is tried again later).
pub(crate) struct LoopGate {
    pub(crate) tx: mpsc::UnboundedSender<GateMsg>,
    pub(crate) patience: Duration,
}

impl HopGate for LoopGate {
    fn enter<'a>(
        &'a self,
        from: &'a url::Url,
        to: &'a url::Url,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + 'a>> {
        Box::pin(async move {
            let deadline = Instant::now() + self.patience;
            loop {
                let (reply, answer) = tokio::sync::oneshot::channel();
                let asked = GateMsg::Enter {
                    from: from.to_string(),
                    to: to.to_string(),
                    reply,
                };
                if self.tx.send(asked).is_err() {
                    return false;
                }
                match answer.await {
                    Ok(Begin::Started) => return true,
                    Ok(Begin::Wait { until }) => {
                        // The frontier's own wait, not a delay of ours.
                        let wait = until
                            .duration_since(UnixMillis::now())
                            .max(Duration::from_millis(5));
                        if Instant::now() + wait > deadline {
                            return false;
                        }
                        tokio::time::sleep(wait).await;
                    }
                    Ok(Begin::Refused { .. }) | Err(_) => return false,
                }
            }
        })
    }

    fn leave(&self, from: &url::Url, to: &url::Url, status: Option<u16>, latency: Duration) {
        let latency = latency.as_millis() as u64;
        let outcome = match status {
            Some(status) => Outcome::Status {
                status,
                latency,
                retry_after: None,
            },
            None => Outcome::Failed { latency },
        };
        let _ = self.tx.send(GateMsg::Leave {
            from: from.to_string(),
            to: to.to_string(),
            outcome,
        });
    }
}

/// Answers a robots.txt fetch's hop to another host (see [`LoopGate`]).
/// A hop that stays within the politeness key of the robots.txt being
/// fetched (another host of one registered domain, in domain mode) is
/// already covered by that release's slot.
pub(crate) async fn gate<F: CrawlFrontier>(
    frontier: &mut F,
    witness: Option<&crate::witness::Witness>,
    msg: GateMsg,
) -> Result<(), CrawlError> {
    let now = UnixMillis::now();
    let same_key = |f: &F, from: &str, to: &str| matches!((f.key_of(from), f.key_of(to)), (Ok(a), Ok(b)) if a == b);
    match msg {
        GateMsg::Enter { from, to, reply } => {
            let answer = if same_key(frontier, &from, &to) {
                Begin::Started
            } else {
                Frontier::begin_request(frontier, &to, now).await?
            };
            // The hop's record says what it was held to.
            if let (Some(w), Begin::Started, Ok(key)) = (witness, &answer, frontier.key_of(&to)) {
                if !same_key(frontier, &from, &to) {
                    w.expect(&to, frontier.pace(&key));
                }
            }
            // As a release is: known before the hop goes out, so a crawl
            // resumed after a kill holds that host while it may run.
            frontier.commit()?;
            let _ = reply.send(answer);
        }
        GateMsg::Leave { from, to, outcome } => {
            if !same_key(frontier, &from, &to) {
                Frontier::end_request(frontier, &to, &outcome, now).await?;
            }
        }
    }
    Ok(())
}

/// Until when an origin whose robots.txt is unavailable holds its pages:
/// the cache's next attempt (backoff or Retry-After), within the
/// decision's life, and at least 1 s on.
pub(crate) async fn hold_until(
    cache: &RobotsCache<RecordingFetcher>,
    origin: &Origin,
    expires: &UnixMillis,
    now: UnixMillis,
) -> UnixMillis {
    let state = cache.state(origin).await;
    state
        .retry_at
        .map_or(*expires, |r| r.min(*expires))
        .max(now.add_millis(1_000))
}

/// The header fields each robots.txt request carried beyond the client's
/// own (validators, a signature), by URL, until its WARC record takes
/// them.
#[derive(Default)]
pub(crate) struct SentFields(Mutex<std::collections::HashMap<String, Vec<(String, String)>>>);

impl SentFields {
    fn take(&self, url: &str) -> Vec<(String, String)> {
        self.0
            .lock()
            .ok()
            .and_then(|mut m| m.remove(url))
            .unwrap_or_default()
    }
}

impl mannerly_fetch::SendHook for SentFields {
    fn sending(&self, _url: &url::Url) -> Result<(), mannerly_fetch::NotSent> {
        Ok(())
    }

    fn fields(&self, url: &url::Url, fields: &[(String, String)]) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(url.as_str().to_owned(), fields.to_vec());
        }
    }
}
