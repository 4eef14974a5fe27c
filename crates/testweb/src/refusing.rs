//! An HTTP/2 server (cleartext, prior knowledge) that refuses every stream
//! with `REFUSED_STREAM` and counts the streams it was sent: how a test
//! proves a client sends a request once and does not quietly send it again.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::net::TcpListener;

/// A running refusing server. Dropping it stops the server.
pub struct RefusingH2 {
    addr: SocketAddr,
    streams: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for RefusingH2 {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl RefusingH2 {
    /// Listens on 127.0.0.1 at a free port.
    pub async fn start() -> io::Result<RefusingH2> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let streams = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&streams);
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(refuse_all(socket, Arc::clone(&counted)));
            }
        });
        Ok(RefusingH2 {
            addr,
            streams,
            task,
        })
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// How many streams (requests) clients have opened so far.
    pub fn streams(&self) -> usize {
        self.streams.load(Ordering::SeqCst)
    }
}

async fn refuse_all(socket: tokio::net::TcpStream, streams: Arc<AtomicUsize>) {
    let Ok(mut conn) = h2::server::handshake(socket).await else {
        return;
    };
    while let Some(Ok((_request, mut respond))) = conn.accept().await {
        streams.fetch_add(1, Ordering::SeqCst);
        respond.send_reset(h2::Reason::REFUSED_STREAM);
    }
}
