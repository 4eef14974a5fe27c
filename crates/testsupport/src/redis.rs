//! A throwaway `redis-server` on 127.0.0.1 for one test.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` process on a free loopback port, in its own temporary
/// directory, killed when dropped.
pub struct RedisServer {
    child: Child,
    port: u16,
    dir: PathBuf,
}

/// A Redis Cluster of throwaway `redis-server` nodes on 127.0.0.1 (each
/// node a primary with its share of the 16,384 slots, no replicas),
/// created with `redis-cli --cluster create`.
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
    /// Each node's configuration arguments, given again on a restart.
    args: Vec<Vec<String>>,
}

impl RedisCluster {
    /// Starts `n` nodes (at least 3, as `redis-cli --cluster create`
    /// requires) with append-only files synced at every write, and waits
    /// until the cluster says its state is ok. `None` when `redis-server`
    /// or `redis-cli` is not installed, outside CI.
    ///
    /// # Panics
    ///
    /// In CI when `redis-server` or `redis-cli` is missing, and when the
    /// cluster cannot be created or does not come up within 30 s.
    pub fn start(n: usize) -> Option<RedisCluster> {
        if Command::new("redis-cli").arg("--version").output().is_err() {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run the Redis Cluster tests: redis-cli is missing (apt-get install redis-tools)"
            );
            eprintln!("redis-cli is not installed (apt-get install redis-tools)");
            return None;
        }
        let mut nodes = Vec::new();
        let mut args = Vec::new();
        for _ in 0..n {
            let bus = free_port();
            let a: Vec<String> = [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-port",
                &bus.to_string(),
                "--cluster-node-timeout",
                "5000",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
            let refs: Vec<&str> = a.iter().map(String::as_str).collect();
            nodes.push(RedisServer::start(&refs)?);
            args.push(a);
        }
        let addrs: Vec<String> = nodes
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port()))
            .collect();
        let out = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("redis-cli runs");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = RedisCluster { nodes, args };
        cluster.wait_ok();
        Some(cluster)
    }

    /// Every node's URL, comma-separated: `redis://127.0.0.1:P1/,...`
    /// (what `--frontier` takes for a Cluster).
    pub fn url(&self) -> String {
        self.nodes
            .iter()
            .map(RedisServer::url)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The nodes.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// Kills node `i` (SIGKILL) and starts it again with its data and its
    /// cluster configuration, then waits until the cluster is ok again.
    pub fn restart(&mut self, i: usize) {
        let refs: Vec<&str> = self.args[i].iter().map(String::as_str).collect();
        self.nodes[i].restart(&refs);
        self.wait_ok();
    }

    /// Waits until every node reports `cluster_state:ok`.
    fn wait_ok(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        for node in &self.nodes {
            loop {
                let out = Command::new("redis-cli")
                    .args(["-p", &node.port().to_string(), "cluster", "info"])
                    .output();
                if out
                    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("cluster_state:ok"))
                {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "the cluster did not come up within 30 s"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

impl RedisServer {
    /// Starts a server with `extra` configuration arguments (such as
    /// `["--appendonly", "yes"]`). `None` when `redis-server` is not
    /// installed, outside CI (the caller says SKIPPED).
    ///
    /// # Panics
    ///
    /// In CI (`CI` set) when `redis-server` is missing (`.ci/run` installs
    /// it), and when the server does not answer within 10 s.
    pub fn start(extra: &[&str]) -> Option<RedisServer> {
        let found = Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run the Redis tests: redis-server is missing (apt-get install redis-server)"
            );
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "mannerly-redis-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory for redis-server");
        let port = free_port();
        let child = spawn(&dir, port, extra);
        let server = RedisServer { child, port, dir };
        server.wait_ready(false);
        Some(server)
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The server's working directory (its append-only file lives here).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Kills the server (SIGKILL) and starts it again on the same port and
    /// directory with `extra`: what survives is what it had made durable.
    pub fn restart(&mut self, extra: &[&str]) {
        self.respawn(extra, false);
    }

    /// As [`restart`](Self::restart), but returns as soon as the server
    /// answers at all, perhaps that it is still loading its data.
    pub fn restart_loading(&mut self, extra: &[&str]) {
        self.respawn(extra, true);
    }

    fn respawn(&mut self, extra: &[&str], loading_will_do: bool) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = spawn(&self.dir, self.port, extra);
        self.wait_ready(loading_will_do);
    }

    fn wait_ready(&self, loading_will_do: bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::{Read, Write};
                let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
                let mut buf = [0u8; 64];
                if s.write_all(b"PING\r\n").is_ok() {
                    if let Ok(n) = s.read(&mut buf) {
                        if buf[..n].starts_with(b"+PONG")
                            || (loading_will_do && buf[..n].starts_with(b"-LOADING"))
                        {
                            return;
                        }
                    }
                }
            }
            assert!(
                Instant::now() < deadline,
                "redis-server on port {} did not answer within 10 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn spawn(dir: &Path, port: u16, extra: &[&str]) -> Child {
    Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .args(["--dir", &dir.display().to_string()])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
