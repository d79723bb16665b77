//! `GET /api/step`: the stepper over a WebSocket. The held transaction's connection and the
//! socket live in this one process, so replicas need no sticky sessions.
//!
//! The socket names its sandbox like every other endpoint (the cookie, or an embed's `s=`),
//! and only the playground's own pages (or an allowed frame ancestor) may open it: a page of
//! another site must not step through a learner's sandbox. Commands and answers are JSON text
//! frames ([`outbox_lab::step`]); README documents the contract.
//!
//! Every part of a socket is bounded, because a class (and the odd script) uses it at once: a
//! frame is refused from its header when it declares more than [`MAX_FRAME`]; a quiet client is
//! pinged, and one that stays quiet is gone; every send has a time limit; a command never waits
//! for the run to take it (a client sending faster than the run answers is told so); and any end
//! of the socket ends the run as the process dying, which frees its connection, its slot and
//! its sandbox at once. Each run spends one request of the sandbox's budget and checks first
//! that the socket's token still names the same sandbox.

use std::sync::Arc;
use std::time::Duration;

use app::api::ApiError;
use app::i18n::Locale;
use app::pause_view::{self, DrawnPause};
use axum::extract::State;
use axum::extract::ws::{Message as Frame, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use outbox_lab::catalog::Scenario;
use outbox_lab::input::{AttemptFields, AttemptSpec};
use outbox_lab::pg::stepper::AfterCommitStep;
use outbox_lab::pg::{Lab, LabError, SandboxToken, SchemaName};
use outbox_lab::prediction::{Prediction, PredictionFields};
use outbox_lab::step::{Command, Message, StepError};
use serde::Serialize;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::client_sockets::{ClientSockets, Slot};
use crate::server_state::ServerState;

/// The largest frame or message a learner may send: a `begin` with a full 8 KiB payload fits.
/// A frame whose header declares more is refused before its payload is read.
pub const MAX_FRAME: usize = 64 * 1024;
/// What may wait unsent for a slow reader (a report is tens of kilobytes).
const MAX_WRITE_BUFFER: usize = 4 * 1024 * 1024;
/// A send that a client does not take within this long means the client is gone.
const SEND_LIMIT: Duration = Duration::from_secs(10);
/// A client quiet this long is pinged (a browser answers by itself)...
pub const QUIET_BEFORE_PING: Duration = Duration::from_secs(30);
/// ...and one that stays quiet this long after the ping is gone.
pub const PONG_WAIT: Duration = Duration::from_secs(15);
/// Commands that may wait for the run; more than this unread, and the client is told to slow
/// down rather than waited for.
const COMMAND_QUEUE: usize = 8;

pub async fn step_socket(
    State(state): State<ServerState>,
    parts: Parts,
    ws: WebSocketUpgrade,
) -> Response {
    let locale = app::locale::of_request(&parts);
    if !origin_allowed(&state, &parts) {
        let (error, _) = app::backend::errors::cross_site(locale);
        tracing::info!("refused a stepper socket from another site");
        return (StatusCode::FORBIDDEN, axum::Json(error)).into_response();
    }
    let client = state
        .app
        .web
        .client_address(&parts)
        .unwrap_or_else(|| "unknown".to_owned());
    let Some(socket_slot) = state.sockets.clients.socket(&client) else {
        tracing::info!(%client, "refused a stepper socket: the address holds its cap");
        return refusal_response(LabError::ClientLimit, locale);
    };
    let lab = state.app.lab.clone();
    let claimed = async {
        lab.reachable().await?;
        app::backend::session::learner_sandbox_of(&state.app, &parts).await
    }
    .await;
    let claimed = match lab.observe(claimed) {
        Ok(claimed) => claimed,
        Err(e) => return refusal_response(e, locale),
    };
    let session = Session {
        lab,
        sandbox: claimed.sandbox,
        token: claimed.token,
        locale,
        client,
        clients: Arc::clone(&state.sockets.clients),
        shutdown: state.sockets.shutdown.clone(),
        quiet: Quiet::new(),
        _slot: socket_slot,
    };
    let mut response = ws
        .max_frame_size(MAX_FRAME)
        .max_message_size(MAX_FRAME)
        .max_write_buffer_size(MAX_WRITE_BUFFER)
        .on_upgrade(move |socket| session.serve(socket));
    if let Some(cookie) = claimed.cookie {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}

fn refusal_response(e: LabError, locale: Locale) -> Response {
    let error = ApiError::from_lab_in(e, locale);
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::BAD_REQUEST);
    let mut response = (status, axum::Json(error)).into_response();
    if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE {
        response.headers_mut().insert(
            header::RETRY_AFTER,
            header::HeaderValue::from_static(app::backend::errors::RETRY_AFTER_SECS),
        );
    }
    response
}

/// The playground's own page, or a page allowed to frame it; a client that sends no `Origin`
/// is not a browser page (course tooling, tests) and may connect.
fn origin_allowed(state: &ServerState, parts: &Parts) -> bool {
    match parts.headers.get(header::ORIGIN).map(|v| v.to_str()) {
        None => true,
        Some(Ok(origin)) => {
            state.app.web.is_own_origin(origin, &parts.headers)
                || state.frame_ancestors.allows(origin)
        }
        Some(Err(_)) => false,
    }
}

/// One socket and what it holds.
struct Session {
    lab: Lab,
    sandbox: SchemaName,
    token: SandboxToken,
    locale: Locale,
    client: String,
    clients: Arc<ClientSockets>,
    shutdown: watch::Receiver<bool>,
    quiet: Quiet,
    _slot: Slot,
}

/// When a quiet client is pinged, and when it counts as gone.
struct Quiet {
    deadline: Instant,
    pinged: bool,
}

impl Quiet {
    fn new() -> Self {
        Quiet {
            deadline: Instant::now() + QUIET_BEFORE_PING,
            pinged: false,
        }
    }

    fn heard(&mut self) {
        *self = Quiet::new();
    }
}

// One lives for one loop turn; boxing a command would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Received {
    Command(Command),
    Unreadable,
    Gone,
}

impl Session {
    /// Runs after runs, each started by a `begin`, until the socket ends.
    async fn serve(mut self, mut socket: WebSocket) {
        loop {
            let command = match self.receive(&mut socket).await {
                Received::Command(c) => c,
                Received::Unreadable => {
                    self.refuse(&mut socket, "step_bad_command").await;
                    continue;
                }
                Received::Gone => break,
            };
            let Some(begun) = self.begin(&mut socket, command).await else {
                continue;
            };
            match self.runnable().await {
                Ok(run_slot) => {
                    if !self.run(&mut socket, begun, run_slot).await {
                        break;
                    }
                }
                Err(Refused::Close(e)) => {
                    let _ = send(&mut socket, &self.error(e)).await;
                    break;
                }
                Err(Refused::Stay(e)) => {
                    if send(&mut socket, &self.error(e)).await.is_err() {
                        break;
                    }
                }
            }
        }
        // A bounded goodbye; the socket is dropped either way.
        let _ = tokio::time::timeout(SEND_LIMIT, socket.send(Frame::Close(None))).await;
    }

    /// What a `begin` starts; anything else is refused.
    async fn begin(&mut self, socket: &mut WebSocket, command: Command) -> Option<Begun> {
        let Command::Begin {
            scenario,
            inbox,
            mode,
            mistakes,
            event_id,
            payload,
            predict_ticket,
            predict_outbox,
            predict_kafka,
            predict_client,
            predict_sends,
            predict_mark,
            predict_history,
        } = command
        else {
            self.refuse(socket, "step_not_now").await;
            return None;
        };
        let begun = outbox_lab::input::scenario(scenario.as_deref()).and_then(|scenario| {
            let ticket_fields = [
                ("mode", &mode),
                ("mistakes", &mistakes),
                ("event_id", &event_id),
                ("payload", &payload),
                ("predict_ticket", &predict_ticket),
                ("predict_outbox", &predict_outbox),
                ("predict_kafka", &predict_kafka),
                ("predict_client", &predict_client),
            ];
            let refuse_given = |fields: &[(&'static str, &Option<String>)]| match fields
                .iter()
                .find_map(|(f, v)| v.as_deref().map(|v| (*f, v)))
            {
                Some((field, value)) => Err(outbox_lab::input::not_taken(field, value, scenario)),
                None => Ok(()),
            };
            match scenario {
                Scenario::Ticket => {
                    refuse_given(&[("inbox", &inbox)])?;
                    let fields = AttemptFields {
                        mode: mode.as_deref(),
                        mistakes: mistakes.as_deref(),
                        crash: None,
                        commit_fate: None,
                        event_id: event_id.as_deref(),
                        payload: payload.as_deref(),
                    };
                    refuse_given(&[
                        ("predict_sends", &predict_sends),
                        ("predict_mark", &predict_mark),
                        ("predict_history", &predict_history),
                    ])?;
                    let prediction = Prediction::parse(PredictionFields {
                        ticket: predict_ticket.as_deref(),
                        outbox: predict_outbox.as_deref(),
                        kafka: predict_kafka.as_deref(),
                        client: predict_client.as_deref(),
                        ..Default::default()
                    })?;
                    Ok(Begun::Ticket(AttemptSpec::from_fields(fields)?, prediction))
                }
                Scenario::Publisher => {
                    refuse_given(&ticket_fields)?;
                    refuse_given(&[("inbox", &inbox), ("predict_history", &predict_history)])?;
                    let prediction = Prediction::parse(PredictionFields {
                        sends: predict_sends.as_deref(),
                        mark: predict_mark.as_deref(),
                        ..Default::default()
                    })?;
                    Ok(Begun::AfterCommit(AfterCommitStep::Publisher, prediction))
                }
                Scenario::Consumer => {
                    refuse_given(&ticket_fields)?;
                    refuse_given(&[
                        ("predict_sends", &predict_sends),
                        ("predict_mark", &predict_mark),
                    ])?;
                    let inbox = outbox_lab::input::switch("inbox", inbox.as_deref(), true)?;
                    let prediction = Prediction::parse(PredictionFields {
                        history: predict_history.as_deref(),
                        ..Default::default()
                    })?;
                    Ok(Begun::AfterCommit(
                        AfterCommitStep::Consumer { inbox },
                        prediction,
                    ))
                }
            }
        });
        match begun {
            Ok(begun) => Some(begun),
            Err(e) => {
                let e = ApiError::from_input_in(e, self.locale);
                let _ = send(socket, &error_message(e)).await;
                None
            }
        }
    }

    /// Whether a run may start now: the address's cap, then the sandbox — still this
    /// socket's (it may have been recycled for a newcomer since the socket opened), and within
    /// its request budget like any other action.
    async fn runnable(&self) -> Result<Slot, Refused> {
        let slot = self
            .clients
            .run(&self.client)
            .ok_or(Refused::Stay(LabError::ClientLimit))?;
        let found = async {
            self.lab.reachable().await?;
            self.lab.find_sandbox(&self.token).await
        }
        .await;
        match self.lab.observe(found) {
            Ok(Some(sandbox)) if sandbox == self.sandbox => Ok(slot),
            Ok(_) => Err(Refused::Close(LabError::SandboxGone(
                self.sandbox.to_string(),
            ))),
            Err(e) => Err(Refused::Stay(e)),
        }
    }

    /// One stepped run. Returns false when the socket is gone (the run has then ended the
    /// crash way).
    async fn run(&mut self, socket: &mut WebSocket, begun: Begun, run_slot: Slot) -> bool {
        let (commands, mut command_rx) = mpsc::channel::<Command>(COMMAND_QUEUE);
        let (out_tx, mut out) = mpsc::channel::<Message>(COMMAND_QUEUE);
        let (lab, sandbox) = (self.lab.clone(), self.sandbox.clone());
        // Its own task: if this socket's task is dropped, the run still ends (the closed
        // command channel is the process dying) and its connection is cut.
        let mut task = tokio::spawn(async move {
            let _run_slot = run_slot;
            let result = match begun {
                Begun::Ticket(spec, prediction) => {
                    lab.step(&sandbox, &spec, &prediction, &mut command_rx, &out_tx)
                        .await
                }
                Begun::AfterCommit(what, prediction) => {
                    lab.step_after_commit(&sandbox, what, &prediction, &mut command_rx, &out_tx)
                        .await
                }
            };
            lab.observe(result)
        });
        let mut commands = Some(commands);
        loop {
            tokio::select! {
                message = out.recv() => {
                    if let Some(message) = message
                        && commands.is_some()
                        && send(socket, &self.localised(message)).await.is_err()
                    {
                        commands = None;
                    }
                }
                received = self.receive(socket), if commands.is_some() => match received {
                    Received::Command(Command::Begin { .. }) => {
                        self.refuse(socket, "step_not_now").await;
                    }
                    Received::Command(c) => {
                        // Never wait for the run here: it may itself be waiting for this
                        // loop to take its messages.
                        if let Some(tx) = &commands
                            && tx.try_send(c).is_err()
                        {
                            self.refuse(socket, "step_too_fast").await;
                        }
                    }
                    Received::Unreadable => self.refuse(socket, "step_bad_command").await,
                    // The learner closed the tab, lost the network, went quiet past the ping,
                    // or the server is shutting down: the process dies.
                    Received::Gone => commands = None,
                },
                ended = &mut task => {
                    // Pauses sent before the end go out first.
                    while let Ok(message) = out.try_recv() {
                        if commands.is_some() && send(socket, &self.localised(message)).await.is_err() {
                            commands = None;
                        }
                    }
                    let message = match ended {
                        Ok(Ok(report)) => Message::Report(Box::new(report)),
                        Ok(Err(e)) => self.error(e),
                        Err(join) => {
                            tracing::error!(error = %join, "a stepped run failed");
                            refusal(self.locale, "internal")
                        }
                    };
                    return commands.is_some()
                        && !*self.shutdown.borrow()
                        && send(socket, &message).await.is_ok();
                }
            }
        }
    }

    /// The next thing the client says. A quiet client is pinged, and one that stays quiet
    /// is gone; so is every client once the server shuts down.
    async fn receive(&mut self, socket: &mut WebSocket) -> Received {
        loop {
            tokio::select! {
                frame = socket.recv() => {
                    self.quiet.heard();
                    return match frame {
                        Some(Ok(Frame::Text(text))) => match serde_json::from_str(text.as_str()) {
                            Ok(command) => Received::Command(command),
                            Err(_) => Received::Unreadable,
                        },
                        Some(Ok(Frame::Binary(_))) => Received::Unreadable,
                        // axum answers pings itself; a pong only says the client is there.
                        Some(Ok(Frame::Ping(_) | Frame::Pong(_))) => continue,
                        Some(Ok(Frame::Close(_))) | Some(Err(_)) | None => Received::Gone,
                    };
                }
                () = tokio::time::sleep_until(self.quiet.deadline) => {
                    if self.quiet.pinged {
                        return Received::Gone;
                    }
                    let ping = tokio::time::timeout(SEND_LIMIT, socket.send(Frame::Ping(Default::default())));
                    if !matches!(ping.await, Ok(Ok(()))) {
                        return Received::Gone;
                    }
                    self.quiet = Quiet {
                        deadline: Instant::now() + PONG_WAIT,
                        pinged: true,
                    };
                }
                () = shutting_down(&mut self.shutdown) => return Received::Gone,
            }
        }
    }

    async fn refuse(&self, socket: &mut WebSocket, code: &str) {
        // A client that does not read its refusals is caught by the next bounded send.
        let _ = send(socket, &refusal(self.locale, code)).await;
    }

    fn error(&self, e: LabError) -> Message {
        error_message(ApiError::from_lab_in(e, self.locale))
    }

    /// A refusal from the runner carries only its code; it is worded here. A pause goes out
    /// with its drawing in the page's language beside its JSON.
    fn localised(&self, message: Message) -> Outgoing {
        let message = match message {
            Message::Error(StepError { code, message }) if message.is_empty() => {
                refusal(self.locale, &code)
            }
            other => other,
        };
        let view = match &message {
            Message::Pause(pause) => Some(pause_view::draw(self.locale, pause)),
            Message::Report(_) | Message::Error(_) => None,
        };
        Outgoing { message, view }
    }
}

/// A message as it goes over the wire: the runner's JSON, for tools, and for a pause its
/// drawing (`view`: `where` and `html`), which the page's script only swaps in.
#[derive(Serialize)]
struct Outgoing {
    #[serde(flatten)]
    message: Message,
    #[serde(skip_serializing_if = "Option::is_none")]
    view: Option<DrawnPause>,
}

/// What a `begin` starts: the ticket function with its prediction, or a run after COMMIT.
enum Begun {
    Ticket(AttemptSpec, Prediction),
    AfterCommit(AfterCommitStep, Prediction),
}

/// Why a run may not start: the socket may stay open, or must close.
enum Refused {
    Stay(LabError),
    Close(LabError),
}

/// Resolves once the server shuts down (never, if nobody can tell it to).
async fn shutting_down(shutdown: &mut watch::Receiver<bool>) {
    loop {
        if *shutdown.borrow_and_update() {
            return;
        }
        if shutdown.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Sends `message` within [`SEND_LIMIT`]; a client that does not take it is gone.
async fn send(socket: &mut WebSocket, message: &impl Serialize) -> Result<(), axum::Error> {
    let text = serde_json::to_string(message).map_err(axum::Error::new)?;
    match tokio::time::timeout(SEND_LIMIT, socket.send(Frame::Text(Utf8Bytes::from(text)))).await {
        Ok(sent) => sent,
        Err(elapsed) => Err(axum::Error::new(elapsed)),
    }
}

fn refusal(locale: Locale, code: &str) -> Message {
    let message = app::backend::errors::step_refusal(locale, code);
    Message::Error(StepError {
        code: code.to_owned(),
        message,
    })
}

fn error_message(e: ApiError) -> Message {
    Message::Error(StepError {
        code: e.code,
        message: e.message,
    })
}
