//! How the simulated web is scripted: a host's routes of [`Reply`]s and
//! their [`Body`], the hosts generated on the fly ([`Generated`]), and the
//! whole [`WebConfig`].

use std::collections::{HashMap, HashSet};

use crate::revisit::{SitemapLastmod, Validators};
use crate::TestWebError;

/// What a response body is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Body {
    /// Exactly this text.
    Text {
        /// The text.
        text: String,
    },
    /// Exactly these bytes (for replaying captured responses).
    Binary {
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// This text, gzip-compressed, sent with `Content-Encoding: gzip`.
    Gzip {
        /// The text before compression.
        text: String,
    },
    /// `decoded_bytes` of `a`, gzip-compressed (a few KB on the wire).
    GzipBomb {
        /// Bytes after decompression.
        decoded_bytes: u64,
    },
    /// `line` repeated until the client hangs up.
    Endless {
        /// The repeated line.
        line: String,
    },
    /// `line` repeated up to `bytes` bytes.
    Huge {
        /// Total size.
        bytes: u64,
        /// The repeated line.
        line: String,
    },
    /// `text` in chunks of `chunk_bytes`, `delay_ms` apart.
    Slow {
        /// The text.
        text: String,
        /// Bytes per chunk.
        chunk_bytes: usize,
        /// Wait between chunks, milliseconds.
        delay_ms: u64,
    },
    /// Declares `Content-Length: declared` but sends only `text`, then closes.
    Truncated {
        /// What is sent.
        text: String,
        /// The Content-Length claimed.
        declared: u64,
    },
    /// Sends `text`, then resets the connection.
    ResetAfter {
        /// What is sent first.
        text: String,
    },
}

impl Default for Body {
    fn default() -> Self {
        Body::Text {
            text: String::new(),
        }
    }
}

/// One scripted response.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// Header fields.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Body,
    /// Wait this long before answering.
    pub latency_ms: u64,
    /// Close the connection without any response.
    pub reset: bool,
    /// Never answer (until the client gives up).
    pub hang: bool,
}

impl Default for Reply {
    fn default() -> Self {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: Body::default(),
            latency_ms: 0,
            reset: false,
            hang: false,
        }
    }
}

impl Reply {
    /// 200 with a text body.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            body: Body::Text { text: text.into() },
            ..Reply::default()
        }
    }

    /// An empty reply with this status.
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            ..Reply::default()
        }
    }

    /// A redirect to `location`.
    pub fn redirect(status: u16, location: impl Into<String>) -> Reply {
        Reply::status(status).header("Location", location)
    }

    /// A reply with this body.
    pub fn body(body: Body) -> Reply {
        Reply {
            body,
            ..Reply::default()
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Answers after `ms` milliseconds.
    pub fn latency(mut self, ms: u64) -> Reply {
        self.latency_ms = ms;
        self
    }

    /// Another status.
    pub fn with_status(mut self, status: u16) -> Reply {
        self.status = status;
        self
    }

    /// Close the connection without answering.
    pub fn reset() -> Reply {
        Reply {
            reset: true,
            ..Reply::default()
        }
    }

    /// Never answer.
    pub fn hang() -> Reply {
        Reply {
            hang: true,
            ..Reply::default()
        }
    }
}

/// A scripted host.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostSpec {
    /// Path (with query) to the replies for it, in order; the last repeats.
    /// A request whose path and query match no route is served the route of
    /// its path alone, if there is one.
    pub routes: HashMap<String, Vec<Reply>>,
    /// Paths not in `routes` get a generated page with this many links to
    /// other pages of the host (0: a 404 instead).
    pub generated_links: u32,
    /// Generated pages are numbered below this.
    pub generated_pages: u32,
    /// Latency added to every reply of this host.
    pub latency_ms: u64,
    /// How generated pages answer conditional requests.
    pub validators: Validators,
    /// Whether `/sitemap.xml` lists the generated pages, and how honest
    /// its lastmod is.
    pub sitemap: SitemapLastmod,
    /// Every generated page changes this often (0: only when a test says,
    /// with [`TestWeb::change`](crate::TestWeb::change)).
    pub change_every_ms: u64,
}

impl HostSpec {
    /// Scripts the replies to a path: one per request, the last repeated.
    pub fn route(mut self, path: impl Into<String>, replies: Vec<Reply>) -> HostSpec {
        self.routes.insert(path.into(), replies);
        self
    }

    /// Serve `robots` at `/robots.txt`.
    pub fn robots(self, robots: impl Into<String>) -> HostSpec {
        self.route("/robots.txt", vec![Reply::text(robots)])
    }

    /// The robots.txt this host serves at its first request (following
    /// redirects within the host), or `None` when it answers no file
    /// (an error status, a redirect out, a loop).
    pub fn served_robots(&self) -> Option<String> {
        let mut path = "/robots.txt".to_owned();
        for _ in 0..5 {
            let reply = self.routes.get(&path)?.first()?;
            match (reply.status, &reply.body) {
                (200, Body::Text { text }) => return Some(text.clone()),
                (301 | 302 | 303 | 307 | 308, _) => {
                    let (_, to) = reply
                        .headers
                        .iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case("location"))?;
                    path = to.strip_prefix('/').map(|p| format!("/{p}"))?;
                }
                _ => return None,
            }
        }
        None
    }

    /// Generated HTML pages: `pages` of them, each linking to `links` others.
    pub fn pages(mut self, pages: u32, links: u32) -> HostSpec {
        self.generated_pages = pages;
        self.generated_links = links;
        self
    }
}

/// Hosts made up on demand: `<prefix><n><suffix>` for n below `count`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Generated {
    /// Host names start with this.
    pub prefix: String,
    /// Host names end with this.
    pub suffix: String,
    /// How many hosts.
    pub count: u32,
    /// robots.txt of every generated host (`{host}` in it stands for the
    /// host's name: `Sitemap: http://{host}/sitemap.xml`).
    pub robots: String,
    /// HTML pages per host.
    pub pages_per_host: u32,
    /// Links per page.
    pub links_per_page: u32,
    /// Links that go to other generated hosts, out of `links_per_page`.
    pub cross_host_links: u32,
    /// How generated pages answer conditional requests.
    pub validators: Validators,
    /// Whether each host's `/sitemap.xml` lists its pages, and how honest
    /// its lastmod is.
    pub sitemap: SitemapLastmod,
    /// Latency added to every reply of a generated host.
    pub latency_ms: u64,
}

impl Default for Generated {
    fn default() -> Self {
        Generated {
            prefix: "h".into(),
            suffix: ".gen.test".into(),
            count: 0,
            robots: "User-agent: *\nDisallow: /private/\n".into(),
            pages_per_host: 20,
            links_per_page: 5,
            cross_host_links: 1,
            validators: Validators::None,
            sitemap: SitemapLastmod::None,
            latency_ms: 0,
        }
    }
}

/// The whole simulated web.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebConfig {
    /// Fixed ports to listen on; empty: `port_count` free ports.
    pub ports: Vec<u16>,
    /// Free ports to listen on when `ports` is empty (2).
    pub port_count: usize,
    /// Ports that speak https (TLS with a test CA, see
    /// [`TestWeb::ca_der`](crate::TestWeb::ca_der)); fixed, or `tls_port_count` free ones.
    pub tls_ports: Vec<u16>,
    /// Free https ports when `tls_ports` is empty (1).
    pub tls_port_count: usize,
    /// Hosts by name (`a.test`), or by name and port (`a.test:8080`) for a
    /// spec that applies to one port only.
    pub hosts: HashMap<String, HostSpec>,
    /// Names the resolver fails to resolve (DNS errors).
    pub dns_failures: HashSet<String>,
    /// Hosts generated by the thousand.
    pub generated: Generated,
    /// Print one line per request to stderr.
    pub log: bool,
    /// Keep a [`RequestRecord`](crate::RequestRecord) per request (on by default; turn off for
    /// long load runs, where per-host in-flight maxima are still kept).
    pub record: bool,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            ports: Vec::new(),
            port_count: 2,
            tls_ports: Vec::new(),
            tls_port_count: 1,
            hosts: HashMap::new(),
            dns_failures: HashSet::new(),
            generated: Generated::default(),
            log: false,
            record: true,
        }
    }
}

impl WebConfig {
    /// Reads a TOML config file (see `examples/testweb.toml`).
    pub fn from_toml_file(path: &str) -> Result<WebConfig, TestWebError> {
        let text = std::fs::read_to_string(path).map_err(|source| TestWebError::ReadConfig {
            path: path.to_owned(),
            source,
        })?;
        let bad = |message: String| TestWebError::BadConfig {
            path: path.to_owned(),
            message,
        };
        let config: WebConfig = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let problems = config.problems();
        if !problems.is_empty() {
            return Err(bad(format!("\n  {}", problems.join("\n  "))));
        }
        Ok(config)
    }
}
