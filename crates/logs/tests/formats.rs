//! One line of every format, written here: its format found by itself,
//! and the fields an audit needs read from it.

use mannerly_logs::{detect, parse_rfc3339, Format};

/// (format, lines, time, client, host, target, status, user agent)
type Case = (
    Format,
    &'static [&'static str],
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static str,
    Option<u16>,
    &'static str,
);

const CASES: &[Case] = &[
    (
        Format::Combined,
        &[r#"192.0.2.1 - - [01/Mar/2026:10:00:00 +0100] "GET /a?b=1 HTTP/1.1" 200 512 "https://r.example/" "Mozilla/5.0 (compatible; ExampleBot/1.0)""#],
        "2026-03-01T09:00:00Z", "192.0.2.1", None, "/a?b=1", Some(200), "Mozilla/5.0 (compatible; ExampleBot/1.0)",
    ),
    (
        Format::Combined,
        &[r#"www.a.test:443 2001:db8::7 - bob [01/Mar/2026:10:00:00 +0000] "GET / HTTP/2.0" 304 0 "-" "curl/8.5.0""#],
        "2026-03-01T10:00:00Z", "2001:db8::7", Some("www.a.test"), "/", Some(304), "curl/8.5.0",
    ),
    (
        Format::Common,
        &[r#"192.0.2.2 - - [01/Mar/2026:10:00:00 +0000] "GET /c HTTP/1.0" 404 -"#],
        "2026-03-01T10:00:00Z", "192.0.2.2", None, "/c", Some(404), "",
    ),
    (
        Format::TraefikClf,
        &[r#"192.0.2.3 - - [01/Mar/2026:10:00:00 +0000] "GET /t HTTP/1.1" 200 9 "-" "Go-http-client/1.1" 17 "web@docker" "http://10.0.0.2:80" 4ms"#],
        "2026-03-01T10:00:00Z", "192.0.2.3", None, "/t", Some(200), "Go-http-client/1.1",
    ),
    (
        Format::W3c,
        &[
            "#Software: Microsoft Internet Information Services 10.0",
            "#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken",
            "2026-03-01 10:00:00 10.0.0.1 GET /iis q=2 443 - 192.0.2.4 Mozilla/5.0+(compatible;+bingbot/2.0) - 200 0 0 12",
        ],
        "2026-03-01T10:00:00Z", "192.0.2.4", None, "/iis?q=2", Some(200), "Mozilla/5.0 (compatible; bingbot/2.0)",
    ),
    (
        Format::CloudFront,
        &["2026-03-01\t10:00:00\tLAX1\t500\t192.0.2.5\tGET\td1.cloudfront.net\t/cf\t200\t-\tMozilla/5.0%20(compatible;%20CCBot/2.0)\t-\t-\tHit\tid1\twww.a.test\thttps\t30\t0.002\t-\tTLSv1.3\tTLS_AES_128_GCM_SHA256\tHit\tHTTP/2.0\t-\t-\t5000\t0.002\tHit\ttext/html\t500\t-\t-"],
        "2026-03-01T10:00:00Z", "192.0.2.5", Some("www.a.test"), "/cf", Some(200), "Mozilla/5.0 (compatible; CCBot/2.0)",
    ),
    (
        Format::Alb,
        &[r#"h2 2026-03-01T10:00:00.250000Z app/lb/1 192.0.2.6:40000 10.0.0.1:80 0.001 0.002 0.000 429 429 100 200 "GET https://www.a.test:443/alb?x=1 HTTP/2.0" "GPTBot/1.2" ECDHE TLSv1.2 arn:tg "Root=1" "www.a.test" "arn:cert" 0 2026-03-01T10:00:00Z "forward" "-" "-" "10.0.0.1:80" "429" "-" "-""#],
        "2026-03-01T10:00:00.250Z", "192.0.2.6", Some("www.a.test"), "/alb?x=1", Some(429), "GPTBot/1.2",
    ),
    (
        Format::Elb,
        &[r#"2026-03-01T10:00:00.000000Z lb 192.0.2.7:1000 10.0.0.1:80 0.000 0.001 0.000 200 200 0 29 "GET http://www.a.test:80/elb HTTP/1.1" "curl/8.5.0" - -"#],
        "2026-03-01T10:00:00Z", "192.0.2.7", Some("www.a.test"), "/elb", Some(200), "curl/8.5.0",
    ),
    (
        Format::S3,
        &[r#"0123abcd bucket [01/Mar/2026:10:00:00 +0000] 192.0.2.8 arn:aws:iam::1:user/x REQ1 REST.GET.OBJECT key.txt "GET /bucket/key.txt HTTP/1.1" 200 - 10 10 5 4 "-" "aws-sdk-go/1.0" - hostid SigV4 ECDHE AuthHeader bucket.s3.amazonaws.com TLSv1.3 -"#],
        "2026-03-01T10:00:00Z", "192.0.2.8", Some("bucket.s3.amazonaws.com"), "/bucket/key.txt", Some(200), "aws-sdk-go/1.0",
    ),
    (
        Format::Haproxy,
        &[r#"Mar  1 10:00:00 lb1 haproxy[123]: 192.0.2.9:5000 [01/Mar/2026:10:00:00.125] fe~ be/s1 0/0/1/2/3 200 512 - - ---- 3/3/1/1/0 0/0 {www.a.test|Mozilla/5.0 (compatible; Googlebot/2.1)} "GET /hp HTTP/1.1""#],
        "2026-03-01T10:00:00.125Z", "192.0.2.9", Some("www.a.test"), "/hp", Some(200), "Mozilla/5.0 (compatible; Googlebot/2.1)",
    ),
    (
        // The User-Agent captured before the Host.
        Format::Haproxy,
        &[r#"192.0.2.9:5001 [01/Mar/2026:10:00:01.000] fe~ be/s1 0/0/1/2/3 200 512 - - ---- 3/3/1/1/0 0/0 {Mozilla/5.0 (compatible; Googlebot/2.1)|www.a.test} "GET /hp2 HTTP/1.1""#],
        "2026-03-01T10:00:01Z", "192.0.2.9", Some("www.a.test"), "/hp2", Some(200), "Mozilla/5.0 (compatible; Googlebot/2.1)",
    ),
    (
        Format::Caddy,
        &[r#"{"level":"info","ts":1772359200.5,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"10.0.0.9","client_ip":"192.0.2.10","proto":"HTTP/2.0","method":"GET","host":"www.a.test","uri":"/caddy","headers":{"User-Agent":["ClaudeBot/1.0"]}},"status":503,"size":0,"resp_headers":{"Retry-After":["120"]}}"#],
        "2026-03-01T10:00:00.500Z", "192.0.2.10", Some("www.a.test"), "/caddy", Some(503), "ClaudeBot/1.0",
    ),
    (
        Format::TraefikJson,
        &[r#"{"ClientHost":"192.0.2.11","ClientAddr":"192.0.2.11:1","RequestHost":"www.a.test","RequestMethod":"GET","RequestPath":"/tj?y=2","DownstreamStatus":200,"DownstreamContentSize":7,"StartUTC":"2026-03-01T10:00:00.123456789Z","request_User-Agent":"Applebot/0.1"}"#],
        "2026-03-01T10:00:00.123Z", "192.0.2.11", Some("www.a.test"), "/tj?y=2", Some(200), "Applebot/0.1",
    ),
    (
        Format::Cloudflare,
        &[r#"{"ClientIP":"192.0.2.12","ClientRequestHost":"www.a.test","ClientRequestMethod":"GET","ClientRequestURI":"/cfl","ClientRequestUserAgent":"PerplexityBot/1.0","EdgeStartTimestamp":1772359200250000000,"EdgeResponseStatus":200,"EdgeResponseBytes":42}"#],
        "2026-03-01T10:00:00.250Z", "192.0.2.12", Some("www.a.test"), "/cfl", Some(200), "PerplexityBot/1.0",
    ),
    (
        Format::NginxJson,
        &[r#"{"time_iso8601":"2026-03-01T11:00:00+01:00","remote_addr":"192.0.2.13","host":"www.a.test","request":"GET /nj HTTP/1.1","status":"200","body_bytes_sent":"9","http_user_agent":"YandexBot/3.0","sent_http_retry_after":"-"}"#],
        "2026-03-01T10:00:00Z", "192.0.2.13", Some("www.a.test"), "/nj", Some(200), "YandexBot/3.0",
    ),
];

#[test]
fn every_format_is_found_and_read() {
    for (format, lines, time, client, host, target, status, ua) in CASES {
        let mut parser = detect(lines).unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!(parser.format(), *format, "{lines:?}");
        let entry = lines
            .iter()
            .find_map(|l| parser.parse(l).expect("reads").map(|e| e.into_owned()))
            .unwrap_or_else(|| panic!("{format}: no entry"));
        let want = parse_rfc3339(time).expect("time").millis;
        assert_eq!(entry.stamp.millis, want, "{format}");
        assert_eq!(
            entry.client.map(|c| c.to_string()).as_deref(),
            Some(*client),
            "{format}"
        );
        assert_eq!(entry.host.as_deref(), *host, "{format}");
        assert_eq!(entry.target, *target, "{format}");
        assert_eq!(entry.status, *status, "{format}");
        assert_eq!(entry.user_agent, *ua, "{format}");
    }
}

#[test]
fn a_logged_retry_after_is_kept() {
    let (_, lines, ..) = CASES
        .iter()
        .find(|c| c.0 == Format::Caddy)
        .expect("a caddy case");
    let line = lines[0];
    let mut p = detect(&[line]).expect("caddy");
    let e = p.parse(line).expect("reads").expect("entry");
    assert_eq!(e.retry_after.as_deref(), Some("120"));
}

#[test]
fn a_forced_format_that_does_not_fit_says_so() {
    let mut p = mannerly_logs::Parser::new(Format::Alb).expect("parser");
    let err = p.parse(CASES[0].1[0]).expect_err("not an ALB line");
    assert!(err.to_string().starts_with("type:"), "{err}");
}

#[test]
fn the_servers_own_messages_are_skipped_not_counted_unreadable() {
    let cases: &[(Format, &str)] = &[
        (
            Format::Combined,
            r#"2026/03/01 10:00:00 [error] 31#31: *46 "/srv/x" is not found (2: No such file or directory), client: 192.0.2.1"#,
        ),
        (
            Format::Haproxy,
            "192.0.2.4:50033 [01/Mar/2026:10:00:00.123] fe/be: SSL handshake failure",
        ),
        (
            Format::Haproxy,
            "Mar  1 10:00:00 lb1 haproxy[812]: Proxy www started.",
        ),
        (
            Format::Haproxy,
            "Server be_app/app2 is DOWN, reason: Layer4 timeout",
        ),
        (
            Format::Caddy,
            r#"{"level":"debug","ts":1772359200.5,"logger":"http.handlers.reverse_proxy","msg":"selected upstream"}"#,
        ),
        (
            Format::TraefikJson,
            "DEBUG: SomePlugin: 2026/03/01 10:00:00 cache updated",
        ),
    ];
    for (format, line) in cases {
        let mut p = mannerly_logs::Parser::new(*format).expect("parser");
        assert_eq!(p.parse(line), Ok(None), "{format}: {line}");
    }
    // A broken request line is still unreadable, and says so.
    let mut p = mannerly_logs::Parser::new(Format::Combined).expect("parser");
    assert!(p
        .parse(r#"192.0.2.1 - - [01/Mar/2026:10:00:00 +0000] "GET / HTTP/1.1" two 5"#)
        .is_err());
}

#[test]
fn a_file_mixing_vhost_and_plain_combined_lines_reads_whole() {
    let lines = [
        r#"www.a.test:443 192.0.2.1 - - [01/Mar/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "ExampleBot/1.0""#,
        r#"192.0.2.2 - - [01/Mar/2026:10:00:01 +0000] "GET /b HTTP/1.1" 200 5 "-" "ExampleBot/1.0""#,
        r#"shop.a.test 192.0.2.3 - - [01/Mar/2026:10:00:02 +0000] "GET /c HTTP/1.1" 200 5 "-" "ExampleBot/1.0""#,
    ];
    let mut p = detect(&lines).expect("detected");
    let hosts: Vec<Option<String>> = lines
        .iter()
        .map(|l| {
            p.parse(l)
                .expect("reads")
                .expect("a request")
                .host
                .map(|h| h.into_owned())
        })
        .collect();
    assert_eq!(
        hosts,
        [Some("www.a.test".into()), None, Some("shop.a.test".into())]
    );
}

#[test]
fn json_logs_with_their_own_keys_are_read_by_name() {
    use mannerly_logs::{Layout, Parser};
    let spec = "ip=client.ip,time=@t,uri=/req/path,query=/req/q,method=/req/verb,status=code,user_agent=/req/headers/ua,host=/req/host";
    let mut p = Parser::layout(&Layout::JsonFields(spec.into())).expect("a layout");
    assert_eq!(p.format(), Format::JsonFields);
    let line = r#"{"client.ip":"192.0.2.8","@t":"2026-03-01T10:00:00Z","code":429,"req":{"path":"/x","q":"a=1","verb":"HEAD","host":"a.test","headers":{"ua":"ExampleBot/1.0"}}}"#;
    let e = p.parse(line).expect("reads").expect("a request");
    assert_eq!(e.client, "192.0.2.8".parse().ok());
    assert_eq!((e.method.as_ref(), e.target.as_ref()), ("HEAD", "/x?a=1"));
    assert_eq!((e.status, e.host.as_deref()), (Some(429), Some("a.test")));
    assert_eq!(e.user_agent, "ExampleBot/1.0");
    for (bad, says) in [
        ("ip=a,uri=b", "time="),
        ("time=t,uri=u,colour=c", "`colour` is not one of"),
        ("time=t,uri", "is not fact=key"),
        ("time=t,uri=u,ip=a,ip=b", "`ip` is given twice"),
    ] {
        let err = Parser::layout(&Layout::JsonFields(bad.into())).expect_err(bad);
        assert!(err.to_string().contains(says), "{bad}: {err}");
    }
}

#[test]
fn an_apache_logformat_reads_its_lines() {
    use mannerly_logs::{Layout, Parser};
    let f = r#"%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %D"#;
    let mut p = Parser::layout(&Layout::Apache(f.into())).expect("a layout");
    assert_eq!(p.format(), Format::ApacheFormat);
    let e = p
        .parse(r#"192.0.2.1 - - [01/Mar/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "ExampleBot/1.0" 1234"#)
        .expect("reads")
        .expect("a request");
    assert_eq!((e.target.as_ref(), e.status), ("/a", Some(200)));
    let err = Parser::layout(&Layout::Apache("%h %Q".into())).expect_err("unknown");
    assert!(
        err.to_string().starts_with("--apache-format: `%Q`"),
        "{err}"
    );
}

#[test]
fn a_combined_line_keeps_a_retry_after_logged_after_it() {
    let lines = [
        r#"192.0.2.1 - - [01/Mar/2026:10:00:00 +0000] "GET /a HTTP/1.1" 503 0 "-" "ExampleBot/1.0" "120""#,
        r#"192.0.2.1 - - [01/Mar/2026:10:00:01 +0000] "GET /b HTTP/1.1" 200 5 "-" "ExampleBot/1.0" "-""#,
        r#"192.0.2.1 - - [01/Mar/2026:10:00:02 +0000] "GET /c HTTP/1.1" 429 0 "-" "ExampleBot/1.0" "Sun, 01 Mar 2026 10:05:00 GMT""#,
    ];
    let mut p = detect(&lines).expect("combined");
    assert_eq!(p.format(), Format::Combined);
    let got: Vec<Option<String>> = lines
        .iter()
        .map(|l| {
            let e = p.parse(l).expect("reads").expect("entry");
            assert_eq!(e.user_agent, "ExampleBot/1.0");
            e.retry_after.map(|r| r.into_owned())
        })
        .collect();
    assert_eq!(
        got,
        [
            Some("120".to_owned()),
            None,
            Some("Sun, 01 Mar 2026 10:05:00 GMT".to_owned())
        ]
    );
}

#[test]
fn a_quote_left_open_is_a_damaged_line_never_another_format() {
    let good = r#"192.0.2.1 - - [01/Mar/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)""#;
    let damaged = r#"192.0.2.9 - - [01/Mar/2026:10:00:01 +0000] "GET /b HTTP/1.1" 200 5 "-" "Mozilla/5.0 (compatible; Googlebot/2.1"#;
    let mut p = detect(&[good, damaged]).expect("combined");
    assert_eq!(p.format(), Format::Combined);
    let err = p.parse(damaged).expect_err("damaged");
    assert!(err.to_string().contains("user-agent"), "{err}");
    // Alone, the damaged line is not taken for the common format.
    assert!(detect(&[damaged]).is_err());
}

/// The first entry `lines` give, read by the format found from them (or by
/// `layout`).
fn first_entry(
    layout: Option<mannerly_logs::Layout>,
    lines: &[&str],
) -> mannerly_logs::Entry<'static> {
    let mut p = match layout {
        Some(l) => mannerly_logs::Parser::layout(&l).expect("a layout"),
        None => detect(lines).unwrap_or_else(|e| panic!("{lines:?}: {e}")),
    };
    lines
        .iter()
        .find_map(|l| p.parse(l).expect("reads").map(|e| e.into_owned()))
        .unwrap_or_else(|| panic!("{lines:?}: no entry"))
}

#[test]
fn the_user_a_server_authenticated_is_read_wherever_it_is_logged() {
    use mannerly_logs::Layout;
    let w3c = |user: &str| {
        [
            "#Fields: date time cs-method cs-uri-stem cs-username c-ip cs(User-Agent) sc-status"
                .to_owned(),
            format!("2026-03-01 10:00:00 GET /iis {user} 192.0.2.4 ExampleBot/1.0 200"),
        ]
    };
    let (w3c_named, w3c_none) = (w3c(r"CORP\alice"), w3c("-"));
    // A combined line, with what comes before its time.
    let clf = |before: &str| {
        format!(r#"{before} [01/Mar/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "curl/8.5.0""#)
    };
    let (alice_line, none_line) = (clf("192.0.2.1 - alice"), clf("192.0.2.1 - -"));
    let (carol_line, bare_line) = (clf("192.0.2.1 carol"), clf("192.0.2.1"));
    // (what, a layout given, lines, the user read)
    type UserCase<'a> = (&'a str, Option<Layout>, Vec<&'a str>, Option<&'a str>);
    let cases: Vec<UserCase<'_>> = vec![
        ("combined", None, vec![&alice_line], Some("alice")),
        ("combined, no user", None, vec![&none_line], None),
        (
            "vhost combined",
            None,
            vec![
                r#"www.a.test:443 2001:db8::7 - bob [01/Mar/2026:10:00:00 +0000] "GET / HTTP/2.0" 304 0 "-" "curl/8.5.0""#,
            ],
            Some("bob"),
        ),
        ("ident left out", None, vec![&carol_line], Some("carol")),
        ("ident and user left out", None, vec![&bare_line], None),
        (
            "s3",
            None,
            vec![
                r#"0123abcd bucket [01/Mar/2026:10:00:00 +0000] 192.0.2.8 arn:aws:iam::1:user/x REQ1 REST.GET.OBJECT key.txt "GET /bucket/key.txt HTTP/1.1" 200 - 10 10 5 4 "-" "aws-sdk-go/1.0" - hostid SigV4 ECDHE AuthHeader bucket.s3.amazonaws.com TLSv1.3 -"#,
            ],
            Some("arn:aws:iam::1:user/x"),
        ),
        (
            "s3, anonymous",
            None,
            vec![
                r#"0123abcd bucket [01/Mar/2026:10:00:00 +0000] 192.0.2.8 - REQ1 REST.GET.OBJECT key.txt "GET /bucket/key.txt HTTP/1.1" 200 - 10 10 5 4 "-" "ExampleBot/1.0" - hostid - - - bucket.s3.amazonaws.com - -"#,
            ],
            None,
        ),
        (
            "w3c",
            None,
            w3c_named.iter().map(String::as_str).collect(),
            Some(r"CORP\alice"),
        ),
        (
            "w3c, no user",
            None,
            w3c_none.iter().map(String::as_str).collect(),
            None,
        ),
        (
            "caddy",
            None,
            vec![
                r#"{"ts":1772359200.5,"request":{"client_ip":"192.0.2.10","method":"GET","host":"www.a.test","uri":"/","headers":{"User-Agent":["curl/8.5.0"]}},"user_id":"Bob","status":200}"#,
            ],
            Some("Bob"),
        ),
        (
            "caddy, no user",
            None,
            vec![
                r#"{"ts":1772359200.5,"request":{"client_ip":"192.0.2.10","method":"GET","host":"www.a.test","uri":"/","headers":{"User-Agent":["curl/8.5.0"]}},"user_id":"","status":200}"#,
            ],
            None,
        ),
        (
            "traefik",
            None,
            vec![
                r#"{"ClientHost":"192.0.2.11","ClientUsername":"dave","RequestHost":"www.a.test","RequestMethod":"GET","RequestPath":"/","DownstreamStatus":200,"StartUTC":"2026-03-01T10:00:00Z"}"#,
            ],
            Some("dave"),
        ),
        (
            "nginx json",
            None,
            vec![
                r#"{"time_iso8601":"2026-03-01T10:00:00+00:00","remote_addr":"192.0.2.13","remote_user":"erin","request":"GET / HTTP/1.1","status":"200"}"#,
            ],
            Some("erin"),
        ),
        (
            "json fields",
            Some(Layout::JsonFields("time=t,uri=u,user=who".into())),
            vec![r#"{"t":"2026-03-01T10:00:00Z","u":"/","who":"frank"}"#],
            Some("frank"),
        ),
        (
            "log_format",
            Some(Layout::Nginx(
                r#"$remote_addr $remote_user [$time_local] "$request" $status"#.into(),
            )),
            vec![r#"192.0.2.1 grace [01/Mar/2026:10:00:00 +0000] "GET / HTTP/1.1" 200"#],
            Some("grace"),
        ),
        (
            "apache LogFormat",
            Some(Layout::Apache(r#"%h %l %u %t \"%r\" %>s %b"#.into())),
            vec![r#"192.0.2.1 - heidi [01/Mar/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5"#],
            Some("heidi"),
        ),
    ];
    for (what, layout, lines, user) in cases {
        let e = first_entry(layout, &lines);
        assert_eq!(e.user.as_deref(), user, "{what}");
        assert_eq!(e.signed_in(), user.is_some(), "{what}");
    }
}

#[test]
fn a_name_the_server_refused_is_not_signed_in() {
    for status in [401, 403, 407] {
        let line = format!(
            r#"192.0.2.1 - mallory [01/Mar/2026:10:00:00 +0000] "GET / HTTP/1.1" {status} 5 "-" "ExampleBot/1.0""#
        );
        let e = first_entry(None, &[&line]);
        assert_eq!(e.user.as_deref(), Some("mallory"));
        assert!(!e.signed_in(), "{status}");
    }
}

#[test]
fn a_layout_that_logs_retry_after_says_when_none_was_sent() {
    use mannerly_logs::Layout;
    let with = r#"$remote_addr [$time_local] "$request" $status "$http_user_agent" "$sent_http_retry_after""#;
    let line = |ra: &str| {
        format!(
            r#"192.0.2.1 [01/Mar/2026:10:00:00 +0000] "GET / HTTP/1.1" 503 "ExampleBot/1.0" "{ra}""#
        )
    };
    let (none, thirty) = (line("-"), line("30"));
    let caddy = r#"{"ts":1772359200.5,"request":{"client_ip":"192.0.2.10","method":"GET","host":"www.a.test","uri":"/","headers":{"User-Agent":["ExampleBot/1.0"]}},"status":503,"resp_headers":{"Server":["Caddy"]}}"#;
    let nginx_json = r#"{"time_iso8601":"2026-03-01T10:00:00+00:00","remote_addr":"192.0.2.13","request":"GET / HTTP/1.1","status":"503","http_user_agent":"ExampleBot/1.0","sent_http_retry_after":"-"}"#;
    let traefik = r#"{"ClientHost":"192.0.2.11","RequestHost":"www.a.test","RequestMethod":"GET","RequestPath":"/","DownstreamStatus":503,"StartUTC":"2026-03-01T10:00:00Z","downstream_Content-Type":"text/plain"}"#;
    let combined = r#"192.0.2.1 - - [01/Mar/2026:10:00:00 +0000] "GET / HTTP/1.1" 503 5 "-" "ExampleBot/1.0" "-""#;
    // (what, layout, line, Retry-After read, whether the layout logs it)
    type Case<'a> = (&'a str, Option<Layout>, &'a str, Option<&'a str>, bool);
    let cases: Vec<Case<'_>> = vec![
        (
            "log_format, none sent",
            Some(Layout::Nginx(with.into())),
            &none,
            None,
            true,
        ),
        (
            "log_format, 30",
            Some(Layout::Nginx(with.into())),
            &thirty,
            Some("30"),
            true,
        ),
        ("caddy", None, caddy, None, true),
        ("nginx json", None, nginx_json, Some("-"), true),
        (
            "traefik: which headers it keeps is not said",
            None,
            traefik,
            None,
            false,
        ),
        (
            "combined: a last quoted field may be anything",
            None,
            combined,
            None,
            false,
        ),
    ];
    for (what, layout, line, ra, logged) in cases {
        let e = first_entry(layout, &[line]);
        assert_eq!(e.retry_after.as_deref(), ra, "{what}");
        assert_eq!(e.retry_after_logged, logged, "{what}");
    }
    let without = r#"$remote_addr [$time_local] "$request" $status "$http_user_agent""#;
    let e = first_entry(
        Some(Layout::Nginx(without.into())),
        &[r#"192.0.2.1 [01/Mar/2026:10:00:00 +0000] "GET / HTTP/1.1" 503 "ExampleBot/1.0""#],
    );
    assert!(!e.retry_after_logged);
}
