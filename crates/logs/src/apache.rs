//! Any Apache `LogFormat` string, read by translating it to the nginx
//! `log_format` it is equivalent to: each `%` directive becomes the nginx
//! variable holding the same value (`%h` is `$remote_addr`, `%t` is
//! `[$time_local]`, `%{User-Agent}i` is `$http_user_agent`), so one reader
//! serves both.

/// An Apache `LogFormat` string that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApacheFormatError {
    /// A directive this reader does not know.
    #[error("`{directive}` at byte {at} is not a directive this reader knows")]
    Unknown {
        /// The directive as written.
        directive: String,
        /// Its byte offset.
        at: usize,
    },
    /// A `%{` without its `}`.
    #[error("`%{{` at byte {0} is not closed")]
    Unclosed(usize),
    /// `%{...}t` with a time format other than the common log format's.
    #[error("`%{{{0}}}t`: only the default time (`%t`, `%{{%d/%b/%Y:%H:%M:%S %z}}t`) and `%{{sec}}t` are read")]
    TimeFormat(String),
}

/// The nginx `log_format` equivalent to an Apache `LogFormat` string (as
/// written in httpd.conf, `\"` for a quote, or without the escapes).
pub fn apache_to_nginx(format: &str) -> Result<String, ApacheFormatError> {
    let format = format.replace("\\\"", "\"");
    let b = format.as_bytes();
    let mut out = String::with_capacity(format.len() * 2);
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            let ch = format[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        let start = i;
        i += 1;
        // Conditions (`%!200,304s`, `%400,501{User-agent}i`) and the
        // original/final markers (`%<s`, `%>s`) do not change the value.
        while i < b.len()
            && (b[i] == b'<'
                || b[i] == b'>'
                || b[i] == b'!'
                || b[i] == b','
                || b[i].is_ascii_digit())
        {
            i += 1;
        }
        let mut arg = None;
        if b.get(i) == Some(&b'{') {
            let end = format[i..]
                .find('}')
                .ok_or(ApacheFormatError::Unclosed(start))?
                + i;
            arg = Some(&format[i + 1..end]);
            i = end + 1;
        }
        let Some(&letter) = b.get(i) else {
            return Err(ApacheFormatError::Unknown {
                directive: format[start..].to_owned(),
                at: start,
            });
        };
        i += 1;
        let var = directive(letter, arg).map_err(|e| match e {
            Some(e) => e,
            None => ApacheFormatError::Unknown {
                directive: format[start..i].to_owned(),
                at: start,
            },
        })?;
        out.push_str(&var);
    }
    Ok(out)
}

/// The nginx text for one directive; `Err(None)` when unknown.
fn directive(letter: u8, arg: Option<&str>) -> Result<String, Option<ApacheFormatError>> {
    let header = |prefix: &str, name: &str| {
        format!(
            "${{{prefix}{}}}",
            name.to_ascii_lowercase().replace('-', "_")
        )
    };
    Ok(match (letter, arg) {
        (b'%', None) => "%".into(),
        (b'h' | b'a', _) => "$remote_addr".into(),
        (b'l', _) => "$remote_ident".into(),
        (b'u', _) => "$remote_user".into(),
        (b't', None) => "[$time_local]".into(),
        (b't', Some("%d/%b/%Y:%H:%M:%S %z")) => "$time_local".into(),
        (b't', Some("sec")) => "$msec".into(),
        (b't', Some(other)) => return Err(Some(ApacheFormatError::TimeFormat(other.into()))),
        (b'r', None) => "$request".into(),
        (b's', None) => "$status".into(),
        (b'b' | b'B', None) => "$body_bytes_sent".into(),
        (b'O', None) => "$bytes_sent".into(),
        (b'I', None) => "$request_length".into(),
        (b'S', None) => "$apache_bytes_transferred".into(),
        (b'i', Some(name)) if name.eq_ignore_ascii_case("host") => "$http_host".into(),
        (b'i', Some(name)) => header("http_", name),
        (b'o', Some(name)) => header("sent_http_", name),
        (b'e', Some(name)) => header("apache_env_", name),
        (b'n', Some(name)) => header("apache_note_", name),
        (b'C', Some(name)) => header("cookie_", name),
        (b'v' | b'V', None) => "$host".into(),
        (b'p', _) => "$server_port".into(),
        (b'P', _) => "$apache_pid".into(),
        (b'D' | b'T', _) => "$request_time".into(),
        (b'm', None) => "$request_method".into(),
        (b'U', None) => "$uri".into(),
        (b'q', None) => "$apache_query".into(),
        (b'H', None) => "$server_protocol".into(),
        (b'f', None) => "$request_filename".into(),
        (b'k', None) => "$apache_keepalive".into(),
        (b'X', None) => "$apache_connection_status".into(),
        (b'L', None) => "$apache_log_id".into(),
        (b'R', None) => "$apache_handler".into(),
        (b'A', None) => "$server_addr".into(),
        _ => return Err(None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_formats_translate() {
        assert_eq!(
            apache_to_nginx(r#"%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\""#),
            Ok(r#"$remote_addr $remote_ident $remote_user [$time_local] "$request" $status $body_bytes_sent "${http_referer}" "${http_user_agent}""#.into())
        );
        assert_eq!(
            apache_to_nginx("%v:%p %h %t \"%r\" %>s %O %{Retry-After}o %D"),
            Ok("$host:$server_port $remote_addr [$time_local] \"$request\" $status $bytes_sent ${sent_http_retry_after} $request_time".into())
        );
        assert!(matches!(
            apache_to_nginx("%h %Z"),
            Err(ApacheFormatError::Unknown { at: 3, .. })
        ));
        assert!(matches!(
            apache_to_nginx("%{Referer"),
            Err(ApacheFormatError::Unclosed(0))
        ));
        assert!(matches!(
            apache_to_nginx("%{%Y}t"),
            Err(ApacheFormatError::TimeFormat(_))
        ));
        assert_eq!(
            apache_to_nginx("100%% %!200,304s"),
            Ok("100% $status".into())
        );
    }

    #[test]
    fn a_translated_format_reads_its_lines() {
        let f = apache_to_nginx(
            r#"%v:%p %h %l %u %t \"%r\" %>s %O \"%{Referer}i\" \"%{User-Agent}i\" %{Retry-After}o"#,
        )
        .expect("translates");
        let mut p = crate::Parser::log_format(&f).expect("compiles");
        let line = r#"shop.example:443 192.0.2.4 - - [01/Mar/2026:10:00:00 +0000] "GET /cart?id=1 HTTP/1.1" 429 512 "-" "ExampleBot/1.0" 30"#;
        let e = p.parse(line).expect("reads").expect("a request");
        assert_eq!(e.host.as_deref(), Some("shop.example"));
        assert_eq!(e.target, "/cart?id=1");
        assert_eq!((e.status, e.bytes), (Some(429), Some(512)));
        assert_eq!(e.user_agent, "ExampleBot/1.0");
        assert_eq!(e.retry_after.as_deref(), Some("30"));
    }
}
