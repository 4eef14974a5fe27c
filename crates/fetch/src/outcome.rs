//! What one attempt to fetch robots.txt produced: a response (after its
//! redirects), too many redirects, or a failure below HTTP and its kind.
//! The policy ([`crate::policy`]) reads these; the HTTP layer
//! ([`crate::http`]) makes them.

/// Why a fetch failed below HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkError {
    /// The name did not resolve.
    Dns,
    /// The TCP connection failed or was refused.
    Connect,
    /// The TLS handshake failed (certificate, protocol).
    Tls,
    /// No answer within the time allowed.
    Timeout,
    /// The connection was reset or closed mid-response.
    Reset,
    /// The connection closed before the body was complete.
    TruncatedBody,
    /// Anything else (including a redirect the fetcher did not follow).
    Other,
    /// No answer was read in time because this process was not running:
    /// its deadline passed while it was stopped, suspended or starved (a
    /// timer that fired over a second late says so). The site is not to
    /// blame: the policy counts nothing against it and asks again soon.
    Stalled,
}

impl std::str::FromStr for NetworkError {
    type Err = String;

    /// `dns`, `connect`, `tls`, `timeout`, `reset`, `truncated-body`,
    /// `other` or `stalled`; the error says what was given and the choices.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "dns" => NetworkError::Dns,
            "connect" => NetworkError::Connect,
            "tls" => NetworkError::Tls,
            "timeout" => NetworkError::Timeout,
            "reset" => NetworkError::Reset,
            "truncated-body" => NetworkError::TruncatedBody,
            "other" => NetworkError::Other,
            "stalled" => NetworkError::Stalled,
            _ => {
                return Err(format!(
                    "{s:?} is not a network failure: use one of 'dns', 'connect', 'tls', 'timeout', 'reset', 'truncated-body', 'other', 'stalled'"
                ))
            }
        })
    }
}

impl NetworkError {
    /// A short phrase for messages (`DNS failure`, `timeout`, ...).
    pub fn describe(self) -> &'static str {
        match self {
            NetworkError::Dns => "DNS lookup failed",
            NetworkError::Connect => "connection failed",
            NetworkError::Tls => "TLS handshake failed",
            NetworkError::Timeout => "timed out",
            NetworkError::Reset => "connection reset",
            NetworkError::TruncatedBody => "body cut short",
            NetworkError::Other => "network error",
            NetworkError::Stalled => "this crawler stalled mid-request",
        }
    }
}

/// One redirect followed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Hop {
    /// The URL that answered with the redirect.
    pub url: String,
    /// The redirect's status (301, 302, 303, 307 or 308).
    pub status: u16,
    /// The redirect's headers, names lower-cased (its body is not read).
    /// Not stored with the cache's state.
    #[serde(skip)]
    pub headers: Vec<(String, String)>,
}

/// The final HTTP response of a fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// The HTTP status.
    pub status: u16,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The (decoded) body, at most the size limit plus one byte.
    pub body: Vec<u8>,
    /// Reading stopped at the size limit; the rest was not downloaded.
    pub body_cut: bool,
    /// The URL this response came from.
    pub url: String,
}

impl HttpResponse {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What one attempt to fetch `/robots.txt` produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchOutcome {
    /// An answer arrived (any status).
    Response {
        /// The final response.
        response: HttpResponse,
        /// The redirects followed to get there.
        redirects: Vec<Hop>,
    },
    /// More redirects than allowed, or a loop.
    /// More than the redirect limit, or a loop (`is_loop`).
    TooManyRedirects {
        /// The redirects followed.
        redirects: Vec<Hop>,
        /// Whether a URL came back (a loop) rather than the limit being reached.
        is_loop: bool,
    },
    /// No answer: the network failed.
    Network {
        /// Which kind of failure.
        error: NetworkError,
        /// The underlying error, for people.
        detail: String,
        /// The redirects followed before the failure.
        redirects: Vec<Hop>,
    },
}
