//! A small TCP relay between the attempt's connection and PostgreSQL that loses a COMMIT.
//!
//! It copies bytes both ways and reads the client's messages by PostgreSQL's framing
//! (a startup message, then 1 type byte + a 4-byte big-endian length that counts itself).
//! When the client sends the simple query `COMMIT`, the relay either drops it and cuts both
//! sides (PostgreSQL never sees it and rolls the open transaction back), or forwards it,
//! swallows PostgreSQL's whole reply up to ReadyForQuery and then cuts (the commit happened,
//! the client never hears of it). The client sees the same I/O error in both cases.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What the relay does to the COMMIT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitFault {
    /// Drop the COMMIT: it never reaches PostgreSQL.
    DropCommit,
    /// Deliver the COMMIT, drop PostgreSQL's reply.
    DropReply,
}

/// What the relay saw and did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelayReport {
    /// A COMMIT went through the relay and the fault was applied to it.
    pub commit_intercepted: bool,
    /// PostgreSQL answered the delivered COMMIT with `CommandComplete "COMMIT"`.
    pub server_confirmed_commit: bool,
}

/// A relay listening on an ephemeral loopback port for exactly one connection.
pub struct Relay {
    addr: SocketAddr,
    task: JoinHandle<io::Result<RelayReport>>,
    fault: Arc<OnceLock<CommitFault>>,
}

/// Where the relay connects to.
#[derive(Clone, Debug)]
pub struct Upstream {
    pub host: String,
    pub port: u16,
}

impl Relay {
    pub async fn start(upstream: Upstream, fault: CommitFault) -> io::Result<Relay> {
        let relay = Self::start_unarmed(upstream).await?;
        relay.arm(fault);
        Ok(relay)
    }

    /// A relay that passes every COMMIT through until [`Relay::arm`] chooses its fault (the
    /// stepper decides at the COMMIT step, long after connecting).
    pub async fn start_unarmed(upstream: Upstream) -> io::Result<Relay> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let fault = Arc::new(OnceLock::new());
        let armed = Arc::clone(&fault);
        let task = tokio::spawn(async move {
            let (client, _) = listener.accept().await?;
            let server = TcpStream::connect((upstream.host.as_str(), upstream.port)).await?;
            client.set_nodelay(true)?;
            server.set_nodelay(true)?;
            pump(client, server, &armed).await
        });
        Ok(Relay { addr, task, fault })
    }

    /// Applies `fault` to the next COMMIT; a relay is armed at most once.
    pub fn arm(&self, fault: CommitFault) {
        let _ = self.fault.set(fault);
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Waits for the relay to finish (it ends when it cuts, or when either side closes).
    pub async fn finish(mut self, limit: Duration) -> io::Result<RelayReport> {
        match tokio::time::timeout(limit, &mut self.task).await {
            Ok(Ok(result)) => result,
            Ok(Err(join)) => Err(io::Error::other(join)),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the relay did not finish",
            )),
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn pump(
    mut client: TcpStream,
    mut server: TcpStream,
    fault: &OnceLock<CommitFault>,
) -> io::Result<RelayReport> {
    let mut from_client = Frames::new(true);
    let mut client_buf = vec![0u8; 16 * 1024];
    let mut server_buf = vec![0u8; 16 * 1024];
    let untouched = RelayReport {
        commit_intercepted: false,
        server_confirmed_commit: false,
    };
    loop {
        tokio::select! {
            read = client.read(&mut client_buf) => {
                let n = read?;
                if n == 0 {
                    return Ok(untouched);
                }
                from_client.extend(&client_buf[..n]);
                while let Some(frame) = from_client.next_frame()? {
                    if let (true, Some(&fault)) = (is_commit(&frame), fault.get()) {
                        // Returning drops both sockets: the cut.
                        return match fault {
                            CommitFault::DropCommit => Ok(RelayReport {
                                commit_intercepted: true,
                                server_confirmed_commit: false,
                            }),
                            CommitFault::DropReply => {
                                server.write_all(&frame).await?;
                                let confirmed = swallow_reply(&mut server).await?;
                                Ok(RelayReport {
                                    commit_intercepted: true,
                                    server_confirmed_commit: confirmed,
                                })
                            }
                        };
                    }
                    server.write_all(&frame).await?;
                }
            }
            read = server.read(&mut server_buf) => {
                let n = read?;
                if n == 0 {
                    return Ok(untouched);
                }
                client.write_all(&server_buf[..n]).await?;
            }
        }
    }
}

/// Reads PostgreSQL's answer to COMMIT up to ReadyForQuery; true if it confirmed the commit.
async fn swallow_reply(server: &mut TcpStream) -> io::Result<bool> {
    let mut frames = Frames::new(false);
    let mut buf = vec![0u8; 4096];
    let mut confirmed = false;
    loop {
        let n = server.read(&mut buf).await?;
        if n == 0 {
            return Ok(confirmed);
        }
        frames.extend(&buf[..n]);
        while let Some(frame) = frames.next_frame()? {
            match frame[0] {
                b'C' => confirmed = frame[5..].starts_with(b"COMMIT"),
                b'Z' => return Ok(confirmed),
                _ => {}
            }
        }
    }
}

/// The simple-query message sqlx sends to commit: `Q`, length, "COMMIT\0".
fn is_commit(frame: &[u8]) -> bool {
    frame.first() == Some(&b'Q') && frame.get(5..) == Some(b"COMMIT\0".as_slice())
}

/// Splits a byte stream into whole protocol messages (the tests' wire witness reads with it
/// too).
pub struct Frames {
    buf: Vec<u8>,
    /// The next message is the untyped startup message (client side only).
    startup: bool,
}

impl Frames {
    /// No message of the playground comes near this; a larger length means a broken stream.
    const MAX_MESSAGE: usize = 64 * 1024 * 1024;

    /// `startup`: the stream begins with the client's untyped startup message.
    pub fn new(startup: bool) -> Self {
        Frames {
            buf: Vec::new(),
            startup,
        }
    }

    pub fn extend(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole message, type byte and length included.
    pub fn next_frame(&mut self) -> io::Result<Option<Vec<u8>>> {
        let header = if self.startup { 0 } else { 1 };
        let Some(len_bytes) = self.buf.get(header..header + 4) else {
            return Ok(None);
        };
        let len =
            u32::from_be_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]]) as usize;
        if !(4..=Self::MAX_MESSAGE).contains(&len) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "not a PostgreSQL message",
            ));
        }
        let total = header + len;
        if self.buf.len() < total {
            return Ok(None);
        }
        let rest = self.buf.split_off(total);
        let frame = std::mem::replace(&mut self.buf, rest);
        self.startup = false;
        Ok(Some(frame))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_split_startup_then_typed_messages() {
        let mut f = Frames::new(true);
        let mut bytes = vec![0, 0, 0, 8, 0, 3, 0, 0];
        bytes.extend_from_slice(b"Q\0\0\0\x0bCOMMIT\0");
        f.extend(&bytes[..5]);
        assert_eq!(f.next_frame().unwrap(), None);
        f.extend(&bytes[5..]);
        assert_eq!(f.next_frame().unwrap().unwrap().len(), 8);
        let commit = f.next_frame().unwrap().unwrap();
        assert!(is_commit(&commit));
        assert_eq!(f.next_frame().unwrap(), None);
    }

    #[test]
    fn other_queries_are_not_commits() {
        assert!(!is_commit(b"Q\0\0\0\x0dROLLBACK\0"));
        assert!(!is_commit(b"P\0\0\0\x0bCOMMIT\0"));
    }

    #[test]
    fn absurd_lengths_are_refused() {
        let mut f = Frames::new(false);
        f.extend(&[b'Q', 0xff, 0xff, 0xff, 0xff]);
        assert!(f.next_frame().is_err());
    }
}
