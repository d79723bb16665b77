//! "Step by step" over `GET /api/step`: a learner holds a real transaction open and walks
//! it pause by pause. Every wait is bounded: a run that neither ends nor refuses within
//! [`REPLY_TIMEOUT`] is what issue 29 calls wedged.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use http::header;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::browser::{Jar, refusal_code};

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long a learner waits for the server's next frame before calling the run broken.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(15);
/// Pauses and refusals one run may produce before it is called broken: a run of the longest
/// mode has five pauses, one more after `other_writer`.
const MAX_FRAMES: usize = 24;
/// A close that the server does not acknowledge in this time is simply dropped.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// What the learner does on the way.
#[derive(Clone, Debug)]
pub enum Plan {
    /// `next` at every pause until the report.
    Commit,
    /// `other_writer` at the second pause (after the UPDATE), then `next` to the end.
    OtherWriter,
    /// `crash` at the n-th pause (1 = after BEGIN).
    Crash(usize),
    /// The tab is closed at the n-th pause: the socket goes away without a word.
    Abandon(usize),
    /// At the pause before COMMIT, COMMIT is sent and its reply lost.
    ReplyLost(&'static str),
}

#[derive(Clone, Debug)]
pub enum Outcome {
    /// The run reached its report (a crash's report too).
    Served,
    /// The learner closed the socket mid-run, as planned.
    Abandoned,
    /// The upgrade was answered with an HTTP status instead (`503 unavailable`, …).
    Upgrade(u16, String),
    /// An `{"error": {"code"}}` ended the run.
    Refused(String),
    /// The socket failed, closed or stayed silent past the timeout.
    Broken(&'static str),
}

impl Outcome {
    pub fn label(&self) -> String {
        match self {
            Outcome::Served => "served".into(),
            Outcome::Abandoned => "abandoned".into(),
            Outcome::Upgrade(status, code) => format!("upgrade {status} {code}"),
            Outcome::Refused(code) => format!("refused {code}"),
            Outcome::Broken(why) => format!("broken: {why}"),
        }
    }

    pub fn is_wedged(&self) -> bool {
        matches!(self, Outcome::Broken(_))
    }

    /// A 5xx upgrade, or a run ended by the refusals that an HTTP action answers with 5xx.
    pub fn is_server_error(&self) -> bool {
        match self {
            Outcome::Upgrade(status, _) => *status >= 500,
            Outcome::Refused(code) => matches!(code.as_str(), "internal" | "unavailable"),
            _ => false,
        }
    }
}

pub struct Run {
    pub outcome: Outcome,
    /// How long each reply to a command took.
    pub replies: Vec<Duration>,
}

/// Opens the stepper socket as the playground's page does (its cookie, its `Origin`) and
/// keeps a sandbox cookie the upgrade may set.
pub async fn connect(url: &str, origin: &str, jar: &mut Jar) -> Result<Socket, Outcome> {
    let ws_url = format!("ws{}/api/step", url.trim_start_matches("http"));
    let mut request = ws_url
        .into_client_request()
        .map_err(|_| Outcome::Broken("bad socket URL"))?;
    let headers = request.headers_mut();
    if let Ok(v) = origin.parse() {
        headers.insert(header::ORIGIN, v);
    }
    if let Some(cookie) = jar.header().and_then(|c| c.parse().ok()) {
        headers.insert(header::COOKIE, cookie);
    }
    let connecting = tokio_tungstenite::connect_async(request);
    match tokio::time::timeout(REPLY_TIMEOUT, connecting).await {
        Err(_) => Err(Outcome::Broken("upgrade timed out")),
        Ok(Err(tungstenite::Error::Http(response))) => {
            let code = response
                .body()
                .as_deref()
                .map_or_else(|| "-".to_owned(), refusal_code);
            Err(Outcome::Upgrade(response.status().as_u16(), code))
        }
        Ok(Err(_)) => Err(Outcome::Broken("upgrade failed")),
        Ok(Ok((socket, response))) => {
            for value in response.headers().get_all(header::SET_COOKIE) {
                if let Ok(value) = value.to_str() {
                    jar.keep(value);
                }
            }
            Ok(socket)
        }
    }
}

/// A server frame, as the run needs to tell them apart.
enum Frame {
    Pause { next: Option<String> },
    Report,
    Error(String),
}

fn parse(text: &str) -> Option<Frame> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    if let Some(pause) = v.get("pause") {
        let next = pause
            .get("next")
            .and_then(|n| n.as_str())
            .map(str::to_owned);
        return Some(Frame::Pause { next });
    }
    if v.get("report").is_some() {
        return Some(Frame::Report);
    }
    let code = v.get("error")?.get("code")?.as_str()?;
    Some(Frame::Error(code.to_owned()))
}

/// The next text frame, bounded by [`REPLY_TIMEOUT`]; pings are answered by the library.
async fn next_frame(socket: &mut Socket) -> Result<Frame, Outcome> {
    let deadline = tokio::time::Instant::now() + REPLY_TIMEOUT;
    loop {
        let received = tokio::time::timeout_at(deadline, socket.next()).await;
        match received {
            Err(_) => return Err(Outcome::Broken("no reply in 15 s")),
            Ok(None) | Ok(Some(Ok(Message::Close(_)))) => {
                return Err(Outcome::Broken("closed by the server"));
            }
            Ok(Some(Err(_))) => return Err(Outcome::Broken("socket error")),
            Ok(Some(Ok(Message::Text(text)))) => {
                return parse(text.as_str()).ok_or(Outcome::Broken("unreadable frame"));
            }
            Ok(Some(Ok(_))) => continue,
        }
    }
}

pub async fn send(socket: &mut Socket, json: &str) -> Result<(), Outcome> {
    match tokio::time::timeout(REPLY_TIMEOUT, socket.send(Message::text(json))).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(Outcome::Broken("send failed")),
        Err(_) => Err(Outcome::Broken("send timed out")),
    }
}

/// Closes politely but never waits long for the server's side of it.
pub async fn close(mut socket: Socket) {
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, socket.close(None)).await;
}

/// One stepped run from `begin` (with `begin`'s extra fields, e.g. `"mode":"naive"`) to its
/// end, on a fresh socket.
pub async fn run(url: &str, origin: &str, jar: &mut Jar, begin_fields: &str, plan: Plan) -> Run {
    let mut replies = Vec::new();
    let outcome = match connect(url, origin, jar).await {
        Err(outcome) => outcome,
        Ok(mut socket) => {
            let outcome = walk(&mut socket, begin_fields, &plan, &mut replies).await;
            if !matches!(outcome, Outcome::Abandoned) {
                close(socket).await;
            }
            outcome
        }
    };
    Run { outcome, replies }
}

async fn walk(
    socket: &mut Socket,
    begin_fields: &str,
    plan: &Plan,
    replies: &mut Vec<Duration>,
) -> Outcome {
    let begin = if begin_fields.is_empty() {
        r#"{"cmd":"begin"}"#.to_owned()
    } else {
        format!(r#"{{"cmd":"begin",{begin_fields}}}"#)
    };
    if let Err(outcome) = send(socket, &begin).await {
        return outcome;
    }
    let mut sent_at = Instant::now();
    let mut last_command = "begin";
    let mut pauses = 0;
    let mut writer_sent = false;
    for _ in 0..MAX_FRAMES {
        let frame = match next_frame(socket).await {
            Ok(frame) => frame,
            Err(outcome) => return outcome,
        };
        replies.push(sent_at.elapsed());
        let command = match frame {
            Frame::Report => return Outcome::Served,
            // A refused extra (no relay, not the moment) leaves the run paused where it was.
            Frame::Error(code)
                if matches!(last_command, "other_writer" | "commit_reply_lost")
                    && matches!(
                        code.as_str(),
                        "step_not_now" | "relay_unsupported" | "step_bad_fate"
                    ) =>
            {
                r#"{"cmd":"next"}"#.to_owned()
            }
            Frame::Error(code) => return Outcome::Refused(code),
            Frame::Pause { next } => {
                pauses += 1;
                match plan {
                    Plan::Abandon(at) if pauses >= *at => {
                        // The tab is gone: no close frame, the TCP connection just ends.
                        return Outcome::Abandoned;
                    }
                    Plan::Crash(at) if pauses >= *at => r#"{"cmd":"crash"}"#.to_owned(),
                    Plan::OtherWriter if pauses >= 2 && !writer_sent => {
                        writer_sent = true;
                        r#"{"cmd":"other_writer"}"#.to_owned()
                    }
                    Plan::ReplyLost(fate) if next.as_deref() == Some("commit") => {
                        format!(r#"{{"cmd":"commit_reply_lost","commit_fate":"{fate}"}}"#)
                    }
                    _ => r#"{"cmd":"next"}"#.to_owned(),
                }
            }
        };
        last_command = if command.contains("other_writer") {
            "other_writer"
        } else if command.contains("commit_reply_lost") {
            "commit_reply_lost"
        } else {
            "next"
        };
        if let Err(outcome) = send(socket, &command).await {
            return outcome;
        }
        sent_at = Instant::now();
    }
    Outcome::Broken("no report after 24 frames")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames() {
        assert!(matches!(
            parse(r#"{"pause":{"at":"after_begin","next":"update"}}"#),
            Some(Frame::Pause { next: Some(n) }) if n == "update"
        ));
        assert!(matches!(parse(r#"{"report":{}}"#), Some(Frame::Report)));
        assert!(matches!(
            parse(r#"{"error":{"code":"step_busy","message":"…"}}"#),
            Some(Frame::Error(c)) if c == "step_busy"
        ));
        assert!(parse("nonsense").is_none());
    }
}
