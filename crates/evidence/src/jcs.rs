//! The canonical serialisation every hash and signature is taken over:
//! the JSON Canonicalization Scheme (RFC 8785). Members sorted by their
//! names' UTF-16 code units, no whitespace, strings escaped as
//! ECMAScript's `JSON.stringify` does, numbers in ECMAScript's shortest
//! form (`1`, not `1.0`; `0.25`; `1e+21`). Any JCS library in another
//! language gives the same bytes.

use serde_json::Value;

/// The RFC 7638 SHA-256 thumbprint of a JWK, unpadded base64url, from its
/// required members (for an OKP key `crv`, `kty`, `x`): the one thumbprint
/// mannerly computes, a Web Bot Auth `keyid` and an evidence checkpoint's
/// alike. The members are sorted by name and written as canonical JSON.
pub fn jwk_thumbprint(members: &[(&str, &str)]) -> String {
    use base64::Engine;
    use sha2::Digest;
    let mut sorted = members.to_vec();
    sorted.sort_by_key(|(name, _)| *name);
    let body: Vec<String> = sorted
        .iter()
        .map(|(name, value)| format!("{}:{}", Value::from(*name), Value::from(*value)))
        .collect();
    let canonical = format!("{{{}}}", body.join(","));
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(canonical.as_bytes()))
}

/// The canonical bytes of `value`.
pub fn canonical(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => number(n, out),
        Value::String(s) => string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(v, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push(b'{');
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                string(k, out);
                out.push(b':');
                write(v, out);
            }
            out.push(b'}');
        }
    }
}

fn string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

fn number(n: &serde_json::Number, out: &mut Vec<u8>) {
    if let Some(i) = n.as_i64() {
        out.extend_from_slice(i.to_string().as_bytes());
    } else if let Some(u) = n.as_u64() {
        out.extend_from_slice(u.to_string().as_bytes());
    } else {
        out.extend_from_slice(es_number(n.as_f64().unwrap_or(0.0)).as_bytes());
    }
}

/// ECMAScript's `Number.prototype.toString` for a finite double: the
/// shortest digits that read back to it, plain between 1e-7 and 1e21,
/// exponential outside.
pub(crate) fn es_number(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".into();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    // Rust's `{:e}` gives the shortest round-trip digits: `d.ddde±x`.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32;
    let n = exp.parse::<i32>().unwrap_or(0) + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let e = if e >= 0 {
            format!("+{e}")
        } else {
            e.to_string()
        };
        match k {
            1 => format!("{digits}e{e}"),
            _ => format!("{}.{}e{e}", &digits[..1], &digits[1..]),
        }
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_take_ecmascripts_shortest_form() {
        let cases = [
            (1.0, "1"),
            (0.25, "0.25"),
            (1.5, "1.5"),
            (123.456, "123.456"),
            (0.001, "0.001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (-2.5, "-2.5"),
            (0.000001, "0.000001"),
            (4.5e300, "4.5e+300"),
            (3e172, "3e+172"),
        ];
        for (x, want) in cases {
            assert_eq!(es_number(x), want, "{x}");
        }
    }

    #[test]
    fn numbers_read_back_exactly_so_canonical_bytes_are_a_fixed_point() {
        // Found by the fuzzer: without serde_json's exact float parsing,
        // `3e172` read one ulp off and was written `3.0000000000000002e+172`.
        for text in [
            "3e172",
            "0.1",
            "1.7976931348623157e308",
            "5e-324",
            "123.456",
        ] {
            let v: Value = serde_json::from_str(text).expect("json");
            let once = canonical(&v);
            let again: Value = serde_json::from_slice(&once).expect("json");
            assert_eq!(canonical(&again), once, "{text}");
        }
    }

    #[test]
    fn members_are_sorted_and_strings_escaped_as_rfc_8785_says() {
        let v: Value = serde_json::from_str(
            r#"{"b":[1.0,true,null],"a":"x\u0001\"\n\u00e9","\u20ac":1,"\r":2}"#,
        )
        .expect("json");
        let got = String::from_utf8(canonical(&v)).expect("utf-8");
        assert_eq!(
            got,
            "{\"\\r\":2,\"a\":\"x\\u0001\\\"\\né\",\"b\":[1,true,null],\"€\":1}"
        );
    }
}
