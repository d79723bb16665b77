//! Clients that misbehave while the class works (phase 1): a command flood on a stepper
//! socket, sockets that say nothing, a frame that announces 16 MiB and trickles it, and an
//! HTTP request whose headers never end. None of them counts as a learner's answer; each
//! says what it saw, and a flood that leaves its sandbox stuck counts as a wedged run.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_tungstenite::MaybeTlsStream;
use tokio_tungstenite::tungstenite::Message;

use super::browser::{Client, Jar};
use super::stepper;

/// How many of each hostile client run at once.
const EACH: usize = 2;
/// Frames in one flood.
const FLOOD_FRAMES: usize = 500;
/// How long the sandbox of a flooded run may stay busy (`409 step_in_progress`) after the
/// socket closed before the run counts as wedged.
const FREE_WITHIN: Duration = Duration::from_secs(10);
/// Between one flood's check and the next flood.
const FLOOD_GAP: Duration = Duration::from_secs(2);
/// Floods per flooding client in one phase, at most.
const MAX_FLOODS: usize = 50;
/// The frame header's declared payload: as large as a server might accept without looking.
const HUGE: u64 = 16 * 1024 * 1024;
/// Between two trickled bytes, and between two slow header lines.
const TRICKLE: Duration = Duration::from_secs(1);
const SLOW_HEADER: Duration = Duration::from_secs(2);

/// What one hostile client saw.
pub struct Seen {
    pub client: String,
    pub saw: String,
    /// Flooded runs whose sandbox stayed stuck.
    pub wedged: u64,
}

pub struct Target {
    pub client: Client,
    pub url: String,
    pub origin: String,
    pub authority: String,
}

/// Runs every hostile client until `deadline`; returns when all have stopped.
pub async fn run_all(target: std::sync::Arc<Target>, deadline: Instant) -> Vec<Seen> {
    let mut tasks = JoinSet::new();
    for n in 1..=EACH {
        let t = target.clone();
        tasks.spawn(async move { flood(&t, n, deadline).await });
        let t = target.clone();
        tasks.spawn(async move { idle(&t, n, deadline).await });
        let t = target.clone();
        tasks.spawn(async move { huge_frame(&t, n, deadline).await });
        let t = target.clone();
        tasks.spawn(async move { slow_header(&t, n, deadline).await });
    }
    let mut seen = Vec::new();
    // Each client stops at the deadline by itself; the margin covers its last bounded step.
    let hard_stop = deadline + Duration::from_secs(40);
    while let Ok(Some(joined)) = tokio::time::timeout_at(hard_stop, tasks.join_next()).await {
        if let Ok(s) = joined {
            seen.push(s);
        }
    }
    if !tasks.is_empty() {
        tasks.abort_all();
        seen.push(Seen {
            client: "(any)".into(),
            saw: format!(
                "{} hostile clients did not stop in time and were dropped",
                tasks.len()
            ),
            wedged: 0,
        });
    }
    seen.sort_by(|a, b| a.client.cmp(&b.client));
    seen
}

/// A sandbox of its own, claimed the way a learner claims one.
async fn claim(target: &Target) -> Jar {
    let mut jar = Jar::default();
    let _ = target.client.post("reset", "", &mut jar).await;
    jar
}

fn since(start: Instant) -> String {
    format!("{:.1} s", start.elapsed().as_secs_f64())
}

/// (a) `begin`, then 500 `commit_reply_lost` frames without reading a reply, then close; the
/// sandbox must be free again (reset not refused with `step_in_progress`) within 10 s.
async fn flood(target: &Target, n: usize, deadline: Instant) -> Seen {
    let mut jar = claim(target).await;
    let (mut floods, mut wedged, mut refused, mut slowest) = (0u64, 0u64, 0u64, Duration::ZERO);
    let mut notes: Vec<String> = Vec::new();
    // Pauses and refusals read back after the floods, all floods together.
    let mut frames_back = (0u64, 0u64);
    for _ in 0..MAX_FLOODS {
        // A flood may start until the phase ends; its check for a wedge runs past the end
        // (bounded by FREE_WITHIN), so even a short phase sees one.
        if Instant::now() >= deadline {
            break;
        }
        let mut socket = match stepper::connect(&target.url, &target.origin, &mut jar).await {
            Ok(s) => s,
            Err(outcome) => {
                refused += 1;
                note(&mut notes, format!("upgrade: {}", outcome.label()));
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        floods += 1;
        let frame = r#"{"cmd":"commit_reply_lost","commit_fate":"x"}"#;
        let sent = async {
            socket.feed(Message::text(r#"{"cmd":"begin"}"#)).await?;
            for _ in 0..FLOOD_FRAMES {
                socket.feed(Message::text(frame)).await?;
            }
            socket.flush().await
        };
        match tokio::time::timeout(Duration::from_secs(10), sent).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => note(&mut notes, "the server cut the flood off".into()),
            Err(_) => note(
                &mut notes,
                "the flood blocked for 10 s (the server stopped reading)".into(),
            ),
        }
        // Only now look at what came back (bounded): did the run pause, were the commands
        // refused one by one? The flood itself never waited for it.
        let (pauses, refusals) = drain(&mut socket).await;
        frames_back.0 += pauses;
        frames_back.1 += refusals;
        stepper::close(socket).await;
        let closed = Instant::now();
        match freed(target, &mut jar, closed + FREE_WITHIN).await {
            Some((after, label)) => {
                slowest = slowest.max(after);
                // What "free" was: a 200, or a refusal of another kind.
                note(&mut notes, format!("reset after the close: {label}"));
            }
            None => wedged += 1,
        }
        // A few floods a minute per client: hostile, but not a denial-of-service test.
        tokio::time::sleep_until(deadline.min(Instant::now() + FLOOD_GAP)).await;
    }
    let mut saw = format!(
        "{floods} floods of {FLOOD_FRAMES} frames; sandbox free again within {:.1} s at worst; \
         {wedged} wedged (still `409 step_in_progress` {} s after the close)",
        slowest.as_secs_f64(),
        FREE_WITHIN.as_secs()
    );
    saw.push_str(&format!(
        "; read back within 2 s of each flood: {} pauses, {} refusals in all",
        frames_back.0, frames_back.1
    ));
    if refused > 0 {
        saw.push_str(&format!("; {refused} upgrades refused"));
    }
    for n in notes {
        saw.push_str("; ");
        saw.push_str(&n);
    }
    Seen {
        client: format!("(a) command flood #{n}"),
        saw,
        wedged,
    }
}

/// Reads what the server sent for up to 2 s: (pauses, error frames).
async fn drain(socket: &mut stepper::Socket) -> (u64, u64) {
    let (mut pauses, mut refusals) = (0, 0);
    let until = Instant::now() + Duration::from_secs(2);
    while let Ok(Some(Ok(frame))) = tokio::time::timeout_at(until, socket.next()).await {
        if let Message::Text(text) = frame {
            if text.starts_with(r#"{"pause""#) {
                pauses += 1;
            } else if text.starts_with(r#"{"error""#) {
                refusals += 1;
            }
        }
    }
    (pauses, refusals)
}

/// Keeps a note once (the same thing seen in many floods is said once).
fn note(notes: &mut Vec<String>, text: String) {
    if !notes.contains(&text) {
        notes.push(text);
    }
}

/// How long after the close the sandbox took an action again, and its answer; `None` if
/// not by `until`.
async fn freed(target: &Target, jar: &mut Jar, until: Instant) -> Option<(Duration, String)> {
    let start = Instant::now();
    // At most one reset per 250 ms, well within a sandbox's request budget.
    while Instant::now() < until {
        let answer = target.client.post("reset", "", jar).await;
        if answer.code.as_deref() != Some("step_in_progress") && answer.status.is_some() {
            return Some((start.elapsed(), answer.label));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    None
}

/// (b) a stepper socket that never sends a command.
async fn idle(target: &Target, n: usize, deadline: Instant) -> Seen {
    let mut jar = claim(target).await;
    let client = format!("(b) idle socket #{n}");
    let start = Instant::now();
    let mut socket = match stepper::connect(&target.url, &target.origin, &mut jar).await {
        Ok(s) => s,
        Err(outcome) => return seen(client, format!("upgrade: {}", outcome.label())),
    };
    loop {
        match tokio::time::timeout_at(deadline, socket.next()).await {
            Err(_) => {
                stepper::close(socket).await;
                return seen(
                    client,
                    format!("still open at the end of the phase ({})", since(start)),
                );
            }
            Ok(None) | Ok(Some(Err(_))) => {
                return seen(
                    client,
                    format!("connection ended by the server after {}", since(start)),
                );
            }
            Ok(Some(Ok(Message::Close(_)))) => {
                return seen(
                    client,
                    format!("closed by the server after {}", since(start)),
                );
            }
            // Pings are answered by the library; anything else the server says is odd but
            // harmless here.
            Ok(Some(Ok(_))) => continue,
        }
    }
}

fn seen(client: String, saw: String) -> Seen {
    Seen {
        client,
        saw,
        wedged: 0,
    }
}

/// (c) a masked text frame whose header declares 16 MiB, then one byte a second.
async fn huge_frame(target: &Target, n: usize, deadline: Instant) -> Seen {
    let mut jar = claim(target).await;
    let client = format!("(c) 16 MiB frame, trickled #{n}");
    let start = Instant::now();
    let mut socket = match stepper::connect(&target.url, &target.origin, &mut jar).await {
        Ok(s) => s,
        Err(outcome) => return seen(client, format!("upgrade: {}", outcome.label())),
    };
    let MaybeTlsStream::Plain(tcp) = socket.get_mut() else {
        return seen(client, "not a plain TCP stream".into());
    };
    // FIN + text, then "masked, 64-bit length", the length, and a mask (clients must mask).
    let mut header = vec![0x81u8, 0x80 | 127];
    header.extend_from_slice(&HUGE.to_be_bytes());
    header.extend_from_slice(&[0x11, 0x22, 0x33, 0x44]);
    if tcp.write_all(&header).await.is_err() {
        return seen(client, "the header could not be written".into());
    }
    let mut trickled = 0u64;
    let mut buf = [0u8; 1024];
    while Instant::now() < deadline {
        // Anything the server sends back, or its end of the connection, shows up here.
        match tokio::time::timeout(TRICKLE, tcp.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                return seen(
                    client,
                    format!(
                        "closed by the server after {} ({trickled} payload bytes sent)",
                        since(start)
                    ),
                );
            }
            Ok(Ok(_)) => continue,
            Err(_) => {}
        }
        if tcp.write_all(b"x").await.is_err() {
            return seen(
                client,
                format!(
                    "closed by the server after {} ({trickled} payload bytes sent)",
                    since(start)
                ),
            );
        }
        trickled += 1;
    }
    seen(
        client,
        format!(
            "still open at the end of the phase ({}, {trickled} payload bytes sent)",
            since(start)
        ),
    )
}

/// (d) `GET / HTTP/1.1`, then one header line every 2 s, never the empty line.
async fn slow_header(target: &Target, n: usize, deadline: Instant) -> Seen {
    let client = format!("(d) slow header #{n}");
    let start = Instant::now();
    let connecting = TcpStream::connect(&target.authority);
    let mut tcp = match tokio::time::timeout(Duration::from_secs(5), connecting).await {
        Ok(Ok(tcp)) => tcp,
        _ => return seen(client, "could not connect".into()),
    };
    if tcp.write_all(b"GET / HTTP/1.1\r\n").await.is_err() {
        return seen(client, "the request line could not be written".into());
    }
    let mut answer = String::new();
    let mut lines = 0u64;
    let mut buf = [0u8; 1024];
    while Instant::now() < deadline {
        match tokio::time::timeout(SLOW_HEADER, tcp.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                let said = first_line(&answer);
                return seen(
                    client,
                    format!(
                        "closed by the server after {} ({lines} header lines sent){said}",
                        since(start)
                    ),
                );
            }
            Ok(Ok(got)) => {
                answer.push_str(&String::from_utf8_lossy(&buf[..got]));
                continue;
            }
            Err(_) => {}
        }
        lines += 1;
        if tcp
            .write_all(format!("X-Slow-{lines}: 1\r\n").as_bytes())
            .await
            .is_err()
        {
            return seen(
                client,
                format!(
                    "closed by the server after {} ({lines} header lines sent)",
                    since(start)
                ),
            );
        }
    }
    let said = first_line(&answer);
    seen(
        client,
        format!(
            "still open at the end of the phase ({}, {lines} header lines sent){said}",
            since(start)
        ),
    )
}

/// `, answered "HTTP/1.1 408 …"` when the server said something first.
fn first_line(answer: &str) -> String {
    match answer.lines().next() {
        Some(line) if !line.is_empty() => format!(", answered `{}`", line.trim()),
        _ => String::new(),
    }
}

/// The flood's wedges, for the report's total.
pub fn wedged(seen: &[Seen]) -> u64 {
    seen.iter().map(|s| s.wedged).sum()
}
