//! Hosts generated on the fly (`h17.gen.test`): their pages, links,
//! sitemaps and robots.txt, and the versions of pages that change.

use mannerly_time::UnixMillis;

use crate::config::*;
use crate::revisit::{self, SitemapLastmod};
use crate::state::{Asked, State};

fn generated_page(
    host: &str,
    path: &str,
    spec_pages: u32,
    links: u32,
    g: &Generated,
) -> Option<String> {
    let n: u32 = path
        .strip_prefix("/p")?
        .strip_suffix(".html")?
        .parse()
        .ok()?;
    if n >= spec_pages.max(1) && path != "/" {
        return None;
    }
    let mut html =
        format!("<!DOCTYPE html><html><head><title>{host} page {n}</title></head><body>\n");
    let mut h: u64 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ host.len() as u64;
    for i in 0..links {
        h = h
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let target = (h >> 33) as u32 % spec_pages.max(1);
        if i < g.cross_host_links && g.count > 0 && host.ends_with(&g.suffix) {
            let other = (h >> 13) as u32 % g.count;
            html.push_str(&format!(
                "<a href=\"http://{}{}{}/p{target}.html\">x</a>\n",
                g.prefix, other, g.suffix
            ));
        } else {
            html.push_str(&format!("<a href=\"/p{target}.html\">p{target}</a>\n"));
        }
    }
    html.push_str("</body></html>\n");
    Some(html)
}

/// A generated page (with its validators, 304 when they match), the
/// host's sitemap, or a 404.
pub(crate) fn generated(
    state: &State,
    spec: &HostSpec,
    g: &Generated,
    host: &str,
    path: &str,
    asked: &Asked,
) -> Reply {
    let version = |p: &str| version_of(state, host, p, spec.change_every_ms);
    if path == "/sitemap.xml" && spec.sitemap != SitemapLastmod::None {
        let origin = format!("http://{}", asked.authority);
        let now = UnixMillis::now();
        let xml = revisit::sitemap(spec.sitemap, &origin, spec.generated_pages, version, now);
        return Reply::text(xml).header("Content-Type", "application/xml");
    }
    let page = if path == "/" { "/p0.html" } else { path };
    let Some(html) = generated_page(host, page, spec.generated_pages, spec.generated_links, g)
        .filter(|_| spec.generated_links > 0 || spec.generated_pages > 0)
    else {
        return Reply::status(404).header("Content-Type", "text/plain");
    };
    let v = version(page);
    let validators = revisit::headers(spec.validators, host, page, v);
    let unchanged = revisit::not_modified(
        spec.validators,
        host,
        page,
        v,
        asked.if_none_match.as_deref(),
        asked.if_modified_since.as_deref(),
    );
    let mut reply = if unchanged {
        Reply::status(304)
    } else {
        Reply::text(format!("{html}<!-- version {v} -->\n")).header("Content-Type", "text/html")
    };
    reply.headers.extend(validators);
    reply
}

/// A generated page's version: the changes a test made, and those of its
/// schedule.
fn version_of(state: &State, host: &str, path: &str, every_ms: u64) -> u32 {
    let made = state
        .versions
        .lock()
        .get(&(host.to_owned(), path.to_owned()))
        .copied()
        .unwrap_or(0);
    let elapsed = u64::try_from(state.start.elapsed().as_millis()).unwrap_or(u64::MAX);
    made.saturating_add(revisit::scheduled(elapsed, every_ms))
}
