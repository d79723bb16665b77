//! A wire witness: a TCP relay between the lab and PostgreSQL that forwards every byte
//! unchanged and writes down, per connection, what the client sent. A test then proves a
//! crash by what went over the wire — no ROLLBACK and no Terminate (`X`) from the crashing
//! connection, its socket simply closed — instead of trusting the runner's own report.

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use outbox_lab::pg::wire_fault::Frames;
use sqlx::postgres::{PgConnectOptions, PgSslMode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What one client connection sent, as the relay saw it.
#[derive(Clone, Debug, Default)]
pub struct Conversation {
    /// The backend's pid, from PostgreSQL's BackendKeyData message.
    pub backend_pid: Option<i32>,
    /// Each client message: its type byte and, for a query or a parse, the SQL text.
    pub sent: Vec<(u8, String)>,
    /// The client closed its socket (end of file), rather than the server.
    pub client_closed: bool,
}

impl Conversation {
    pub fn sent_terminate(&self) -> bool {
        self.sent.iter().any(|(kind, _)| *kind == b'X')
    }

    pub fn sent_sql_containing(&self, needle: &str) -> bool {
        let needle = needle.to_ascii_uppercase();
        self.sent
            .iter()
            .any(|(_, sql)| sql.to_ascii_uppercase().contains(&needle))
    }
}

pub struct Witness {
    pub port: u16,
    log: Arc<Mutex<Vec<Arc<Mutex<Conversation>>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Witness {
    /// Starts relaying to the server `opts` points at; connect through [`Witness::options`].
    pub async fn start(opts: &PgConnectOptions) -> Witness {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let upstream = (opts.get_host().to_owned(), opts.get_port());
        let log: Arc<Mutex<Vec<Arc<Mutex<Conversation>>>>> = Arc::default();
        let task = {
            let log = log.clone();
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    let conversation = Arc::new(Mutex::new(Conversation::default()));
                    log.lock().unwrap().push(conversation.clone());
                    let upstream = upstream.clone();
                    tokio::spawn(async move {
                        if let Ok(server) = TcpStream::connect(upstream).await {
                            relay(client, server, conversation).await;
                        }
                    });
                }
            })
        };
        Witness { port, log, task }
    }

    /// `opts`, sent through the witness (in plain text, so it can read the messages).
    pub fn options(&self, opts: &PgConnectOptions) -> PgConnectOptions {
        opts.clone()
            .host("127.0.0.1")
            .port(self.port)
            .ssl_mode(PgSslMode::Disable)
    }

    /// The conversation of the connection whose backend had `pid`.
    pub fn conversation_of(&self, pid: i32) -> Option<Conversation> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|c| c.lock().unwrap().clone())
            .find(|c| c.backend_pid == Some(pid))
    }
}

impl Drop for Witness {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn relay(mut client: TcpStream, mut server: TcpStream, seen: Arc<Mutex<Conversation>>) {
    let mut from_client = Frames::new(true);
    let mut from_server = Frames::new(false);
    let (mut cbuf, mut sbuf) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
    let mut first = true;
    loop {
        tokio::select! {
            read = client.read(&mut cbuf) => {
                let Ok(n) = read else { return };
                if n == 0 {
                    seen.lock().unwrap().client_closed = true;
                    return;
                }
                from_client.extend(&cbuf[..n]);
                while let Ok(Some(frame)) = from_client.next_frame() {
                    if !std::mem::take(&mut first) {
                        seen.lock().unwrap().sent.push((frame[0], sql_of(&frame)));
                    }
                }
                if server.write_all(&cbuf[..n]).await.is_err() { return; }
            }
            read = server.read(&mut sbuf) => {
                let Ok(n) = read else { return };
                if n == 0 { return; }
                from_server.extend(&sbuf[..n]);
                while let Ok(Some(frame)) = from_server.next_frame() {
                    // BackendKeyData: 'K', length 12, pid, secret key.
                    if frame[0] == b'K' && frame.len() >= 9 {
                        let pid = i32::from_be_bytes([frame[5], frame[6], frame[7], frame[8]]);
                        seen.lock().unwrap().backend_pid = Some(pid);
                    }
                }
                if client.write_all(&sbuf[..n]).await.is_err() { return; }
            }
        }
    }
}

/// The SQL text of a simple query (`Q`) or a parse (`P`: statement name, then the text).
fn sql_of(frame: &[u8]) -> String {
    let body = &frame[5..];
    let text = match frame[0] {
        b'Q' => body,
        b'P' => body
            .iter()
            .position(|&b| b == 0)
            .map_or(&[][..], |end| &body[end + 1..]),
        _ => return String::new(),
    };
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    String::from_utf8_lossy(&text[..end]).into_owned()
}
