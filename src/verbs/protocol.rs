//! The out-of-band exchange of `linkperf bench`: newline-delimited JSON messages over one TCP
//! connection, like perftest's socket exchange of QP attributes, plus the per-size handshakes
//! that keep both sides in step. Every wait has a deadline, so a silent peer is an error, not
//! a hang.

use super::options::{BenchParams, BenchTest};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

pub const PROTOCOL: &str = "linkperf-verbs";
/// 2: `Done` carries the server host's counter reads around the test.
pub const VERSION: u32 = 2;
/// Default TCP port (perftest uses 18515; a different one lets both run side by side).
pub const DEFAULT_PORT: u16 = 18520;
/// A message longer than this is not from a linkperf peer.
const MAX_LINE: usize = 1 << 20;

/// How to reach one queue pair: what `ibv_modify_qp` to RTR needs from the other side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QpAddress {
    pub lid: u16,
    pub qpn: u32,
    pub psn: u32,
    /// The GID as 32 hex digits (all zero on InfiniBand without a GRH).
    pub gid: String,
}

/// One side's queue pairs and the buffer the other side may read, write or send into.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    pub qps: Vec<QpAddress>,
    pub addr: u64,
    pub rkey: u32,
    pub len: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// Client → server, first: who we are and what to run.
    Hello {
        protocol: String,
        version: u32,
        params: BenchParams,
    },
    /// Server → client: accepted, with the server's side of the device.
    Welcome {
        version: u32,
        device: String,
        port: u8,
        gid_index: u32,
        active_mtu: u32,
        max_msg_sz: u64,
    },
    /// Either side: what went wrong; the session ends.
    Error {
        message: String,
    },
    /// Client → server: create resources for this test; both sides use path MTU `mtu`.
    Setup {
        test: BenchTest,
        mtu: u32,
    },
    Endpoint(Endpoint),
    /// Client → server: the next size starts; the server prepares its buffer and receives.
    Begin {
        size: u64,
    },
    /// Server → client: prepared.
    Ready,
    /// Client → server, about once a second while a size runs: still alive.
    Progress,
    /// Client → server: the size is done; `ops` operations per QP completed.
    End {
        ops: u64,
    },
    /// Server → client: what the server found in its buffer (or receives).
    Verified {
        ok: bool,
        detail: String,
    },
    /// Client → server: the test is over, free its resources.
    Teardown,
    /// Server → client: resources freed, with the server's host name and its counters read
    /// before the test's setup and after its teardown (a counters file's `==` sections, see
    /// [`crate::counters`]; empty when it could not read them).
    Done {
        host: String,
        counters: String,
    },
    /// Client → server: the session is over.
    Bye,
}

impl Message {
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Hello { .. } => "hello",
            Message::Welcome { .. } => "welcome",
            Message::Error { .. } => "error",
            Message::Setup { .. } => "setup",
            Message::Endpoint(_) => "endpoint",
            Message::Begin { .. } => "begin",
            Message::Ready => "ready",
            Message::Progress => "progress",
            Message::End { .. } => "end",
            Message::Verified { .. } => "verified",
            Message::Teardown => "teardown",
            Message::Done { .. } => "done",
            Message::Bye => "bye",
        }
    }

    pub fn hello(params: BenchParams) -> Message {
        Message::Hello {
            protocol: PROTOCOL.into(),
            version: VERSION,
            params,
        }
    }
}

pub fn gid_hex(raw: &[u8; 16]) -> String {
    raw.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn gid_from_hex(s: &str) -> Result<[u8; 16]> {
    if s.len() != 32 || !s.is_ascii() {
        bail!("GID {s:?}: expected 32 hex digits");
    }
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16)
            .with_context(|| format!("GID {s:?}: expected 32 hex digits"))?;
    }
    Ok(out)
}

/// One TCP connection carrying [`Message`]s, with a deadline on every wait.
pub struct Channel {
    stream: TcpStream,
    buf: Vec<u8>,
    timeout: Duration,
    peer: String,
}

impl Channel {
    /// Connects to a server, retrying while it is not listening yet, until `timeout`.
    pub fn connect(host: &str, port: u16, timeout: Duration) -> Result<Channel> {
        let peer = format!("{host}:{port}");
        let addrs: Vec<SocketAddr> = (host, port)
            .to_socket_addrs()
            .with_context(|| format!("server {peer}: cannot resolve the address"))?
            .collect();
        let deadline = Instant::now() + timeout;
        let mut last_error = None;
        loop {
            for a in &addrs {
                let left = deadline.saturating_duration_since(Instant::now());
                match TcpStream::connect_timeout(a, left.max(Duration::from_millis(10))) {
                    Ok(stream) => return Channel::new(stream, peer, timeout),
                    Err(e) => last_error = Some(e),
                }
            }
            if Instant::now() >= deadline {
                let why = last_error.map_or("no address".into(), |e| e.to_string());
                bail!(
                    "server {peer}: no answer within {} s ({why}); is `linkperf bench --listen` running there?",
                    timeout.as_secs_f64()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits up to `timeout` for one client on `listener`.
    pub fn accept(listener: &TcpListener, timeout: Duration) -> Result<Channel> {
        listener.set_nonblocking(true)?;
        let deadline = Instant::now() + timeout;
        loop {
            match listener.accept() {
                Ok((stream, addr)) => {
                    stream.set_nonblocking(false)?;
                    return Channel::new(stream, addr.to_string(), timeout);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        bail!(
                            "no client connected to port {} within {} s",
                            listener.local_addr().map_or(0, |a| a.port()),
                            timeout.as_secs_f64()
                        );
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(e).context("cannot accept a client"),
            }
        }
    }

    fn new(stream: TcpStream, peer: String, timeout: Duration) -> Result<Channel> {
        stream.set_nodelay(true)?;
        Ok(Channel {
            stream,
            buf: Vec::new(),
            timeout,
            peer,
        })
    }

    pub fn peer(&self) -> &str {
        &self.peer
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub fn send(&mut self, m: &Message) -> Result<()> {
        let mut line = serde_json::to_vec(m)?;
        line.push(b'\n');
        self.stream
            .write_all(&line)
            .with_context(|| format!("peer {}: cannot send {}", self.peer, m.kind()))
    }

    /// Tells the peer why this side gives up; the peer may already be gone.
    pub fn send_error(&mut self, message: &str) {
        let _ = self.send(&Message::Error {
            message: message.to_string(),
        });
    }

    /// A complete line already buffered, parsed.
    fn take_line(&mut self) -> Result<Option<Message>> {
        let Some(end) = self.buf.iter().position(|&b| b == b'\n') else {
            if self.buf.len() > MAX_LINE {
                bail!(
                    "peer {}: sent {} bytes without a newline; not a linkperf bench peer",
                    self.peer,
                    self.buf.len()
                );
            }
            return Ok(None);
        };
        let line: Vec<u8> = self.buf.drain(..=end).collect();
        let text = String::from_utf8_lossy(&line[..end]);
        let m: Message = serde_json::from_str(text.trim()).map_err(|e| {
            let shown: String = text.chars().take(80).collect();
            anyhow::anyhow!(
                "peer {}: not a linkperf bench message ({e}): {shown:?}",
                self.peer
            )
        })?;
        if let Message::Error { message } = &m {
            bail!("peer {} reported: {message}", self.peer);
        }
        Ok(Some(m))
    }

    /// Reads what is there; `Ok(false)` when nothing arrived before the socket's timeout.
    fn fill(&mut self) -> Result<bool> {
        let mut chunk = [0u8; 4096];
        match self.stream.read(&mut chunk) {
            Ok(0) => bail!("peer {}: closed the connection", self.peer),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(true)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Ok(false),
            Err(e) if e.kind() == ErrorKind::Interrupted => Ok(false),
            Err(e) => Err(e).with_context(|| format!("peer {}: connection failed", self.peer)),
        }
    }

    /// The next message, waiting at most the channel's timeout.
    pub fn recv(&mut self) -> Result<Message> {
        let deadline = Instant::now() + self.timeout;
        loop {
            if let Some(m) = self.take_line()? {
                return Ok(m);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                bail!(
                    "peer {}: no message within {} s",
                    self.peer,
                    self.timeout.as_secs_f64()
                );
            }
            self.stream.set_read_timeout(Some(left))?;
            self.fill()?;
        }
    }

    /// The next message if one has arrived, without waiting.
    pub fn try_recv(&mut self) -> Result<Option<Message>> {
        if let Some(m) = self.take_line()? {
            return Ok(Some(m));
        }
        self.stream.set_nonblocking(true)?;
        let filled = self.fill();
        self.stream.set_nonblocking(false)?;
        filled?;
        self.take_line()
    }

    /// The next message, which must be of the kind `what`.
    pub fn expect(&mut self, what: &str) -> Result<Message> {
        let m = self.recv()?;
        if m.kind() != what {
            bail!(
                "peer {}: expected {what}, got {} (protocol out of step)",
                self.peer,
                m.kind()
            );
        }
        Ok(m)
    }

    /// Server side: reads the hello and checks protocol and version.
    pub fn receive_hello(&mut self) -> Result<BenchParams> {
        let m = self.recv().with_context(|| {
            format!(
                "peer {}: no hello; is it a linkperf bench client?",
                self.peer
            )
        })?;
        match m {
            Message::Hello {
                protocol,
                version,
                params,
            } => {
                if protocol != PROTOCOL {
                    let why = format!("protocol {protocol:?} is not {PROTOCOL:?}");
                    self.send_error(&why);
                    bail!("peer {}: {why}", self.peer);
                }
                if version != VERSION {
                    let why = format!(
                        "peer speaks {PROTOCOL} protocol version {version}, this linkperf speaks version {VERSION}"
                    );
                    self.send_error(&why);
                    bail!("peer {}: {why}", self.peer);
                }
                if let Err(why) = params.validate() {
                    self.send_error(&why);
                    bail!("peer {}: {why}", self.peer);
                }
                Ok(params)
            }
            other => bail!("peer {}: expected hello, got {}", self.peer, other.kind()),
        }
    }

    /// Client side: reads the welcome and checks the version.
    pub fn receive_welcome(&mut self) -> Result<Message> {
        let m = self.recv()?;
        match &m {
            Message::Welcome { version, .. } if *version != VERSION => bail!(
                "peer {}: server speaks {PROTOCOL} protocol version {version}, this linkperf speaks version {VERSION}",
                self.peer
            ),
            Message::Welcome { .. } => Ok(m),
            other => bail!("peer {}: expected welcome, got {}", self.peer, other.kind()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verbs::options::Stop;

    fn params() -> BenchParams {
        BenchParams {
            tests: vec![BenchTest::WriteBw, BenchTest::SendLat],
            sizes: vec![2, 65536],
            stop: Stop::Iterations(10),
            tx_depth: 128,
            qps: 1,
            inline_size: 64,
            mtu: Some(1024),
            interval: None,
        }
    }

    /// A connected client and server channel on loopback.
    fn pair(timeout: Duration) -> (Channel, Channel) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let client = std::thread::spawn(move || Channel::connect("127.0.0.1", port, timeout));
        let server = Channel::accept(&listener, timeout).unwrap();
        (client.join().unwrap().unwrap(), server)
    }

    #[test]
    fn messages_round_trip_over_tcp() {
        let (mut c, mut s) = pair(Duration::from_secs(5));
        c.send(&Message::hello(params())).unwrap();
        assert_eq!(s.receive_hello().unwrap(), params());
        let ep = Endpoint {
            qps: vec![QpAddress {
                lid: 0,
                qpn: 17,
                psn: 0xabcdef,
                gid: gid_hex(&[0xfe; 16]),
            }],
            addr: 0x7f00_0000_1000,
            rkey: 0x1234,
            len: 1 << 20,
        };
        s.send(&Message::Endpoint(ep.clone())).unwrap();
        s.send(&Message::Ready).unwrap();
        assert_eq!(c.expect("endpoint").unwrap(), Message::Endpoint(ep));
        assert_eq!(c.recv().unwrap(), Message::Ready);
        assert_eq!(c.try_recv().unwrap(), None);
        s.send(&Message::End { ops: 5 }).unwrap();
        let got = (0..200).find_map(|_| {
            std::thread::sleep(Duration::from_millis(5));
            c.try_recv().unwrap()
        });
        assert_eq!(got, Some(Message::End { ops: 5 }));
    }

    #[test]
    fn a_different_version_is_refused_on_both_sides() {
        let (mut c, mut s) = pair(Duration::from_secs(5));
        c.send(&Message::Hello {
            protocol: PROTOCOL.into(),
            version: 1,
            params: params(),
        })
        .unwrap();
        let err = s.receive_hello().unwrap_err().to_string();
        assert!(err.contains("protocol version 1"), "{err}");
        let err = c.recv().unwrap_err().to_string();
        assert!(err.contains("reported: peer speaks linkperf-verbs protocol version 1, this linkperf speaks version 2"), "{err}");
    }

    #[test]
    fn a_foreign_peer_is_named() {
        let (mut c, mut s) = pair(Duration::from_secs(5));
        // What a perftest client sends first: its QP attributes as a fixed-width string.
        c.stream
            .write_all(b"0000:000011:00a3f5:00000000000000000000ffff0a00020f\n")
            .unwrap();
        let err = s.receive_hello().unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains("not a linkperf bench message"), "{text}");
    }

    #[test]
    fn silence_times_out() {
        let (_c, mut s) = pair(Duration::from_millis(300));
        let t = Instant::now();
        let err = s.recv().unwrap_err().to_string();
        assert!(err.contains("no message within 0.3 s"), "{err}");
        assert!(t.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn nobody_listening_is_an_error_within_the_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let err = Channel::connect("127.0.0.1", port, Duration::from_millis(400))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains(&format!("server 127.0.0.1:{port}: no answer within 0.4 s")),
            "{err}"
        );
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let err = Channel::accept(&listener, Duration::from_millis(200))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("no client connected"), "{err}");
    }

    #[test]
    fn gids_travel_as_hex() {
        let raw: [u8; 16] = std::array::from_fn(|i| i as u8 * 17);
        assert_eq!(gid_from_hex(&gid_hex(&raw)).unwrap(), raw);
        assert!(gid_from_hex("zz").is_err());
    }
}
