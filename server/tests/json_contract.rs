//! The JSON contract, pinned: one answer of every JSON endpoint (and of the stepper's socket),
//! from a fresh database per test with fixed inputs, compared with the snapshots under
//! `tests/snapshots/`. A field renamed, dropped, added or filled differently fails here, so the
//! README's description of the API cannot drift away from what the server says without someone
//! reviewing the change (`cargo insta review`, or `INSTA_UPDATE=always` then `git diff`).
//!
//! What differs between two runs of the same request is redacted, and only that:
//! - moments: `at_us`, `answered_us` (microseconds since the action started) and `published_at`
//!   (PostgreSQL's `now()`), by field name with insta's selectors; a NULL `published_at` stays
//!   null, because "not published yet" is part of the contract;
//! - identities: backend pids, transaction ids, sandbox schema names and replay ids, by
//!   [`Redactor`], which numbers them in order of appearance (`[pid-1]`, `[xid-1]`,
//!   `[sandbox-1]`…) instead of blanking them, so that "B waits for A's backend" or "the
//!   reconcile asks about the attempt's transaction" stays visible in the snapshot.
//!
//! Cookies and sandbox tokens travel in headers, never in these bodies, so nothing else varies.

mod common;

use std::collections::HashMap;

use app::backend::request::WebSettings;
use axum::Router;
use common::socket::{Socket, config, serve};
use common::{app, app_with, cookie_pair, get, post};
use http::StatusCode;
use insta::internals::Content;
use outbox_lab::catalog::{CrashPoint, Mode};
use outbox_lab::pg::{LabConfig, SchemaName};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

const AUTHOR_TOKEN: &str = "author-token-for-the-json-contract";

/// Learns the run's random identities as it meets them and replaces them with stable names.
/// One per test, so that the same backend or sandbox keeps its name across that test's answers.
#[derive(Default)]
struct Redactor {
    /// Whole strings (pids and transaction ids as text) → their placeholder. Only a whole
    /// string is replaced: a pid's digits inside other text could be anything else.
    whole: HashMap<String, String>,
    /// Long random strings (sandbox names, replay ids) → their placeholder, replaced wherever
    /// they occur inside a string (SQL parameters, search paths, URLs).
    inside: Vec<(String, String)>,
    pids: usize,
    xids: usize,
    sandboxes: usize,
}

impl Redactor {
    fn pid(&mut self, pid: String) {
        if !self.whole.contains_key(&pid) {
            self.pids += 1;
            self.whole.insert(pid, format!("[pid-{}]", self.pids));
        }
    }

    fn xid(&mut self, xid: &str) {
        // An empty text is "no transaction id assigned yet": meaningful, and always the same.
        if !xid.is_empty() && !self.whole.contains_key(xid) {
            self.xids += 1;
            self.whole
                .insert(xid.to_owned(), format!("[xid-{}]", self.xids));
        }
    }

    fn sandbox(&mut self, name: &str) {
        if !self.inside.iter().any(|(n, _)| n == name) {
            self.sandboxes += 1;
            let placeholder = format!("[sandbox-{}]", self.sandboxes);
            self.inside.push((name.to_owned(), placeholder));
        }
    }

    /// A value that varies and that the walk cannot recognise by itself (a replay id).
    fn learn(&mut self, value: &str, placeholder: &str) {
        self.inside.push((value.to_owned(), placeholder.to_owned()));
    }

    /// The answer with every identity replaced; first everything is learned, so that a value
    /// met before the field that names it (a parameter before `reconciliation.xid`) is known.
    fn redact(&mut self, mut v: Value) -> Value {
        self.collect(&v);
        self.replace(&mut v);
        v
    }

    fn collect(&mut self, v: &Value) {
        match v {
            Value::Object(map) => {
                for (key, x) in map {
                    match (key.as_str(), x) {
                        ("pid" | "waiting_pid", Value::Number(n)) => self.pid(n.to_string()),
                        ("blocked_by" | "waited_behind", Value::Array(pids)) => {
                            for n in pids.iter().filter(|n| n.is_number()) {
                                self.pid(n.to_string());
                            }
                        }
                        ("xid", Value::String(s)) => self.xid(s),
                        _ => {}
                    }
                }
                self.collect_plumbing(map);
                for x in map.values() {
                    self.collect(x);
                }
            }
            Value::Array(items) => {
                for x in items {
                    self.collect(x);
                }
            }
            Value::String(s) => {
                for name in sandbox_names(s) {
                    self.sandbox(name);
                }
            }
            _ => {}
        }
    }

    /// The playground's plumbing notes the backend's pid and the transaction id by selecting
    /// them (`SELECT set_config(…), pg_backend_pid(), pg_current_xact_id()::text`): the trace
    /// step's answer holds them as text, matched to the select list by position.
    fn collect_plumbing(&mut self, step: &serde_json::Map<String, Value>) {
        let sql = step
            .get("sent")
            .and_then(|s| s.get("sql"))
            .and_then(|s| s.get("sql"))
            .and_then(Value::as_str);
        // Externally tagged: `{"values": {"values": […]}}`.
        let values = step
            .get("answer")
            .and_then(|a| a.get("values"))
            .and_then(|a| a.get("values"))
            .and_then(Value::as_array);
        let (Some(sql), Some(values)) = (sql, values) else {
            return;
        };
        if !sql.contains("pg_backend_pid") && !sql.contains("xact_id") {
            return;
        }
        let items = select_list(sql);
        assert_eq!(
            items.len(),
            values.len(),
            "a plumbing statement whose answer does not match its select list: {sql} → {values:?}"
        );
        for (item, value) in items.iter().zip(values) {
            let Some(value) = value.as_str() else {
                continue;
            };
            if item.contains("pg_backend_pid") {
                self.pid(value.to_owned());
            } else if item.contains("xact_id") {
                self.xid(value);
            }
        }
    }

    fn replace(&self, v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (key, x) in map.iter_mut() {
                    match key.as_str() {
                        "pid" | "waiting_pid" => self.replace_number(x),
                        "blocked_by" | "waited_behind" => {
                            if let Value::Array(pids) = x {
                                pids.iter_mut().for_each(|n| self.replace_number(n));
                            }
                        }
                        _ => self.replace(x),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|x| self.replace(x)),
            Value::String(s) => {
                if let Some(placeholder) = self.whole.get(s.as_str()) {
                    *s = placeholder.clone();
                    return;
                }
                for (from, to) in &self.inside {
                    if s.contains(from.as_str()) {
                        *s = s.replace(from.as_str(), to);
                    }
                }
                if s.bytes().any(|b| b.is_ascii_digit()) {
                    *s = self.replace_numbers_in(s);
                }
            }
            _ => {}
        }
    }

    /// A text that quotes a pid or a transaction id (`pg_xact_status(745) = aborted`): each
    /// whole run of digits that is a known one is replaced; a run is never split, so `745`
    /// inside `17450` stays.
    fn replace_numbers_in(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut digits = String::new();
        let flush = |digits: &mut String, out: &mut String| {
            match self.whole.get(digits.as_str()) {
                Some(placeholder) => out.push_str(placeholder),
                None => out.push_str(digits),
            }
            digits.clear();
        };
        for c in s.chars() {
            if c.is_ascii_digit() {
                digits.push(c);
            } else {
                flush(&mut digits, &mut out);
                out.push(c);
            }
        }
        flush(&mut digits, &mut out);
        out
    }

    fn replace_number(&self, v: &mut Value) {
        if v.is_number()
            && let Some(placeholder) = self.whole.get(&v.to_string())
        {
            *v = Value::String(placeholder.clone());
        }
    }
}

/// The sandbox schema names inside a text: `sb_` and 20 base32 letters, as the server makes
/// them (checked by the server's own parser, so nothing that merely starts with `sb_` counts).
fn sandbox_names(s: &str) -> Vec<&str> {
    const LEN: usize = 3 + 20;
    s.match_indices("sb_")
        .filter_map(|(at, _)| s.get(at..at + LEN))
        .filter(|candidate| SchemaName::parse(candidate).is_some())
        .collect()
}

/// The items of a statement's select list, split at the commas outside parentheses.
fn select_list(sql: &str) -> Vec<String> {
    let list = sql.split_once("SELECT ").map_or(sql, |(_, rest)| rest);
    let list = list.split(" FROM ").next().unwrap_or(list);
    let mut items = vec![String::new()];
    let mut depth = 0_i32;
    for c in list.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                items.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(item) = items.last_mut() {
            item.push(c);
        }
    }
    items
}

/// Compares `value` with the snapshot `name`. Moments are redacted here, by field name, at
/// any depth; `request` is written into the snapshot's header so a reviewer sees what was
/// asked without reading the test.
fn pin(name: &str, request: &str, value: &Value) {
    let mut settings = insta::Settings::clone_current();
    settings.set_description(request);
    settings.set_omit_expression(true);
    settings.add_redaction(".**.at_us", "[µs]");
    settings.add_redaction(".**.answered_us", "[µs]");
    settings.add_dynamic_redaction(".**.published_at", |value, _path| {
        match value.resolve_inner() {
            Content::None | Content::Unit => value,
            _ => Content::from("[timestamp]"),
        }
    });
    settings.bind(|| insta::assert_json_snapshot!(name, value));
}

/// A learner with a cookie jar of one cookie, and the redactor of their test.
struct Learner<'a> {
    app: &'a Router,
    cookie: Option<String>,
    redactor: Redactor,
}

impl<'a> Learner<'a> {
    fn new(app: &'a Router) -> Self {
        Learner {
            app,
            cookie: None,
            redactor: Redactor::default(),
        }
    }

    /// Posts a form in English (the messages of one language, so the snapshots read well;
    /// [`refusals_answer_code_status_and_message`] pins the default language too), keeps the
    /// sandbox cookie, and answers status and redacted body.
    async fn post_raw(
        &mut self,
        path: &str,
        form: &str,
        lang: Option<&str>,
    ) -> (StatusCode, Value) {
        let mut headers = vec![];
        let cookie = self.cookie.clone().unwrap_or_default();
        if !cookie.is_empty() {
            headers.push(("cookie", cookie.as_str()));
        }
        let path = match lang {
            Some(l) if path.contains('?') => format!("{path}&lang={l}"),
            Some(l) => format!("{path}?lang={l}"),
            None => path.to_owned(),
        };
        let answer = post(self.app, &path, form, &headers).await;
        if let Some(set) = answer.cookie {
            self.cookie = Some(cookie_pair(&set));
        }
        (answer.status, self.redactor.redact(answer.json))
    }

    /// An answer that must be a success.
    async fn post(&mut self, path: &str, form: &str) -> Value {
        let (status, json) = self.post_raw(path, form, Some("en")).await;
        assert_eq!(status, StatusCode::OK, "{path} {form}: {json}");
        json
    }

    /// A refusal: status and body together, as a client sees them.
    async fn refused(&mut self, path: &str, form: &str, lang: Option<&str>) -> Value {
        let (status, json) = self.post_raw(path, form, lang).await;
        assert!(status.is_client_error(), "{path} {form}: {status} {json}");
        json!({"request": format!("POST {path} {form}"), "status": status.as_u16(), "body": json})
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn an_attempt_with_predictions_and_the_progress_it_leaves(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let mut me = Learner::new(&app);
    // One prediction wrong (Kafka), so the report shows a `why`.
    let form = "crash=none&predict_ticket=resolved&predict_outbox=row&predict_kafka=event\
                &predict_client=ok";
    let attempt = me.post("/api/attempt", form).await;
    pin("attempt", &format!("POST /api/attempt {form}"), &attempt);
    let progress = me.post("/api/progress", "").await;
    pin(
        "progress",
        "POST /api/progress (after the attempt)",
        &progress,
    );
    let on = me.post("/api/predict_first", "on=true").await;
    pin("predict_first", "POST /api/predict_first on=true", &on);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn reset_reopen_snapshot_current_and_start_over(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let mut me = Learner::new(&app);
    let reset = me.post("/api/reset", "").await;
    pin(
        "reset",
        "POST /api/reset (a newcomer: claims a sandbox)",
        &reset,
    );
    me.post("/api/attempt", "crash=none").await;
    let reopened = me.post("/api/reopen", "").await;
    pin(
        "reopen",
        "POST /api/reopen (after a committed attempt)",
        &reopened,
    );
    let snapshot = me.post("/api/snapshot", "").await;
    pin(
        "snapshot",
        "POST /api/snapshot (after the reopen)",
        &snapshot,
    );
    // The last action's report is the reopen's, byte for byte: pinned once, above.
    let current = me.post("/api/current", "").await;
    assert_eq!(current, reopened);
    let over = me.post("/api/start_over", "").await;
    pin("start_over", "POST /api/start_over", &over);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_lost_commit_reply_reconciled(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let mut me = Learner::new(&app);
    // `applied`, not the default `random`: the fate is drawn otherwise.
    let lost = me
        .post(
            "/api/attempt",
            "crash=commit_reply_lost&commit_fate=applied",
        )
        .await;
    assert_eq!(lost["outcome"], "commit_unknown", "{lost}");
    let reconciled = me.post("/api/reconcile", "").await;
    pin(
        "reconcile",
        "POST /api/reconcile (after crash=commit_reply_lost&commit_fate=applied)",
        &reconciled,
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_race(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let mut me = Learner::new(&app);
    // Deterministic by construction: A's UPDATE takes the row lock before B's is sent, and A
    // goes on only once PostgreSQL shows B waiting.
    let race = me.post("/api/race", "").await;
    pin("race", "POST /api/race (guarded UPDATE)", &race);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn after_commit_restart_publish_race_and_consume(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let mut me = Learner::new(&app);
    me.post("/api/attempt", "crash=after_commit").await;
    // The broker took the event, the mark did not commit: the row is still unpublished.
    let restart = me.post("/api/restart", "crash=after_send").await;
    pin("restart", "POST /api/restart crash=after_send", &restart);
    // Two publishers with a plain FOR UPDATE: A publishes the row again, B waits for A's lock
    // and then finds it marked.
    let raced = me.post("/api/publish_race", "skip_locked=off").await;
    pin(
        "publish_race",
        "POST /api/publish_race skip_locked=off",
        &raced,
    );
    // The topic holds event-ticket-900 twice; the inbox applies it once.
    let consumed = me.post("/api/consume", "inbox=on").await;
    pin("consume", "POST /api/consume inbox=on", &consumed);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_comparison_and_the_autorun_link(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let mut me = Learner::new(&app);
    // A comparison draws a `random` fate once for both sides even when no COMMIT reply is
    // lost, and echoes it in both reports: a fixed fate keeps the answer the same.
    let form = "way=naive&crash=after_commit&commit_fate=applied";
    let compared = me.post("/api/compare", form).await;
    pin("compare", &format!("POST /api/compare {form}"), &compared);
    // The kept comparison is the same answer: pinned once, above.
    let kept = me.post("/api/last_compare", "").await;
    assert_eq!(kept, compared);
    let autorun = me
        .post("/api/autorun", "mode=naive&crash=after_commit")
        .await;
    pin(
        "autorun",
        "POST /api/autorun mode=naive&crash=after_commit",
        &autorun,
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_shared_run_and_its_replay(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let mut me = Learner::new(&app);
    me.post("/api/attempt", "crash=after_insert").await;
    let shared = me.post("/api/share", "").await;
    // The id is a hash of what is kept, moments included: it differs from run to run.
    let id = shared["id"].as_str().expect("an id").to_owned();
    assert_eq!(id.len(), 32, "{shared}");
    me.redactor.learn(&id, "[replay-id]");
    let shared = me.redactor.redact(shared);
    pin(
        "share",
        "POST /api/share (after crash=after_insert)",
        &shared,
    );
    let replay = me.post("/api/replay", &format!("id={id}")).await;
    pin("replay", "POST /api/replay id=<the shared id>", &replay);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_quests_and_the_authors_counts(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let web = WebSettings {
        author_token: Some(AUTHOR_TOKEN.to_owned()),
        ..WebSettings::default()
    };
    let app = app_with(opts, LabConfig::default(), web);
    let mut me = Learner::new(&app);
    let list = me.post("/api/quests", "").await;
    pin("quests", "POST /api/quests (a newcomer)", &list);
    let hint = me.post("/api/quest_hint", "quest=commit_not_kafka").await;
    pin(
        "quest_hint",
        "POST /api/quest_hint quest=commit_not_kafka",
        &hint,
    );
    me.post("/api/attempt", "crash=after_commit").await;
    let form = "quest=commit_not_kafka&answer=delivered";
    let answered = me.post("/api/quest_answer", form).await;
    pin(
        "quest_answer",
        &format!("POST /api/quest_answer {form} (a wrong answer, after crash=after_commit)"),
        &answered,
    );
    let counts = me
        .post("/api/author", &format!("token={AUTHOR_TOKEN}"))
        .await;
    pin("author", "POST /api/author token=<the token>", &counts);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn refusals_answer_code_status_and_message(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let mut me = Learner::new(&app);
    let refusals = vec![
        // The default language (no `lang`): Russian.
        me.refused("/api/attempt", "crash=after_lunch", None).await,
        me.refused("/api/attempt", "crash=after_lunch", Some("en"))
            .await,
        me.refused("/api/reconcile", "", Some("en")).await,
        me.refused("/api/attempt", "mistake=unguarded_update", Some("en"))
            .await,
        me.refused("/api/quest_hint", "quest=no_such_quest", Some("en"))
            .await,
    ];
    pin(
        "refusals",
        "refusals: an unknown crash point (default language, then English), reconcile before \
         any attempt, an unknown field, an unknown quest",
        &Value::Array(refusals),
    );
    let (status, _, _, body) = get(&app, "/healthz", &[]).await;
    assert_eq!(status, StatusCode::OK);
    let health: Value = serde_json::from_str(&body).expect("JSON");
    pin("healthz", "GET /healthz", &health);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_stepper_socket_pauses_refuses_and_reports(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, _) = serve(opts, config()).await;
    let mut s = Socket::open(addr, None).await;
    let mut r = Redactor::default();
    let begun = s.begin(Mode::Outbox).await;
    assert_eq!(begun["at"], CrashPoint::AfterBegin.id(), "{begun}");
    pin(
        "step_pause_after_begin",
        "/api/step {\"cmd\":\"begin\",\"mode\":\"outbox\"}",
        &r.redact(json!({ "pause": begun })),
    );
    // COMMIT is not next here: refused, and the run goes on. The socket has no `lang` cookie,
    // so the message is in the default language (Russian).
    s.send(json!({"cmd": "commit_reply_lost", "commit_fate": "applied"}))
        .await;
    let refused = s.recv().await;
    pin(
        "step_error",
        "/api/step {\"cmd\":\"commit_reply_lost\"} after BEGIN",
        &r.redact(refused),
    );
    s.send(json!({"cmd": "next"})).await;
    let updated = s.pause().await;
    assert_eq!(updated["at"], CrashPoint::AfterUpdate.id(), "{updated}");
    pin(
        "step_pause_after_update",
        "/api/step {\"cmd\":\"next\"} after BEGIN",
        &r.redact(json!({ "pause": updated })),
    );
    s.send(json!({"cmd": "crash"})).await;
    let report = s.recv().await;
    pin(
        "step_report",
        "/api/step {\"cmd\":\"crash\"} after the UPDATE",
        &r.redact(report),
    );
}
