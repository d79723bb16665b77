//! `GET /api/step`: the stepper over a WebSocket. The held transaction's connection and the
//! socket live in this one process, so replicas need no sticky sessions.
//!
//! The socket names its sandbox like every other endpoint (the cookie, or an embed's `s=`),
//! and only the playground's own pages (or an allowed frame ancestor) may open it: a page of
//! another site must not step through a learner's sandbox. Commands and answers are JSON text
//! frames ([`outbox_lab::step`]); README documents the contract.

use app::api::ApiError;
use app::i18n::Locale;
use axum::extract::State;
use axum::extract::ws::{Message as Frame, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use outbox_lab::input::{AttemptFields, AttemptSpec};
use outbox_lab::pg::{Lab, SchemaName};
use outbox_lab::prediction::{Prediction, PredictionFields};
use outbox_lab::step::{Command, Message, StepError};
use tokio::sync::mpsc;

use crate::routes::ServerState;

/// The largest command a learner may send: a `begin` with a full 8 KiB payload fits.
const MAX_FRAME: usize = 64 * 1024;

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
    let lab = state.app.lab.clone();
    let claimed = async {
        lab.reachable().await?;
        app::backend::session::learner_sandbox_of(&state.app, &parts).await
    }
    .await;
    lab.observe(&claimed);
    let (sandbox, cookie) = match claimed {
        Ok(found) => found,
        Err(e) => {
            let error = ApiError::from_lab_in(e, locale);
            let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::BAD_REQUEST);
            return (status, axum::Json(error)).into_response();
        }
    };
    let mut response = ws
        .max_message_size(MAX_FRAME)
        .on_upgrade(move |socket| session(socket, lab, sandbox, locale));
    if let Some(cookie) = cookie {
        response.headers_mut().append(header::SET_COOKIE, cookie);
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

/// One socket: runs after runs, each started by a `begin`.
async fn session(mut socket: WebSocket, lab: Lab, sandbox: SchemaName, locale: Locale) {
    loop {
        let command = match receive(&mut socket).await {
            Received::Command(c) => c,
            Received::Unreadable => {
                let code = "step_bad_command";
                let _ = send(&mut socket, &refusal(locale, code)).await;
                continue;
            }
            Received::Gone => return,
        };
        let Command::Begin {
            mode,
            mistakes,
            event_id,
            payload,
            predict_ticket,
            predict_outbox,
            predict_kafka,
            predict_client,
        } = command
        else {
            let _ = send(&mut socket, &refusal(locale, "step_not_now")).await;
            continue;
        };
        let fields = AttemptFields {
            mode: mode.as_deref(),
            mistakes: mistakes.as_deref(),
            crash: None,
            commit_fate: None,
            event_id: event_id.as_deref(),
            payload: payload.as_deref(),
        };
        let prediction = Prediction::parse(PredictionFields {
            ticket: predict_ticket.as_deref(),
            outbox: predict_outbox.as_deref(),
            kafka: predict_kafka.as_deref(),
            client: predict_client.as_deref(),
        });
        let (spec, prediction) = match AttemptSpec::from_fields(fields).and_then(|spec| {
            let prediction = prediction?;
            Ok((spec, prediction))
        }) {
            Ok(both) => both,
            Err(e) => {
                let e = ApiError::from_input_in(e, locale);
                let _ = send(&mut socket, &error_message(e)).await;
                continue;
            }
        };
        if !run(&mut socket, &lab, &sandbox, spec, prediction, locale).await {
            return;
        }
    }
}

/// One stepped run. Returns false when the socket is gone (the run has then ended the
/// crash way).
async fn run(
    socket: &mut WebSocket,
    lab: &Lab,
    sandbox: &SchemaName,
    spec: AttemptSpec,
    prediction: Prediction,
    locale: Locale,
) -> bool {
    let (commands, mut command_rx) = mpsc::channel::<Command>(8);
    let (out_tx, mut out) = mpsc::channel::<Message>(8);
    let (lab, sandbox_owned) = (lab.clone(), sandbox.clone());
    // Its own task: if this socket's task is dropped, the run still ends (the closed command
    // channel is the process dying) and its connection is cut.
    let mut task = tokio::spawn(async move {
        let result = lab
            .step(&sandbox_owned, &spec, &prediction, &mut command_rx, &out_tx)
            .await;
        lab.observe(&result);
        result
    });
    let mut commands = Some(commands);
    loop {
        tokio::select! {
            message = out.recv() => {
                if let Some(message) = message
                    && commands.is_some()
                    && send(socket, &localised(message, locale)).await.is_err()
                {
                    commands = None;
                }
            }
            received = receive(socket), if commands.is_some() => match received {
                Received::Command(Command::Begin { .. }) => {
                    let _ = send(socket, &refusal(locale, "step_not_now")).await;
                }
                Received::Command(c) => {
                    if let Some(tx) = &commands {
                        let _ = tx.send(c).await;
                    }
                }
                Received::Unreadable => {
                    let _ = send(socket, &refusal(locale, "step_bad_command")).await;
                }
                // The learner closed the tab or lost the network: the process dies.
                Received::Gone => commands = None,
            },
            ended = &mut task => {
                // Pauses sent before the end go out first.
                while let Ok(message) = out.try_recv() {
                    if commands.is_some() {
                        let _ = send(socket, &localised(message, locale)).await;
                    }
                }
                let message = match ended {
                    Ok(Ok(report)) => Message::Report(Box::new(report)),
                    Ok(Err(e)) => error_message(ApiError::from_lab_in(e, locale)),
                    Err(join) => {
                        tracing::error!(error = %join, "a stepped run failed");
                        refusal(locale, "internal")
                    }
                };
                return commands.is_some() && send(socket, &message).await.is_ok();
            }
        }
    }
}

enum Received {
    Command(Command),
    Unreadable,
    Gone,
}

async fn receive(socket: &mut WebSocket) -> Received {
    loop {
        return match socket.recv().await {
            Some(Ok(Frame::Text(text))) => match serde_json::from_str(text.as_str()) {
                Ok(command) => Received::Command(command),
                Err(_) => Received::Unreadable,
            },
            Some(Ok(Frame::Binary(_))) => Received::Unreadable,
            // axum answers pings itself.
            Some(Ok(Frame::Ping(_) | Frame::Pong(_))) => continue,
            Some(Ok(Frame::Close(_))) | Some(Err(_)) | None => Received::Gone,
        };
    }
}

async fn send(socket: &mut WebSocket, message: &Message) -> Result<(), axum::Error> {
    let text = serde_json::to_string(message).map_err(axum::Error::new)?;
    socket.send(Frame::Text(Utf8Bytes::from(text))).await
}

/// A refusal from the runner carries only its code; it is worded here.
fn localised(message: Message, locale: Locale) -> Message {
    match message {
        Message::Error(StepError { code, message }) if message.is_empty() => refusal(locale, &code),
        other => other,
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
