//! Why a URL is not fetched: one closed set, whose words the log, the
//! summary and `status.json` write and whose labels the metrics count.

/// Why a URL was turned away without a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NotFetched {
    /// robots.txt disallows it for the crawler's product token.
    Disallowed,
    /// Its link carried `rel=nofollow`.
    RelNofollow,
    /// The page it was found on said `nofollow` (meta tag or X-Robots-Tag).
    Nofollow,
    /// Its host was given up (a Crawl-delay over the maximum, say).
    HostSkipped,
    /// Outside the crawl's scope, includes or excludes.
    OutOfScope,
    /// Its lease lapsed before it was sent (a fleet worker was stopped).
    LeaseLapsed,
    /// Its host had `--max-pages-per-host` pages already.
    MaxPagesPerHost,
    /// A redirect chain longer than the crawl follows.
    RedirectLimit,
    /// A recrawl's sitemap lastmod says it has not changed.
    UnchangedByLastmod,
    /// A recrawl's earlier copy is still fresh by its own response's
    /// `Cache-Control` or `Expires` (RFC 9111).
    FreshInCache,
    /// Under a path prefix a login stopped (the crawler never logs in).
    LoginRequired,
    /// Not a URL the crawler can request.
    UnusableUrl,
    /// Its host did not resolve, or resolved to an address refused.
    Unresolved,
    /// The frontier was full.
    Backpressure,
    /// Its media type is not among `--content-types` (its head was
    /// fetched, its body not read).
    ContentType,
}

impl NotFetched {
    /// Every reason, in the order the metrics list them.
    pub const ALL: [NotFetched; 15] = [
        NotFetched::Disallowed,
        NotFetched::RelNofollow,
        NotFetched::Nofollow,
        NotFetched::HostSkipped,
        NotFetched::OutOfScope,
        NotFetched::LeaseLapsed,
        NotFetched::MaxPagesPerHost,
        NotFetched::RedirectLimit,
        NotFetched::UnchangedByLastmod,
        NotFetched::FreshInCache,
        NotFetched::LoginRequired,
        NotFetched::UnusableUrl,
        NotFetched::Unresolved,
        NotFetched::Backpressure,
        NotFetched::ContentType,
    ];

    /// Its word in `log.jsonl`, the summary and `status.json`.
    pub fn word(self) -> &'static str {
        match self {
            NotFetched::Disallowed => "disallowed",
            NotFetched::RelNofollow => "rel-nofollow",
            NotFetched::Nofollow => "nofollow",
            NotFetched::HostSkipped => "host-skipped",
            NotFetched::OutOfScope => "out-of-scope",
            NotFetched::LeaseLapsed => "lease-lapsed",
            NotFetched::MaxPagesPerHost => "max-pages-per-host",
            NotFetched::RedirectLimit => "redirect-limit",
            NotFetched::UnchangedByLastmod => "unchanged-by-lastmod",
            NotFetched::FreshInCache => "fresh-in-cache",
            NotFetched::LoginRequired => "login-required",
            NotFetched::UnusableUrl => "unusable-url",
            NotFetched::Unresolved => "unresolved",
            NotFetched::Backpressure => "backpressure",
            NotFetched::ContentType => "content-type",
        }
    }

    /// Its `reason` label in `mannerly_not_fetched_total` (both kinds of
    /// nofollow count as `nofollow`).
    pub fn label(self) -> &'static str {
        match self {
            NotFetched::Disallowed => "disallowed",
            NotFetched::RelNofollow | NotFetched::Nofollow => "nofollow",
            NotFetched::HostSkipped => "host_skipped",
            NotFetched::OutOfScope => "out_of_scope",
            NotFetched::LeaseLapsed => "lease_lapsed",
            NotFetched::MaxPagesPerHost => "max_pages_per_host",
            NotFetched::RedirectLimit => "redirect_limit",
            NotFetched::UnchangedByLastmod => "unchanged_by_lastmod",
            NotFetched::FreshInCache => "fresh_in_cache",
            NotFetched::LoginRequired => "login_required",
            NotFetched::UnusableUrl => "unusable_url",
            NotFetched::Unresolved => "unresolved",
            NotFetched::Backpressure => "backpressure",
            NotFetched::ContentType => "content_type",
        }
    }
}

impl std::fmt::Display for NotFetched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

#[cfg(test)]
mod tests {
    use super::NotFetched;

    #[test]
    fn each_reason_has_its_own_word_and_a_valid_label() {
        let words: std::collections::HashSet<_> =
            NotFetched::ALL.iter().map(|r| r.word()).collect();
        assert_eq!(words.len(), NotFetched::ALL.len());
        for r in NotFetched::ALL {
            assert_eq!(
                r.label(),
                r.word().trim_start_matches("rel-").replace('-', "_")
            );
        }
    }
}
