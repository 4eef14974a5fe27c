//! The WARC writer's own tests.

use super::*;
use flate2::write::GzEncoder;

#[test]
fn base32_matches_rfc_4648() {
    assert_eq!(base32(b""), "");
    assert_eq!(base32(b"f"), "MY======");
    assert_eq!(base32(b"fo"), "MZXQ====");
    assert_eq!(base32(b"foo"), "MZXW6===");
    assert_eq!(base32(b"foob"), "MZXW6YQ=");
    assert_eq!(base32(b"fooba"), "MZXW6YTB");
    assert_eq!(base32(b"foobar"), "MZXW6YTBOI======");
    // The SHA-1 of nothing, as web archives write it.
    assert_eq!(sha1_digest(&[b""]), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
}

#[test]
fn dates_have_milliseconds() {
    assert_eq!(
        warc_date(UnixMillis(1_795_168_800_123)),
        "2026-11-20T10:00:00.123Z"
    );
    assert_eq!(
        warc_date(UnixMillis(1_795_168_861_005)),
        "2026-11-20T10:01:01.005Z"
    );
}

fn exchange(url: &str) -> Exchange<'_> {
    Exchange {
        url,
        date: UnixMillis(1_795_168_800_000),
        ip: Some("127.0.0.1".parse().expect("ip")),
        request_head: b"GET / HTTP/1.1\r\nHost: a.example\r\n\r\n",
        response_head: b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
        body: b"<a href=/x>x</a>",
        truncated: false,
        evidence: None,
    }
}

#[test]
fn members_of_any_size_decode_to_their_parts() {
    let mut d = Compress::new(Compression::fast(), false);
    // Incompressible bytes, so the output outgrows every reservation.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let big: Vec<u8> = (0..3_000_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let short = &big[..STORE_BELOW - 7];
    for parts in [
        vec![&b""[..]],
        // Stored: the largest a stored member holds, and one byte past.
        vec![&b"ab"[..], short, b"\r\n\r\n"],
        vec![&b"abc"[..], short, b"\r\n\r\n"],
        vec![&b"head\r\n"[..], &big[..], b"\r\n\r\n"],
    ] {
        let mut member = Vec::new();
        gzip_member(&mut d, &parts, &mut member).expect("deflate");
        let len: usize = parts.iter().map(|p| p.len()).sum();
        // XFL: 0 stored, 4 compressed (fastest).
        let xfl = if len < STORE_BELOW { 0 } else { 4 };
        assert_eq!(member[8], xfl, "{len} bytes");
        let mut back = Vec::new();
        let mut one = flate2::read::GzDecoder::new(&member[..]);
        one.read_to_end(&mut back)
            .expect("a valid gzip member (CRC and length checked)");
        assert_eq!(back, parts.concat());
        assert_eq!(
            one.header().map(|h| (h.mtime(), h.filename())),
            Some((0, None)),
            "no time, no name: equal records compress to equal bytes"
        );
    }
}

#[test]
fn a_batch_of_evidence_takes_a_fraction_of_its_records_bytes() {
    // Records as a crawl writes them: each with its own chain hash.
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let lines: Vec<String> = (0..batch::MAX_RECORDS)
        .map(|i| {
            let prev: String = (0..4)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    format!("{x:016x}")
                })
                .collect();
            format!(
                r#"{{"chain":"9adc9a7cfcd5c65a","decision":{{"allowed":true,"line":null,"rule":null}},"delay":{{"required_s":1,"since_previous_s":1.002,"source":"default"}},"host":"site{i}.test","kind":"page","method":"GET","prev":"{prev}","seq":1,"url":"http://site{i}.test/p1.html","user_agent":"mannerly/0.1.0","v":1}}"#
            )
        })
        .collect();
    let written = |evidence: bool| {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = WarcWriter::open(dir.path(), "t", 1 << 30, "mannerly-test").expect("open");
        for (i, line) in lines.iter().enumerate() {
            let url = format!("http://site{i}.test/p1.html");
            w.exchange(&Exchange {
                evidence: evidence.then_some(line.as_bytes()),
                ..exchange(&url)
            })
            .expect("write");
        }
        w.sync().expect("sync");
        w.bytes_written()
    };
    let per_record = (written(true) - written(false)) / lines.len() as u64;
    let raw = lines.iter().map(String::len).sum::<usize>() / lines.len();
    // Alone in its member a record kept some 580 of its 940 bytes.
    assert!(
        per_record * 2 < raw as u64,
        "{per_record} bytes a record of {raw}"
    );
}

/// The records of a file, as (header fields, block) pairs.
fn records_of(path: &Path) -> Vec<(Vec<(String, String)>, String)> {
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(File::open(path).expect("file"))
        .read_to_string(&mut text)
        .expect("gzip");
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(r) = rest.strip_prefix("WARC/1.1\r\n") {
        let (head, after) = r.split_once("\r\n\r\n").expect("head");
        let fields: Vec<(String, String)> = head
            .split("\r\n")
            .filter_map(|l| l.split_once(": "))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let len: usize = fields
            .iter()
            .find(|(k, _)| k == "Content-Length")
            .and_then(|(_, v)| v.parse().ok())
            .expect("length");
        out.push((fields, after[..len].to_owned()));
        rest = &after[len + 4..];
    }
    assert!(rest.is_empty(), "whole records only");
    out
}

#[test]
fn evidence_goes_in_batches_each_line_beside_its_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = WarcWriter::open(dir.path(), "t", 1 << 30, "mannerly-test").expect("open");
    let n = batch::MAX_RECORDS + 3;
    let lines: Vec<String> = (0..n).map(|i| format!("{{\"seq\":{i}}}")).collect();
    for (i, line) in lines.iter().enumerate() {
        let url = format!("https://a.example/{i}");
        w.exchange(&Exchange {
            evidence: Some(line.as_bytes()),
            ..exchange(&url)
        })
        .expect("write");
    }
    w.sync().expect("sync: the last, part-full batch too");
    let records = records_of(&w.files()[0]);
    let field = |r: &(Vec<(String, String)>, String), name: &str| -> Vec<String> {
        r.0.iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    };
    let kind = |r: &(Vec<(String, String)>, String)| field(r, "WARC-Type").concat();
    // Each request record's id and the line its exchange carried.
    let requests: Vec<(String, String)> = records
        .iter()
        .filter(|r| kind(r) == "request")
        .map(|r| {
            (
                field(r, "WARC-Record-ID").concat(),
                field(r, "WARC-Target-URI").concat(),
            )
        })
        .collect();
    let batches: Vec<_> = records.iter().filter(|r| kind(r) == "metadata").collect();
    assert_eq!(batches.len(), 2, "a full batch and the rest");
    let mut seen = 0;
    for b in &batches {
        assert_eq!(field(b, "Content-Type"), ["application/x-ndjson"]);
        let named = field(b, "WARC-Concurrent-To");
        assert_eq!(named.len(), b.1.lines().count());
        for (line, id) in b.1.lines().zip(&named) {
            let (_, url) = requests.iter().find(|(r, _)| r == id).expect("a request");
            assert_eq!(url, &format!("https://a.example/{seen}"));
            assert_eq!(line, lines[seen]);
            seen += 1;
        }
    }
    assert_eq!(seen, n, "every record, once, in order");
    let before = w.bytes_written();
    w.sync().expect("sync");
    assert_eq!(w.bytes_written(), before, "nothing left to write");
}

#[test]
fn a_dropped_writer_archives_the_evidence_waiting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = WarcWriter::open(dir.path(), "t", 1 << 30, "mannerly-test").expect("open");
    w.exchange(&Exchange {
        evidence: Some(b"{\"seq\":0}\n"),
        ..exchange("https://a.example/")
    })
    .expect("write");
    let file = w.files()[0].clone();
    drop(w);
    let records = records_of(&file);
    let last = records.last().expect("records");
    assert_eq!(last.1, "{\"seq\":0}\n", "one line, its newline kept single");
}

#[test]
fn records_wait_for_flush_up_to_a_bound() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = WarcWriter::open(dir.path(), "t", 1 << 30, "mannerly-test").expect("open");
    w.exchange(&exchange("https://a.example/")).expect("write");
    let file = w.files()[0].clone();
    let len = |f: &Path| std::fs::metadata(f).expect("meta").len();
    assert_eq!(len(&file), 0, "nothing written before the flush");
    w.flush().expect("flush");
    assert_eq!(len(&file), w.bytes_written());
    assert_eq!(records_of(&file).len(), 3, "warcinfo, response, request");
    // A turn of large records is written as it goes, past the bound
    // (a body that does not compress).
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let body: Vec<u8> = (0..WRITE_PAST)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect();
    w.exchange(&Exchange {
        body: &body,
        ..exchange("https://a.example/big")
    })
    .expect("write");
    assert_eq!(len(&file), w.bytes_written());
}

#[test]
fn files_rotate_and_each_opens_with_warcinfo() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = WarcWriter::open(dir.path(), "t", 600, "mannerly-test").expect("open");
    for i in 0..4 {
        w.exchange(&exchange(&format!("https://a.example/{i}")))
            .expect("write");
    }
    w.flush().expect("flush");
    let files = w.files();
    assert!(files.len() >= 2, "{files:?}");
    for f in &files {
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(File::open(f).expect("file"))
            .read_to_string(&mut text)
            .expect("gzip");
        assert!(
            text.starts_with("WARC/1.1\r\nWARC-Type: warcinfo\r\n"),
            "{text}"
        );
        assert!(text.contains("WARC-Type: response") && text.contains("WARC-Type: request"));
    }
}

/// A writer on `dir` (files `t-NNNNN.warc.gz`) that has archived one
/// exchange.
fn writer_with_one_exchange(dir: &Path) -> WarcWriter {
    let mut w = WarcWriter::open(dir, "t", 1 << 30, "mannerly-test").expect("open");
    w.exchange(&exchange("https://a.example/1")).expect("write");
    w
}

#[test]
fn a_cut_record_is_removed_and_writing_goes_on_in_a_new_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    drop(writer_with_one_exchange(dir.path()));
    let file = dir.path().join("t-00000.warc.gz");
    let whole = std::fs::metadata(&file).expect("meta").len();
    // A kill in the middle of a write: half a member at the end.
    let mut f = OpenOptions::new().append(true).open(&file).expect("append");
    let mut half = GzEncoder::new(Vec::new(), Compression::fast());
    half.write_all(&[b'x'; 4096]).expect("gz");
    let half = half.finish().expect("gz");
    f.write_all(&half[..half.len() / 2]).expect("write");
    drop(f);
    let mut w = WarcWriter::open(dir.path(), "t", 1 << 30, "mannerly-test").expect("reopen");
    assert_eq!(std::fs::metadata(&file).expect("meta").len(), whole);
    w.exchange(&exchange("https://a.example/2")).expect("write");
    assert_eq!(w.files().len(), 2, "a new file after a resume");
}

/// A kill between a file's creation and its first write leaves an empty
/// file, which no WARC reader accepts: the next writer removes it and
/// numbers its own file in its place.
#[test]
fn a_file_left_empty_by_a_kill_is_removed_and_its_number_reused() {
    let dir = tempfile::tempdir().expect("tempdir");
    drop(writer_with_one_exchange(dir.path()));
    std::fs::File::create(dir.path().join("t-00001.warc.gz")).expect("empty file");
    let mut w = WarcWriter::open(dir.path(), "t", 1 << 30, "mannerly-test").expect("reopen");
    w.exchange(&exchange("https://a.example/2")).expect("write");
    w.flush().expect("flush");
    let files = w.files();
    assert_eq!(files.len(), 2, "{files:?}");
    for f in &files {
        let mut all = Vec::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(f).expect("open"))
            .read_to_end(&mut all)
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(all.starts_with(b"WARC/1.1\r\nWARC-Type: warcinfo"));
    }
    assert!(files[1].ends_with("t-00001.warc.gz"));
}

#[test]
fn a_member_cut_at_any_byte_is_removed_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("t-00000.warc.gz");
    let mut w = writer_with_one_exchange(dir.path());
    w.flush().expect("flush");
    let whole = std::fs::read(&file).expect("read");
    // A stored member (a short record) and a compressed one, as the writer
    // makes them.
    let body: Vec<u8> = (0..6_000u32)
        .map(|i| b"abcdefghij <a href=/p>"[(i.wrapping_mul(2_654_435_761) >> 27) as usize % 22])
        .collect();
    let mut big = exchange("https://a.example/2");
    big.body = &body;
    w.exchange(&big).expect("write");
    drop(w);
    let tail = std::fs::read(&file).expect("read")[whole.len()..].to_vec();
    for cut in 1..tail.len() {
        let mut bytes = whole.clone();
        bytes.extend_from_slice(&tail[..cut]);
        std::fs::write(&file, &bytes).expect("write");
        repair(&file).expect("repair");
        let left = std::fs::read(&file).expect("read");
        let mut all = Vec::new();
        flate2::read::MultiGzDecoder::new(&left[..])
            .read_to_end(&mut all)
            .unwrap_or_else(|e| panic!("cut after {cut} of {} bytes: {e}", tail.len()));
        assert!(left.len() >= whole.len(), "cut after {cut} bytes");
    }
}

/// The value of `name` among a record's fields.
fn field<'a>(fields: &'a [(String, String)], name: &str) -> &'a str {
    fields
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} in {fields:?}"))
}

#[test]
fn the_records_of_an_exchange_name_one_another_and_share_its_date_and_address() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = WarcWriter::open(dir.path(), "t", 1 << 30, "mannerly-test").expect("open");
    let first = exchange("https://a.example/1");
    let archived = w.exchange(&first).expect("write");
    let again = Exchange {
        ip: Some("2001:db8::1".parse().expect("ip")),
        ..exchange("https://a.example/2")
    };
    let refers_to = RefersTo {
        id: &archived.record_id,
        date: &archived.date,
        uri: first.url,
        payload_digest: &archived.payload_digest,
    };
    w.revisit(&again, Profile::IdenticalPayloadDigest, &refers_to)
        .expect("revisit");
    w.flush().expect("flush");
    let files = w.files();
    let records = records_of(&files[0]);
    let kinds: Vec<&str> = records.iter().map(|(f, _)| field(f, "WARC-Type")).collect();
    assert_eq!(
        kinds,
        ["warcinfo", "response", "request", "revisit", "request"]
    );
    let info = field(&records[0].0, "WARC-Record-ID");
    for (fields, _) in &records {
        let id = field(fields, "WARC-Record-ID");
        assert!(
            id.len() == 47 && id.starts_with("<urn:uuid:") && id.ends_with('>'),
            "{id}"
        );
        uuid::Uuid::parse_str(&id[10..46]).expect("a UUID");
    }
    for (pair, url, ip) in [
        (&records[1..3], "https://a.example/1", "127.0.0.1"),
        (&records[3..5], "https://a.example/2", "2001:db8::1"),
    ] {
        let (first, request) = (&pair[0].0, &pair[1].0);
        assert_eq!(
            field(request, "WARC-Concurrent-To"),
            field(first, "WARC-Record-ID")
        );
        for fields in [first, request] {
            assert_eq!(field(fields, "WARC-Warcinfo-ID"), info);
            assert_eq!(field(fields, "WARC-Target-URI"), url);
            assert_eq!(field(fields, "WARC-IP-Address"), ip);
            assert_eq!(field(fields, "WARC-Date"), "2026-11-20T10:00:00.000Z");
        }
    }
    assert_eq!(archived.date, "2026-11-20T10:00:00.000Z");
    assert_eq!(field(&records[1].0, "WARC-Record-ID"), archived.record_id);
    assert_eq!(field(&records[3].0, "WARC-Refers-To"), archived.record_id);
    assert_eq!(
        field(&records[2].0, "Content-Length"),
        exchange("").request_head.len().to_string()
    );
}

proptest::proptest! {
    /// An address is written as the standard library writes it.
    #[test]
    fn addresses_are_written_as_std_writes_them(v4: u32, v6: u128) {
        for ip in [
            std::net::IpAddr::from(std::net::Ipv4Addr::from(v4)),
            std::net::IpAddr::from(std::net::Ipv6Addr::from(v6)),
        ] {
            proptest::prop_assert_eq!(ip_text(ip), ip.to_string());
        }
    }
}
