//! What in a configuration the server could not serve as written, found
//! when the file is read rather than as a dropped connection later.

use hyper::header::{HeaderName, HeaderValue};

use crate::config::{Reply, WebConfig};

/// The most ports of each kind a configuration may ask for.
pub const MAX_PORTS: usize = 64;

impl WebConfig {
    /// Each problem with where it is: a route that does not start with
    /// `/` (no request path matches it), a header no HTTP message can
    /// carry, a status outside 100..=999, more than [`MAX_PORTS`] ports.
    /// Empty when the server can serve everything as written.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (what, n) in [
            ("port_count", self.port_count),
            ("tls_port_count", self.tls_port_count),
        ] {
            if n > MAX_PORTS {
                out.push(format!("{what} = {n}: at most {MAX_PORTS}"));
            }
        }
        let mut hosts: Vec<_> = self.hosts.iter().collect();
        hosts.sort_by(|a, b| a.0.cmp(b.0));
        for (host, spec) in hosts {
            let mut routes: Vec<_> = spec.routes.iter().collect();
            routes.sort_by(|a, b| a.0.cmp(b.0));
            for (path, replies) in routes {
                let at = format!("hosts.\"{host}\".routes.\"{path}\"");
                if !path.starts_with('/') {
                    out.push(format!("{at}: a route is a path starting with '/'"));
                }
                for (i, reply) in replies.iter().enumerate() {
                    reply_problems(reply, &format!("{at}[{i}]"), &mut out);
                }
            }
        }
        out
    }
}

fn reply_problems(reply: &Reply, at: &str, out: &mut Vec<String>) {
    if !(100..=999).contains(&reply.status) {
        out.push(format!("{at}: status {} is not 100 to 999", reply.status));
    }
    for (name, value) in &reply.headers {
        if HeaderName::from_bytes(name.as_bytes()).is_err() {
            out.push(format!("{at}: {name:?} is not a header name"));
        }
        if HeaderValue::from_str(value).is_err() {
            out.push(format!(
                "{at}: the {name} value {value:?} holds a control character"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::WebConfig;

    #[test]
    fn what_could_not_be_served_is_said_with_where() {
        let text = r#"
port_count = 100
[hosts."a.test"]
[[hosts."a.test".routes."x"]]
status = 42
headers = [["Bad Header", "ok"], ["X-Ok", "a\nb"]]
[[hosts."a.test".routes."/fine"]]
headers = [["Retry-After", "120"]]
"#;
        let config: WebConfig = toml::from_str(text).expect("toml");
        let p = config.problems();
        assert_eq!(
            p,
            [
                "port_count = 100: at most 64",
                "hosts.\"a.test\".routes.\"x\": a route is a path starting with '/'",
                "hosts.\"a.test\".routes.\"x\"[0]: status 42 is not 100 to 999",
                "hosts.\"a.test\".routes.\"x\"[0]: \"Bad Header\" is not a header name",
                "hosts.\"a.test\".routes.\"x\"[0]: the X-Ok value \"a\\nb\" holds a control character",
            ]
        );
        let fine: WebConfig = toml::from_str("[hosts.\"b.test\"]\n").expect("toml");
        assert!(fine.problems().is_empty());
    }
}
