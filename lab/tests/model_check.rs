//! The model check: seeded random sequences of learner actions over many sandboxes at once.
//!
//! The test keeps its own copy of every sandbox's state, advanced by the reference model
//! alone. After every action the report must equal that prediction, and the report's tables
//! must equal a fresh read of the sandbox. A mismatch prints the seed and the shortest
//! sequence (replayed and shrunk in a fresh sandbox) that still shows it.
//!
//! The test command runs 1 000 actions over 10 sandboxes. The soak command raises the numbers:
//! `MODEL_CHECK_ACTIONS=10000 MODEL_CHECK_SANDBOXES=100`; `MODEL_CHECK_SEED` replays a run.

mod common;

use std::fmt;

use outbox_lab::catalog::{CommitFate, ConsumerCrash, Mistake, Mode, OutcomeId, PublisherCrash};
use outbox_lab::input::{AttemptSpec, EventId, Mistakes, Payload};
use outbox_lab::model;
use outbox_lab::pg::{Lab, LabConfig, LabError, SchemaName};
use outbox_lab::prediction::Prediction;
use outbox_lab::report::{Expected, Report};
use outbox_lab::snapshot::Snapshot;
use outbox_lab::sql_trace::{Actor, Answer};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// Event ids the learner may type: the lesson's, a retry's fresh one, and one with quotes.
const EVENT_IDS: &[&str] = &[
    "event-ticket-900",
    "event-ticket-901",
    "ev'; DROP TABLE x;--",
];

/// Payloads: the lesson's, one PostgreSQL normalises, and several it refuses.
const PAYLOADS: &[&str] = &[
    r#"{"ticket_id":"ticket-42","from":"open","to":"resolved"}"#,
    r#"{"b": 1, "a": [1.50, true, null], "a": "dup"}"#,
    "{not json",
    r#""\u0000""#,
    "<script>alert(1)</script>",
    "",
];

#[derive(Clone, Debug)]
enum Action {
    Reset,
    Reopen,
    Attempt(AttemptSpec),
    Reconcile,
    Race(Mistakes),
    Restart(PublisherCrash),
    PublishRace(bool),
    Consume(bool, ConsumerCrash),
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Reset => f.write_str("reset"),
            Action::Reopen => f.write_str("reopen"),
            Action::Reconcile => f.write_str("reconcile"),
            Action::Race(m) => write!(f, "race(mistakes={:?})", m.ids()),
            Action::Restart(c) => write!(f, "restart(crash={c})"),
            Action::PublishRace(skip) => write!(f, "publish_race(skip_locked={skip})"),
            Action::Consume(inbox, c) => write!(f, "consume(inbox={inbox}, crash={c})"),
            Action::Attempt(s) => write!(
                f,
                "attempt(mode={}, mistakes={:?}, crash={}, fate={}, event_id={:?}, payload={:?})",
                s.mode,
                s.mistakes.ids(),
                s.crash,
                s.commit_fate,
                s.event_id.as_str(),
                s.payload.as_str()
            ),
        }
    }
}

fn random_action(rng: &mut StdRng) -> Action {
    match rng.random_range(0..16) {
        0 => Action::Reset,
        1 => Action::Reopen,
        2 | 3 => Action::Reconcile,
        12 | 13 => {
            Action::Restart(PublisherCrash::ALL[rng.random_range(0..PublisherCrash::ALL.len())])
        }
        14 => Action::PublishRace(rng.random_bool(0.5)),
        15 => Action::Consume(
            rng.random_bool(0.5),
            ConsumerCrash::ALL[rng.random_range(0..ConsumerCrash::ALL.len())],
        ),
        4 => Action::Race(if rng.random_bool(0.5) {
            Mistakes::of(&[Mistake::UnguardedUpdate])
        } else {
            Mistakes::none()
        }),
        _ => {
            let pick = |rng: &mut StdRng, n: usize| rng.random_range(0..n);
            // Mostly the lesson's mode, so its paths stay the most exercised.
            let mode = if rng.random_bool(0.6) {
                Mode::Outbox
            } else {
                Mode::ALL[pick(rng, Mode::ALL.len())]
            };
            let crash = mode.crash_points()[pick(rng, mode.crash_points().len())];
            let mut mistakes: Vec<Mistake> = Vec::new();
            if mode == Mode::Outbox {
                for &m in Mistake::ALL {
                    if rng.random_bool(0.2) {
                        mistakes.push(m);
                    }
                }
                if mistakes.contains(&Mistake::InsertOutsideTx) {
                    mistakes.retain(|m| *m != Mistake::UpdateOutsideTx);
                }
            }
            let commit_fate = CommitFate::ALL[pick(rng, CommitFate::ALL.len())];
            // Mostly the lesson's payload, so the interesting paths past the INSERT are common.
            let payload = if rng.random_bool(0.7) {
                PAYLOADS[0]
            } else {
                PAYLOADS[pick(rng, PAYLOADS.len())]
            };
            Action::Attempt(AttemptSpec {
                mode,
                mistakes: Mistakes::of(&mistakes),
                crash,
                commit_fate,
                event_id: EventId::parse(EVENT_IDS[pick(rng, EVENT_IDS.len())])
                    .expect("the test's event ids are valid"),
                payload: Payload::parse(payload).expect("the test's payloads are within limits"),
            })
        }
    }
}

/// What the last attempt left for reconciliation, in the model's terms.
#[derive(Clone)]
struct PendingModel {
    before: Snapshot,
    spec: AttemptSpec,
    stored_payload: Option<String>,
    committed: bool,
}

/// The test's own view of one sandbox, advanced by the model alone.
struct ModelSandbox {
    state: Snapshot,
    pending: Option<PendingModel>,
}

impl ModelSandbox {
    fn new() -> Self {
        ModelSandbox {
            state: model::initial_state(),
            pending: None,
        }
    }
}

#[derive(Debug)]
struct Mismatch(String);

/// Picks the predicted state the database really reached, if the model allowed it.
fn reached(expected: &Expected, outcome: Option<OutcomeId>, report: &Report) -> Option<Snapshot> {
    expected
        .possible
        .iter()
        .find(|p| p.outcome == outcome && p.state.same_as(&report.snapshot))
        .map(|p| p.state.clone())
}

/// What PostgreSQL makes of a payload (the model's input): asked here the way the runner asks,
/// through the lab's own function.
async fn stored_payload(lab: &Lab, payload: &Payload) -> Result<Option<String>, Mismatch> {
    sqlx::query_scalar("SELECT lab.jsonb_text($1)")
        .bind(payload.as_str())
        .fetch_one(lab.pool())
        .await
        .map_err(|e| Mismatch(format!("lab.jsonb_text failed: {e}")))
}

/// What PostgreSQL says of the attempt's transaction, by the id the trace noted inside it.
async fn committed_by_xid(lab: &Lab, report: &Report) -> Result<bool, Mismatch> {
    let xid = report
        .trace
        .iter()
        .filter(|t| t.actor == Actor::Playground)
        .find_map(|t| match &t.answer {
            Answer::Values { values } if values.len() == 3 => Some(values[2].clone()),
            _ => None,
        })
        .ok_or_else(|| Mismatch("the attempt's trace names no transaction id".into()))?;
    let status: Option<String> = sqlx::query_scalar("SELECT pg_xact_status($1::xid8)")
        .bind(&xid)
        .fetch_one(lab.pool())
        .await
        .map_err(|e| Mismatch(format!("pg_xact_status failed: {e}")))?;
    Ok(status.as_deref() == Some("committed"))
}

/// Runs one action and checks it against the model and a fresh read.
async fn step(
    lab: &Lab,
    sandbox: &SchemaName,
    m: &mut ModelSandbox,
    action: &Action,
) -> Result<(), Mismatch> {
    // The attempt's payload as PostgreSQL stores it, asked before the action runs.
    let stored = match action {
        Action::Attempt(spec) => stored_payload(lab, &spec.payload).await?,
        _ => None,
    };
    let (result, expected) = match action {
        Action::Reset => (
            lab.reset(sandbox).await,
            Some(model::predict_state(model::initial_state())),
        ),
        Action::Reopen => (
            lab.reopen(sandbox).await,
            Some(model::predict_state(model::reopened(&m.state))),
        ),
        Action::Attempt(spec) => (
            lab.attempt(sandbox, spec).await,
            Some(model::predict_attempt(&m.state, spec, stored.as_deref())),
        ),
        Action::Race(mistakes) => {
            let (a, b) = model::race_specs(mistakes);
            let stored_a = stored_payload(lab, &a.payload).await?;
            let stored_b = stored_payload(lab, &b.payload).await?;
            (
                lab.race(sandbox, mistakes).await,
                Some(model::predict_race(
                    &m.state,
                    mistakes,
                    [stored_a.as_deref(), stored_b.as_deref()],
                )),
            )
        }
        Action::Restart(crash) => (
            lab.restart(sandbox, *crash, &Prediction::none()).await,
            Some(model::predict_restart(&m.state, *crash)),
        ),
        Action::PublishRace(skip) => (
            lab.publish_race(sandbox, *skip).await,
            Some(model::predict_publish_race(&m.state, *skip)),
        ),
        Action::Consume(inbox, crash) => (
            lab.consume(sandbox, *inbox, *crash, &Prediction::none())
                .await,
            Some(model::predict_consume(&m.state, *inbox, *crash)),
        ),
        Action::Reconcile => match &m.pending {
            None => {
                return match lab.reconcile(sandbox).await {
                    Err(LabError::NothingToReconcile) => Ok(()),
                    other => Err(Mismatch(format!(
                        "reconcile without a pending attempt must be refused, got {other:?}"
                    ))),
                };
            }
            Some(p) => (
                lab.reconcile(sandbox).await,
                Some(model::predict_reconcile(
                    &p.before,
                    &p.spec,
                    p.stored_payload.as_deref(),
                    p.committed,
                    false,
                )),
            ),
        },
    };
    let report = result.map_err(|e| Mismatch(format!("{action} failed: {e}")))?;
    let expected = expected.expect("every branch predicts");
    let Some(state) = reached(&expected, report.outcome, &report) else {
        return Err(Mismatch(format!(
            "{action}: the model predicted one of {:#?},\nthe database answered {:?} with {:#?}",
            expected.possible, report.outcome, report.snapshot
        )));
    };
    if report.matches_model != Some(true) {
        return Err(Mismatch(format!(
            "{action}: the runner's own model check disagrees"
        )));
    }
    let fresh = common::plain_snapshot(lab.pool(), sandbox)
        .await
        .map_err(|e| Mismatch(format!("fresh read failed: {e}")))?;
    if fresh != report.snapshot {
        return Err(Mismatch(format!(
            "{action}: the report shows {:#?} but the sandbox holds {fresh:#?}",
            report.snapshot
        )));
    }
    // A replay rebuilds every step's tables from the report alone; its end must be
    // PostgreSQL's (a reset puts tables back in one function: it has no steps to replay).
    if !matches!(action, Action::Reset) && outbox_lab::replay::views(&report).is_none() {
        return Err(Mismatch(format!(
            "{action}: a replay cannot rebuild its steps from {:#?}",
            report.trace
        )));
    }
    match action {
        Action::Reset
        | Action::Reopen
        | Action::Race(_)
        | Action::Restart(_)
        | Action::PublishRace(_)
        | Action::Consume(..) => m.pending = None,
        Action::Attempt(spec) => {
            let committed = match report.outcome {
                Some(OutcomeId::CommitUnknown) => {
                    let fate_allows = |fate| {
                        let mut s = spec.clone();
                        s.commit_fate = fate;
                        model::predict_attempt(&m.state, &s, stored.as_deref())
                            .allows(report.outcome, &state)
                    };
                    match (
                        fate_allows(CommitFate::Applied),
                        fate_allows(CommitFate::NotApplied),
                    ) {
                        // Both fates leave the same tables (say, an INSERT outside the
                        // transaction on an already resolved ticket): only PostgreSQL knows.
                        (true, true) => committed_by_xid(lab, &report).await?,
                        (applied, _) => applied,
                    }
                }
                Some(o) => o.committed() == Some(true),
                None => false,
            };
            m.pending = Some(PendingModel {
                before: m.state.clone(),
                spec: spec.clone(),
                stored_payload: stored.clone(),
                committed,
            });
        }
        Action::Reconcile => {}
    }
    m.state = state;
    Ok(())
}

/// Runs a whole sequence from the initial state; the index of the failing action and why.
async fn run_sequence(
    labs: &[Lab],
    sandbox: &SchemaName,
    actions: &[(usize, Action)],
) -> Result<(), (usize, Mismatch)> {
    let mut m = ModelSandbox::new();
    for (i, (replica, action)) in actions.iter().enumerate() {
        step(&labs[*replica % labs.len()], sandbox, &mut m, action)
            .await
            .map_err(|e| (i, e))?;
    }
    Ok(())
}

/// Removes actions one by one while the sequence still fails, in fresh sandboxes.
async fn shrink(labs: &[Lab], mut actions: Vec<(usize, Action)>) -> Vec<(usize, Action)> {
    let mut i = 0;
    while i < actions.len() {
        let mut candidate = actions.clone();
        candidate.remove(i);
        let Ok((_, sandbox)) = labs[0].claim_sandbox().await else {
            break;
        };
        match run_sequence(labs, &sandbox, &candidate).await {
            Err((at, _)) => {
                candidate.truncate(at + 1);
                actions = candidate;
            }
            Ok(()) => i += 1,
        }
    }
    actions
}

struct Settings {
    seed: u64,
    actions: usize,
    sandboxes: usize,
}

fn settings() -> Settings {
    let var = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(default)
    };
    Settings {
        seed: var("MODEL_CHECK_SEED", 20_261_203),
        actions: var("MODEL_CHECK_ACTIONS", 1_000) as usize,
        sandboxes: var("MODEL_CHECK_SANDBOXES", 10).max(1) as usize,
    }
}

/// A runner with small pools: both checks run at once, up to three runners, and together they
/// must stay well inside PostgreSQL's default 100 connections.
fn replica(opts: PgConnectOptions) -> Lab {
    Lab::with_options(
        opts,
        LabConfig {
            warm_sandboxes: 0,
            pool_max: 8,
            crash_connections: 4,
            ..LabConfig::default()
        },
    )
}

/// Runs the check with requests spread over `labs` (each a replica with its own pool).
async fn model_check(labs: Vec<Lab>) {
    let s = settings();
    let per_sandbox = s.actions.div_ceil(s.sandboxes);
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..s.sandboxes {
        let labs = labs.clone();
        let seed = s.seed;
        tasks.spawn(async move {
            let mut rng = StdRng::seed_from_u64(seed.wrapping_add(index as u64));
            let (_, sandbox) = labs[0].claim_sandbox().await.expect("claim a sandbox");
            let mut m = ModelSandbox::new();
            // Since the last reset: replaying these from the initial state reproduces a failure.
            let mut since_reset: Vec<(usize, Action)> = Vec::new();
            for _ in 0..per_sandbox {
                let action = random_action(&mut rng);
                let replica = rng.random_range(0..labs.len());
                if matches!(action, Action::Reset) {
                    since_reset.clear();
                } else {
                    since_reset.push((replica, action.clone()));
                }
                if let Err(Mismatch(why)) = step(&labs[replica], &sandbox, &mut m, &action).await {
                    return Err((index, why, since_reset));
                }
            }
            Ok(per_sandbox)
        });
    }
    let mut done = 0;
    while let Some(joined) = tasks.join_next().await {
        match joined.expect("a sandbox task panicked") {
            Ok(n) => done += n,
            Err((index, why, sequence)) => {
                tasks.abort_all();
                let shortest = shrink(&labs, sequence).await;
                let listed: Vec<String> = shortest
                    .iter()
                    .map(|(replica, a)| format!("  replica {replica}: {a}"))
                    .collect();
                panic!(
                    "model check failed: seed {} (MODEL_CHECK_SEED), sandbox {index}\n{why}\n\
                     shortest sequence from the initial state:\n{}",
                    s.seed,
                    listed.join("\n")
                );
            }
        }
    }
    assert!(done >= s.actions, "ran {done} of {} actions", s.actions);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn random_actions_always_match_the_model_and_the_database(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    model_check(vec![replica(opts)]).await;
}

/// Two replicas with their own pools against one database: every action may go to either,
/// so nothing a learner needs may live in one process only.
#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn two_replicas_sharing_one_database_agree_with_the_model(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let labs = vec![replica(opts.clone()), replica(opts)];
    model_check(labs).await;
}
