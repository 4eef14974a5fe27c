//! The product token a User-Agent header names: the one name every part of
//! mannerly reads from a User-Agent (the crawler to pick its robots.txt
//! group, the audit and the gate to name a client, the bindings).

/// The product token of a `User-Agent` header, or `None` when it names
/// nothing.
///
/// Words are split at spaces, `;`, `(`, `)`, `,` and `+`, each cut at its
/// `/`. Words that name no client are passed over: `Mozilla`,
/// `compatible`, platforms and engines (`X11`, `Windows`, `Linux`,
/// `MSIE`, `AppleWebKit`, …), versions, URLs, a word after `like` (a
/// compatibility, never the client), and words that alone name no one
/// (`spider`, `bot`, `crawl`, `fetcher`, `scraper`). Of the words left,
/// the token is the first that says it is a crawler (`bot`, `crawl`,
/// `spider`, `slurp`, `fetch`, `scrap`); else the first after
/// `compatible` in the same comment (`DoCoMo/2.0 (compatible;
/// ichiro/mobile)` is `ichiro`); else the first outside a browser-style
/// header's platform comment (`Mozilla/5.0 (Macintosh; Intel Mac OS X
/// 10_15_7) … Silktide` is `Silktide`, not a device) and a Linux
/// distribution's (`Ubuntu/10.04 (lucid)`); else the first inside them;
/// else a language runtime (`Ruby, Twurly v1.1` is `Twurly`, `Java/1.8`
/// is `Java`). The token is the word's leading run of ASCII letters,
/// digits, `-`, `_` and `.`, at most 64 of them, less a version joined
/// to it by `-` (`grub-client-1.5.3` is `grub-client`, `Experibot-v2` is
/// `Experibot`): one client at every version, named as its robots.txt
/// group is.
///
/// ```
/// use mannerly_robots::product_token;
/// let ua = "Mozilla/5.0 (compatible; MyBot/1.0; +https://example.com/bot)";
/// assert_eq!(product_token(ua).as_deref(), Some("MyBot"));
/// assert_eq!(product_token("ExampleBot/2.1").as_deref(), Some("ExampleBot"));
/// assert_eq!(product_token("FreshRSS/1.11 (Linux; https://freshrss.org) like Googlebot").as_deref(), Some("FreshRSS"));
/// assert_eq!(product_token("Mozilla/5.0 (Java) outbrain").as_deref(), Some("outbrain"));
/// assert_eq!(product_token("TwengaBot-2.0 (+http://www.twenga.com/bot.html)").as_deref(), Some("TwengaBot"));
/// assert_eq!(product_token("  "), None);
/// ```
pub fn product_token(user_agent: &str) -> Option<String> {
    let platform = platform_comments(user_agent);
    // The first word of each rank: after `compatible`, outside the
    // platform comments, inside them, a runtime.
    let mut best: [Option<&str>; 4] = [None; 4];
    let mut after_like = false;
    // Where the comment of the last `compatible` closes.
    let mut compatible_until = 0;
    for (at, name) in words(user_agent) {
        let lower = name.to_ascii_lowercase();
        if lower == "compatible" {
            compatible_until = user_agent[at..]
                .find(')')
                .map_or(user_agent.len(), |i| at + i);
        }
        if std::mem::replace(&mut after_like, lower == "like") || names_no_client(&lower) {
            continue;
        }
        if CRAWLER_MARKS.iter().any(|m| lower.contains(m)) {
            return Some(clean(name)).filter(|t| !t.is_empty());
        }
        let rank = if RUNTIME_WORDS.contains(&lower.as_str()) {
            3
        } else if at < compatible_until {
            0
        } else if platform.iter().any(|r| r.contains(&at)) {
            2
        } else {
            1
        };
        best[rank].get_or_insert(name);
    }
    best.into_iter()
        .flatten()
        .map(clean)
        .find(|t| !t.is_empty())
}

/// Parts of a word that say it names a crawler.
const CRAWLER_MARKS: [&str; 6] = ["bot", "crawl", "spider", "slurp", "fetch", "scrap"];

/// Language runtimes and a library, lower-case: a client built on one
/// names it beside its own name (`Ruby, Twurly v1.1`, `Python/3.9
/// aiohttp/3.7`, Mastodon's `http.rb/5.1.1 (Mastodon/4.2.10; …)`), so it
/// is the token only when nothing else is named. Still a client's name
/// for a rule (`Java/1.8` alone is refused as `Java`), so not platform
/// words.
const RUNTIME_WORDS: [&str; 6] = ["http.rb", "java", "perl", "php", "python", "ruby"];

/// The byte ranges of a header's platform comments: the leading one
/// ([`platform_comment`]) and each that follows a Linux distribution's
/// product (`Ubuntu/10.04 (lucid)`, `Ubuntu/10.10 (2.30.6-1ubuntu5)`):
/// they say more of the system, never who the client is. A comment after
/// a browser's product is left alone: clients name themselves there
/// (`Safari/537.36 (Ecosia android@111.0)`).
fn platform_comments(user_agent: &str) -> Vec<std::ops::Range<usize>> {
    let mut found = vec![platform_comment(user_agent)];
    for (open, _) in user_agent.match_indices('(') {
        let before = user_agent[..open].trim_end();
        let product = before.rsplit([' ', ')', ';']).next().unwrap_or_default();
        let Some((name, version)) = product.split_once('/') else {
            continue;
        };
        if version.is_empty() || !DISTRIBUTIONS.iter().any(|d| name.eq_ignore_ascii_case(d)) {
            continue;
        }
        let close = user_agent[open..]
            .find(')')
            .map_or(user_agent.len(), |i| open + i);
        found.push(open..close);
    }
    found
}

/// Linux distributions, lower-case, as User-Agents name them.
const DISTRIBUTIONS: [&str; 4] = ["centos", "debian", "fedora", "ubuntu"];

/// The byte range of a browser-style header's platform comment: the
/// parentheses right after a leading `Mozilla/version`, up to a
/// `compatible` in them (what follows names the client), when they name
/// a platform (`(Nikto/2.1.5)` names none: it is the client's).
fn platform_comment(user_agent: &str) -> std::ops::Range<usize> {
    let ua = user_agent.trim_start();
    let lead = user_agent.len() - ua.len();
    let mozilla = ua
        .get(..8)
        .is_some_and(|m| m.eq_ignore_ascii_case("mozilla/"));
    let Some(open) = ua.find('(').filter(|_| mozilla) else {
        return 0..0;
    };
    let version = |b: u8| b.is_ascii_digit() || matches!(b, b'.' | b' ' | b'+');
    if !ua.get(8..open).is_some_and(|v| v.bytes().all(version)) {
        return 0..0;
    }
    let mut depth = 0usize;
    let mut end = ua.len();
    for (i, b) in ua.bytes().enumerate().skip(open) {
        if b == b'(' {
            depth += 1;
        } else if b == b')' {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                end = i;
                break;
            }
        }
    }
    let end = ua[open..end]
        .to_ascii_lowercase()
        .find("compatible")
        .map_or(end, |c| open + c);
    let names_platform = words(&ua[open..end]).any(|(_, w)| platform_word(&w.to_ascii_lowercase()));
    if !names_platform {
        return 0..0;
    }
    lead + open..lead + end
}

/// A User-Agent's words, each with its byte offset: split at spaces and
/// separators, cut at `/`, trimmed of punctuation, with URLs, addresses
/// and `key:value` words left out.
fn words(user_agent: &str) -> impl Iterator<Item = (usize, &str)> {
    user_agent
        .split([' ', ';', '(', ')', ',', '+'])
        .scan(0usize, |pos, part| {
            let at = *pos;
            *pos += part.len() + 1;
            Some((at, part))
        })
        .map(|(at, p)| (at, p.split('/').next().unwrap_or(p)))
        .map(|(at, p)| (at, p.trim_matches(|c: char| !c.is_ascii_alphanumeric())))
        .filter(|(_, p)| !p.is_empty() && !p.contains([':', '@']))
}

/// Words of platforms, engines and browsers, lower-case: they describe
/// what a client runs on or imitates, never who it is.
const PLATFORM_WORDS: [&str; 58] = [
    "amd64",
    "android",
    "applewebkit",
    "arm",
    "bot",
    "build",
    "centos",
    "chrome",
    "chromium",
    "compatible",
    "cpu",
    "crawl",
    "crawler",
    "debian",
    "edg",
    "edge",
    "en",
    "en-us",
    "fedora",
    "fetcher",
    "firefox",
    "gecko",
    "i386",
    "i586",
    "i686",
    "intel",
    "ipad",
    "iphone",
    "khtml",
    "like",
    "linux",
    "mac",
    "macintosh",
    "mobile",
    "mozilla",
    "msie",
    "netscape",
    "nt",
    "opera",
    "os",
    "robot",
    "rv",
    "safari",
    "scraper",
    "spider",
    "sv1",
    "touch",
    "trident",
    "u",
    "ubuntu",
    "version",
    "win64",
    "windows",
    "wow64",
    "x",
    "x11",
    "x64",
    "x86_64",
];

/// Whether a word (lower-case) can name no client: a platform word, a
/// generic word, a version, a URL.
fn names_no_client(lower: &str) -> bool {
    lower == "http"
        || lower == "https"
        || lower.starts_with("www.")
        || !lower.bytes().any(|b| b.is_ascii_alphabetic())
        || platform_word(lower)
}

/// Whether a word (lower-case) is one of [`PLATFORM_WORDS`].
fn platform_word(lower: &str) -> bool {
    PLATFORM_WORDS.binary_search(&lower).is_ok()
}

/// The name's leading run of token characters: a character outside them
/// ends the token (`UnicödeBöt` is `Unic`, as Google's matcher reads a
/// User-agent line), never dropped from its middle; a version joined by
/// `-` is left off ([`without_joined_version`]).
fn clean(name: &str) -> String {
    let run: String = name
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(64)
        .collect();
    match without_joined_version(&run) {
        Some(stem) => stem.to_owned(),
        None => run,
    }
}

/// `name` without the version joined to its end by `-`
/// (`grub-client-1.5.3` is `grub-client`), when it ends in one and a
/// letter stays.
pub(crate) fn without_joined_version(name: &str) -> Option<&str> {
    let dash = name.rfind('-')?;
    let rest = &name.as_bytes()[dash..];
    let stem = &name[..dash];
    (joined_version(rest) == Some(rest.len()) && stem.bytes().any(|b| b.is_ascii_alphabetic()))
        .then_some(stem)
}

/// The length of the version the bytes `b` open with, when they open
/// with one joined to a name by `-`: a `-`, an optional `v`, a digit,
/// then digits and dots (`-1.5.3`, `-v2`). [`names_token`] and
/// [`token_pattern`] name a token followed by one, so a rule for
/// `grub-client` holds at every version.
fn joined_version(b: &[u8]) -> Option<usize> {
    if b.first() != Some(&b'-') {
        return None;
    }
    let start = 1 + usize::from(matches!(b.get(1), Some(b'v' | b'V')));
    if !b.get(start).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let run = b[start..]
        .iter()
        .take_while(|c| c.is_ascii_digit() || **c == b'.')
        .count();
    Some(start + run)
}

/// The http(s) URL a User-Agent names (`+https://example.com/bot`): the
/// page about its crawler, read the same way by the audit, the gate and
/// the identity checks.
pub fn page_named(user_agent: &str) -> Option<&str> {
    user_agent
        .split(|c: char| c.is_whitespace() || c == ';' || c == '(' || c == ')')
        .map(|w| w.trim_start_matches('+'))
        .find(|w| w.starts_with("https://") || w.starts_with("http://"))
}

/// The first character of a User-Agent that no HTTP header can carry (a
/// control character other than tab), with its byte offset: the crawler,
/// the fetcher and the Signature Agent Card checks refuse such a value.
///
/// ```
/// use mannerly_robots::unsendable_char;
/// assert_eq!(unsendable_char("Bot/1.0\nX"), Some((7, '\n')));
/// assert_eq!(unsendable_char("Bot/1.0\t(+https://example.com/bot)"), None);
/// ```
pub fn unsendable_char(user_agent: &str) -> Option<(usize, char)> {
    user_agent
        .char_indices()
        .find(|&(_, c)| c.is_ascii_control() && c != '\t')
}

/// A page a User-Agent names without its scheme (`+example.com/bot`,
/// `www.example.org`): a word whose host is dotted names ending in a
/// label of letters. For saying what to write instead (`+https://...`);
/// [`page_named`] does not read such a word as a page.
///
/// ```
/// use mannerly_robots::page_without_scheme;
/// assert_eq!(page_without_scheme("ExampleBot/1.0 (+example.com/bot)"), Some("example.com/bot"));
/// assert_eq!(page_without_scheme("Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0.0.0"), None);
/// ```
pub fn page_without_scheme(user_agent: &str) -> Option<&str> {
    let label =
        |l: &str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    user_agent
        .split(|c: char| c.is_whitespace() || c == ';' || c == '(' || c == ')')
        .map(|w| w.trim_start_matches('+'))
        .filter(|w| !w.contains("://") && !w.contains('@'))
        .find(|w| {
            let host = w.split(['/', '?', '#']).next().unwrap_or_default();
            let labels: Vec<&str> = host.split('.').collect();
            let tld = labels.last().copied().unwrap_or_default();
            labels.len() >= 2
                && labels.iter().all(|l| label(l))
                && tld.len() >= 2
                && tld.bytes().all(|b| b.is_ascii_alphabetic())
        })
}

/// Whether `user_agent` names `token` as a token: the same letters in
/// either case, starting the header or after a space, `(`, `;` or `,`,
/// and ending it or followed by `/`, a space, `;`, `)` or `,`, with or
/// without a version joined by `-` before that (`BadBot-2.0;`). `BadBot`
/// is named by `Mozilla/5.0 (compatible; BadBot/1.0)`, by `badbot` and
/// by `BadBot-v2`, never by `NotBadBot/1`, `BadBotany/1` or `BadBot-2x`.
/// Server rules and the gate refuse a token by this test, and [`token_pattern`] is it as a regular
/// expression.
///
/// ```
/// use mannerly_robots::names_token;
/// assert!(names_token("Mozilla/5.0 (compatible; BadBot/1.0)", "badbot"));
/// assert!(!names_token("NotBadBot/1.0", "BadBot"));
/// assert!(!names_token("BadBotany/1.0", "BadBot"));
/// assert!(names_token("BadBot-2.0 (+http://bad.example/)", "BadBot"));
/// ```
pub fn names_token(user_agent: &str, token: &str) -> bool {
    let (ua, t) = (user_agent.as_bytes(), token.as_bytes());
    if t.is_empty() || t.len() > ua.len() {
        return false;
    }
    (0..ua.len().saturating_sub(t.len()) + 1).any(|at| {
        let before = at.checked_sub(1).map(|i| ua[i]);
        let end = at + t.len();
        let ends = |i: usize| ua.get(i).is_none_or(|a| TOKEN_AFTER.contains(a));
        ua[at..end].eq_ignore_ascii_case(t)
            && before.is_none_or(|b| TOKEN_BEFORE.contains(&b))
            && (ends(end) || joined_version(&ua[end..]).is_some_and(|n| ends(end + n)))
    })
}

/// What may come just before a token named in a User-Agent.
const TOKEN_BEFORE: [u8; 4] = [b' ', b'(', b';', b','];
/// What may come just after it.
const TOKEN_AFTER: [u8; 5] = [b'/', b' ', b';', b')', b','];

/// [`names_token`] as a regular expression that PCRE (nginx, Apache,
/// HAProxy), RE2 (Caddy) and Rust's `regex` (Cloudflare) all read alike:
/// no backslash, every character but a letter, digit, `-` or `_` inside a
/// class. Case is left to the caller's flag (`~*`, `NoCase`, `(?i)`,
/// `-i`). `None` for a token no rule may name: empty, longer than 64,
/// with a character outside letters, digits, `-`, `_`, `.` and single
/// spaces, or a word that names no client alone (`bot`, `Mozilla`,
/// `compatible`, a platform, a version).
///
/// ```
/// use mannerly_robots::token_pattern;
/// assert_eq!(token_pattern("Bad.Bot").as_deref(), Some("(^|[ (;,])Bad[.]Bot(-v?[0-9][0-9.]*)?([/ ;),]|$)"));
/// assert_eq!(token_pattern("-"), None);
/// assert_eq!(token_pattern("Mozilla"), None);
/// ```
pub fn token_pattern(token: &str) -> Option<String> {
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ' ');
    if !names_a_client(token) || token.len() > 64 || !token.chars().all(fits) {
        return None;
    }
    if token.starts_with(' ') || token.ends_with(' ') || token.contains("  ") {
        return None;
    }
    let mut out = String::from("(^|[ (;,])");
    for c in token.chars() {
        match c {
            '.' => out.push_str("[.]"),
            ' ' => out.push_str("[ ]"),
            c => out.push(c),
        }
    }
    out.push_str("(-v?[0-9][0-9.]*)?([/ ;),]|$)");
    Some(out)
}

/// Whether a name can stand for one client: not empty, not `-`, and not
/// only words that name no client (platforms, engines, `bot`, versions,
/// URLs), so a rule refusing it cannot refuse every browser.
pub fn names_a_client(name: &str) -> bool {
    let words: Vec<String> = name
        .split([' ', '-', '_', '.'])
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    name.bytes().any(|b| b.is_ascii_alphabetic())
        && !names_no_client(&name.to_ascii_lowercase())
        && !words.iter().all(|w| names_no_client(w))
}

#[cfg(test)]
mod tests {
    use super::product_token;

    #[test]
    fn the_crawler_word_wins_over_the_browser_words_before_it() {
        let t = |ua: &str| product_token(ua);
        assert_eq!(
            t("Mozilla/5.0 (compatible; MyBot/1.0; +https://x)").as_deref(),
            Some("MyBot")
        );
        assert_eq!(
            t("OpBot/1.0 (+http://op.example/bot)").as_deref(),
            Some("OpBot")
        );
        assert_eq!(t("Googlebot-Image/1.0").as_deref(), Some("Googlebot-Image"));
        assert_eq!(t("curl/8.5.0").as_deref(), Some("curl"));
        assert_eq!(t("Mozilla/5.0 (compatible)"), None);
        assert_eq!(t("UnicödeBöt").as_deref(), Some("Unic"));
        assert_eq!(t(""), None);
    }

    #[test]
    fn platform_words_and_compatibilities_never_name_a_client() {
        let t = |ua: &str| product_token(ua);
        let spinn3r = "Mozilla/5.0 (X11; U; Linux x86_64; en-US; rv:1.9.0.19; aggregator:Spinn3r (Spinn3r 3.1); http://spinn3r.com/robot) Gecko/2010040121 Firefox/3.0.19";
        assert_eq!(t(spinn3r).as_deref(), Some("Spinn3r"));
        assert_eq!(
            t("Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)").as_deref(),
            Some("Sogou")
        );
        assert_eq!(
            t("Feedly/1.0 (+http://www.feedly.com/fetcher.html; like FeedFetcher-Google)")
                .as_deref(),
            Some("Feedly")
        );
        assert_eq!(
            t("Pulsepoint XT3 web scraper").as_deref(),
            Some("Pulsepoint")
        );
        assert_eq!(
            t("TelegramBot (like TwitterBot)").as_deref(),
            Some("TelegramBot")
        );
        assert_eq!(
            t("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"),
            None
        );
        assert!(super::PLATFORM_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_platform_a_runtime_or_a_compatibility_yields_to_the_clients_own_name() {
        let t = |ua: &str| product_token(ua);
        // Device and platform words of a browser-style header's first
        // comment: `X` of `Mac OS X`, a phone's model.
        let mac = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/95.0.4638.69 Safari/537.36 Silktide";
        assert_eq!(t(mac).as_deref(), Some("Silktide"));
        let phone = "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/W.X.Y.Z Mobile Safari/537.36 (compatible; Google-InspectionTool/1.0)";
        assert_eq!(t(phone).as_deref(), Some("Google-InspectionTool"));
        let browser = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
        assert_eq!(t(browser), None);
        // A distribution's comment names its release, not the client.
        let lucid = "Mozilla/5.0 (X11; U; Linux i686; en-US; rv:1.9.2.24; ips-agent) Gecko/20111107 Ubuntu/10.04 (lucid) Firefox/3.6.24";
        assert_eq!(t(lucid).as_deref(), Some("ips-agent"));
        let epiphany = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/534.26+ (KHTML, like Gecko) Version/5.0 Safari/534.26+ Ubuntu/10.10 (2.30.6-1ubuntu5) Epiphany/2.30.6";
        assert_eq!(t(epiphany).as_deref(), Some("Epiphany"));
        // A comment after a browser's product can be the client's own.
        let ecosia = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/111.0.0.0 Mobile Safari/537.36 (Ecosia android@111.0.5563.116)";
        assert_eq!(t(ecosia).as_deref(), Some("Ecosia"));
        // A first comment that names no platform is the client's.
        assert_eq!(
            t("Mozilla/5.00 (Nikto/2.1.5) (Evasions:None) (Test:Port Check)").as_deref(),
            Some("Nikto")
        );
        // What follows `compatible` names the client, whatever it imitates.
        let phone = "DoCoMo/2.0 P900i(c100;TB;W24H11) (compatible; ichiro/mobile goo; +http://help.goo.ne.jp/)";
        assert_eq!(t(phone).as_deref(), Some("ichiro"));
        let old = "websitepulse checker/3.0 (compatible; MSIE 5.5; Netscape 4.75; Linux)";
        assert_eq!(t(old).as_deref(), Some("websitepulse"));
        // `Crawl` alone is an invitation, not a name.
        let grub = "Mozilla/4.0 (compatible; grub-client-1.5.3; Crawl your own stuff with http://grub.org)";
        assert_eq!(t(grub).as_deref(), Some("grub-client"));
        // A runtime only when nothing else is named.
        assert_eq!(
            t("Mozilla/5.0 (Java) outbrain").as_deref(),
            Some("outbrain")
        );
        assert_eq!(
            t("Ruby, Twurly v1.1 (http://twurly.org)").as_deref(),
            Some("Twurly")
        );
        assert_eq!(t("Python/3.9 aiohttp/3.7.3").as_deref(), Some("aiohttp"));
        assert_eq!(t("Java/1.8.0_151").as_deref(), Some("Java"));
        let mastodon = "http.rb/5.1.1 (Mastodon/4.2.10; +https://mastodon.social/) Bot";
        assert_eq!(t(mastodon).as_deref(), Some("Mastodon"));
        // A name beginning with a URL's scheme is still a name.
        assert_eq!(t("HTTPie/3.2.2").as_deref(), Some("HTTPie"));
        assert_eq!(t("httpunit/1.x").as_deref(), Some("httpunit"));
    }

    #[test]
    fn a_token_is_named_only_between_separators() {
        use super::names_token;
        let ua = "Mozilla/5.0 (compatible; BadBot/1.0; +https://bad.example/)";
        assert!(names_token(ua, "BADBOT"));
        assert!(names_token("BadBot", "badbot"));
        assert!(names_token("x,BadBot)", "badbot"));
        assert!(!names_token("NotBadBot/1.0", "BadBot"));
        assert!(!names_token("BadBotany/1.0", "BadBot"));
        assert!(!names_token("BadBot-Image/1.0", "BadBot"));
        assert!(!names_token("", "BadBot"));
        assert!(!names_token("BadBot", ""));
        assert!(!names_token("Bad", "BadBot"));
    }

    #[test]
    fn no_pattern_for_a_word_every_browser_carries() {
        use super::token_pattern;
        for generic in [
            "",
            "-",
            "Mozilla",
            "bot",
            "Windows NT",
            "AppleWebKit",
            "1.0",
            "x86_64",
            "Chrome",
            "Mobile-Safari",
        ] {
            assert_eq!(token_pattern(generic), None, "{generic}");
        }
        for odd in [
            "Bad\\Bot", "Bad\"Bot", "Bad/Bot", "Bad(Bot", " Bad", "Bad  Bot", "Bäd",
        ] {
            assert_eq!(token_pattern(odd), None, "{odd}");
        }
        assert_eq!(
            token_pattern("Tiny Tiny RSS").as_deref(),
            Some("(^|[ (;,])Tiny[ ]Tiny[ ]RSS(-v?[0-9][0-9.]*)?([/ ;),]|$)")
        );
    }

    #[test]
    fn a_page_written_without_its_scheme_is_found() {
        use super::page_without_scheme as bare_page;
        assert_eq!(
            bare_page("ExampleBot/1.0 (+example.com/bot)"),
            Some("example.com/bot")
        );
        assert_eq!(
            bare_page("ExampleBot/1.0 (compatible; www.example.org)"),
            Some("www.example.org")
        );
        let browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
        for ua in [
            browser,
            "ExampleBot/1.0 (mailto:bot@example.com)",
            "Bot/2.5.1",
            "ExampleBot/1.0 (+https://example.com/bot)",
        ] {
            assert_eq!(bare_page(ua), None, "{ua}");
        }
    }
}
