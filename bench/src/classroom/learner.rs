//! One simulated learner in phase 1: think, then do what the page offers, again and again
//! until the phase ends. The mix follows the page: page views and attempts most, the lesson's
//! side trips less.

use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;
use tokio::time::Instant;

use super::browser::{Client, Jar};
use super::stepper::{self, Plan};
use super::tally::Tally;

/// What a learner's session needs from the class.
pub struct Classroom {
    pub client: Client,
    pub url: String,
    pub origin: String,
    pub think: Duration,
}

/// One thing a learner does: a request to an endpoint, or a stepped run.
#[derive(Clone)]
pub enum Action {
    Page,
    Post {
        kind: &'static str,
        name: &'static str,
        form: String,
    },
    Step {
        begin_fields: String,
        plan: Plan,
    },
}

/// Each mode's crash points (README's table).
const OUTBOX_CRASHES: &[&str] = &[
    "none",
    "after_begin",
    "after_update",
    "after_insert",
    "after_commit",
    "commit_reply_lost",
];
const NAIVE_CRASHES: &[&str] = &["none", "after_begin", "after_update", "after_commit"];
const PUBLISH_FIRST_CRASHES: &[&str] = &[
    "none",
    "after_begin",
    "after_update",
    "after_publish",
    "after_commit",
];
const MISTAKES: &[&str] = &[
    "insert_outside_tx",
    "unguarded_update",
    "new_event_id_on_retry",
    "on_conflict_do_nothing",
    "update_outside_tx",
];
const MODES: &[&str] = &["outbox", "naive", "naive_publish_first"];

fn one<'a>(rng: &mut StdRng, from: &[&'a str]) -> &'a str {
    from[rng.random_range(0..from.len())]
}

/// `crash=…`, with a fate when the reply to COMMIT is lost.
fn crash_form(rng: &mut StdRng, crashes: &[&str]) -> String {
    let crash = one(rng, crashes);
    if crash == "commit_reply_lost" {
        let fate = one(rng, &["applied", "not_applied"]);
        format!("crash={crash}&commit_fate={fate}")
    } else {
        format!("crash={crash}")
    }
}

fn post(kind: &'static str, name: &'static str, form: impl Into<String>) -> Action {
    Action::Post {
        kind,
        name,
        form: form.into(),
    }
}

/// The page's mix, by weight (out of 100).
pub fn pick(rng: &mut StdRng) -> Action {
    match rng.random_range(0..100) {
        0..=11 => Action::Page,
        12..=25 => post("attempt", "attempt", crash_form(rng, OUTBOX_CRASHES)),
        26..=31 => post(
            "attempt naive",
            "attempt",
            format!("mode=naive&{}", crash_form(rng, NAIVE_CRASHES)),
        ),
        32..=36 => post(
            "attempt naive_publish_first",
            "attempt",
            format!(
                "mode=naive_publish_first&{}",
                crash_form(rng, PUBLISH_FIRST_CRASHES)
            ),
        ),
        37..=44 => post(
            "attempt mistakes",
            "attempt",
            format!(
                "mistakes={}&{}",
                one(rng, MISTAKES),
                crash_form(rng, OUTBOX_CRASHES)
            ),
        ),
        45..=48 => post("race", "race", one(rng, &["", "mistakes=unguarded_update"])),
        49..=52 => post(
            "compare",
            "compare",
            one(
                rng,
                &["way=naive", "way=insert_outside_tx&crash=after_insert"],
            ),
        ),
        53..=55 => post("reopen", "reopen", ""),
        56..=59 => post(
            "restart",
            "restart",
            format!("crash={}", one(rng, &["none", "before_send", "after_send"])),
        ),
        60..=63 => post(
            "consume",
            "consume",
            one(
                rng,
                &[
                    "inbox=on",
                    "inbox=off",
                    "inbox=on&crash=after_apply",
                    "inbox=off&crash=after_apply",
                ],
            ),
        ),
        64..=66 => post(
            "publish_race",
            "publish_race",
            one(rng, &["skip_locked=on", "skip_locked=off"]),
        ),
        67..=70 => post("reconcile", "reconcile", ""),
        71..=74 => post("progress", "progress", ""),
        75..=79 => post("reset", "reset", ""),
        80..=81 => post("start_over", "start_over", ""),
        82..=85 => post("current", "current", ""),
        _ => step(rng),
    }
}

/// A stepped run: any mode, walked to the end, with another writer, crashed, abandoned, or
/// with COMMIT's reply lost.
fn step(rng: &mut StdRng) -> Action {
    let mode = one(rng, MODES);
    let plan = match rng.random_range(0..6) {
        0 | 1 => Plan::Commit,
        2 => Plan::OtherWriter,
        3 => Plan::Crash(rng.random_range(1..=3)),
        4 => Plan::Abandon(rng.random_range(1..=3)),
        _ => Plan::ReplyLost(one(rng, &["applied", "not_applied"])),
    };
    Action::Step {
        begin_fields: format!(r#""mode":"{mode}""#),
        plan,
    }
}

/// Does one action and records it under `prefix` + its kind.
pub async fn perform(
    class: &Classroom,
    action: Action,
    jar: &mut Jar,
    prefix: &str,
    tally: &mut Tally,
) {
    match action {
        Action::Page => {
            let answer = class.client.get("/", jar).await;
            tally.answer(&format!("{prefix}page view"), &answer);
        }
        Action::Post { kind, name, form } => {
            let answer = class.client.post(name, &form, jar).await;
            tally.answer(&format!("{prefix}{kind}"), &answer);
        }
        Action::Step { begin_fields, plan } => {
            let run = stepper::run(&class.url, &class.origin, jar, &begin_fields, plan).await;
            tally.run(&format!("{prefix}step by step"), &run);
        }
    }
}

/// Phase 1 for one learner: until `deadline`, at most `max_actions` actions.
pub async fn mix(
    class: Arc<Classroom>,
    mut jar: Jar,
    mut rng: StdRng,
    deadline: Instant,
    max_actions: usize,
) -> (Jar, Tally) {
    let mut tally = Tally::default();
    for _ in 0..max_actions {
        let think_ms = u64::try_from(class.think.as_millis()).unwrap_or(u64::MAX / 4);
        let think = Duration::from_millis(rng.random_range(0..=think_ms.saturating_mul(2)));
        let wake = Instant::now() + think;
        if wake >= deadline {
            break;
        }
        tokio::time::sleep_until(wake).await;
        let action = pick(&mut rng);
        perform(&class, action, &mut jar, "", &mut tally).await;
    }
    (jar, tally)
}
