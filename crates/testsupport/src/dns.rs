//! A DNS server on 127.0.0.1 that answers PTR, A and AAAA from tables,
//! for tests of forward-confirmed reverse DNS.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use hickory_proto::op::{Message, MessageType, ResponseCode};
use hickory_proto::rr::rdata::{A, AAAA, PTR};
use hickory_proto::rr::{Name, RData, Record, RecordType};

/// Starts the server on the current tokio runtime: PTR names per
/// address, addresses per name; NXDOMAIN otherwise.
pub async fn dns_server(
    ptr: HashMap<IpAddr, Vec<&'static str>>,
    fwd: HashMap<&'static str, Vec<IpAddr>>,
) -> SocketAddr {
    let sock = tokio::net::UdpSocket::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = sock.local_addr().expect("addr");
    let ptr: HashMap<String, Vec<&str>> = ptr
        .into_iter()
        .map(|(ip, names)| (Name::from(ip).to_ascii().to_ascii_lowercase(), names))
        .collect();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 1500];
        loop {
            let Ok((n, peer)) = sock.recv_from(&mut buf).await else {
                continue;
            };
            let Ok(q) = Message::from_vec(&buf[..n]) else {
                continue;
            };
            let mut resp = Message::new();
            resp.set_id(q.id())
                .set_message_type(MessageType::Response)
                .set_recursion_available(true)
                .set_authoritative(true);
            let mut found = false;
            for query in q.queries() {
                resp.add_query(query.clone());
                let name = query.name().to_ascii().to_ascii_lowercase();
                match query.query_type() {
                    RecordType::PTR => {
                        for target in ptr.get(&name).into_iter().flatten() {
                            let rd = RData::PTR(PTR(Name::from_str(target).expect("name")));
                            resp.add_answer(Record::from_rdata(query.name().clone(), 60, rd));
                            found = true;
                        }
                    }
                    RecordType::A | RecordType::AAAA => {
                        for ip in fwd.get(name.trim_end_matches('.')).into_iter().flatten() {
                            let rd = match (ip, query.query_type()) {
                                (IpAddr::V4(v4), RecordType::A) => RData::A(A(*v4)),
                                (IpAddr::V6(v6), RecordType::AAAA) => RData::AAAA(AAAA(*v6)),
                                _ => continue,
                            };
                            resp.add_answer(Record::from_rdata(query.name().clone(), 60, rd));
                            found = true;
                        }
                        if fwd.contains_key(name.trim_end_matches('.')) {
                            found = true;
                        }
                    }
                    _ => {}
                }
            }
            if !found {
                resp.set_response_code(ResponseCode::NXDomain);
            }
            if let Ok(bytes) = resp.to_vec() {
                let _ = sock.send_to(&bytes, peer).await;
            }
        }
    });
    addr
}
