//! The product tokens of HTTP libraries and tools: a User-Agent naming
//! only one of them is every program built on it, never one client.

/// HTTP libraries and command-line tools, by product token, lower-case:
/// sent by every program built on them, so such a token names no one
/// client (the audit's `ClientLibrary` kind; the identity checks say a
/// crawler needs a token of its own).
pub const CLIENT_LIBRARIES: [&str; 69] = [
    "ahc",
    "aiohttp",
    "apache-httpclient",
    "aria2",
    "axios",
    "chef client",
    "cpp-httplib",
    "curl",
    "dart",
    "dispatch",
    "excon",
    "faraday",
    "fasthttp",
    "feedparser",
    "git",
    "go-http-client",
    "got",
    "gpxe",
    "grequests",
    "guzzle",
    "guzzlehttp",
    "http.rb",
    "http_request2",
    "httparty",
    "httpclient",
    "httpie",
    "httpurlconnection",
    "httpx",
    "hyper",
    "ipxe",
    "jakarta",
    "java",
    "java-http-client",
    "jersey",
    "libcurl",
    "libwww-perl",
    "lua-resty-http",
    "lwp-trivial",
    "mechanize",
    "node",
    "node-fetch",
    "okhttp",
    "php",
    "postmanruntime",
    "powershell",
    "python",
    "python-httpx",
    "python-requests",
    "python-urllib",
    "reactornetty",
    "requests",
    "reqwest",
    "rest-client",
    "restsharp",
    "ruby",
    "scalaj-http",
    "symfony",
    "tornado",
    "tornado-async-client",
    "typhoeus",
    "undici",
    "unirest-java",
    "universalfeedparser",
    "urllib3",
    "vert.x-web-client",
    "wget",
    "winhttp",
    "wordpress",
    "zend_http_client",
];

/// Whether a product token names an HTTP library or tool, in any case.
///
/// ```
/// use mannerly_robots::is_client_library;
/// assert!(is_client_library("Python-Requests"));
/// assert!(!is_client_library("ExampleBot"));
/// ```
pub fn is_client_library(token: &str) -> bool {
    let lower = token.to_ascii_lowercase();
    CLIENT_LIBRARIES.binary_search(&lower.as_str()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_libraries_are_sorted_for_the_search() {
        assert!(CLIENT_LIBRARIES.windows(2).all(|w| w[0] < w[1]));
        assert!(CLIENT_LIBRARIES
            .iter()
            .all(|l| *l == l.to_ascii_lowercase()));
    }
}
