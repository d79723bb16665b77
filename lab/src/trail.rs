//! Where a run ended, as the timeline draws it: the steps the function reached, the step
//! PostgreSQL refused, the gap where the process died, the COMMIT whose reply was lost.

use serde::{Deserialize, Serialize};

use crate::catalog::{CrashPoint, Mode, Step};
use crate::report::Report;
use crate::sql_trace::{Answer, Sent};

/// The path of one attempt through its mode's timeline.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trail {
    /// The mode the attempt ran (the strip shows the trail only on that mode's drawing).
    pub mode: Option<Mode>,
    /// The function's steps that ran, in order.
    pub reached: Vec<Step>,
    /// The step PostgreSQL answered with an error or, for the guarded UPDATE, with 0 rows.
    pub refused: Option<Step>,
    /// The gap where the process died.
    pub died: Option<CrashPoint>,
    /// COMMIT was sent and its reply never came.
    pub reply_lost: bool,
}

impl Trail {
    /// The trail of an attempt's report; empty for other actions and for a race.
    pub fn of(report: &Report) -> Trail {
        let Some(attempt) = report.attempt.as_ref().filter(|_| report.race.is_none()) else {
            return Trail::default();
        };
        let mode = attempt.mode;
        let mut trail = Trail {
            mode: Some(mode),
            ..Trail::default()
        };
        for s in &report.trace {
            if matches!(s.sent, Sent::ProcessCrashed) {
                trail.died = Some(attempt.crash);
            }
            if matches!(s.sent, Sent::ConnectionCut) {
                trail.reply_lost = true;
            }
            let Some(step) = s.step.filter(|st| mode.steps().any(|m| m == *st)) else {
                continue;
            };
            if trail.reached.last() != Some(&step) && !trail.reached.contains(&step) {
                trail.reached.push(step);
            }
            let refused = match &s.answer {
                Answer::Error { .. } => true,
                Answer::Ok { rows: Some(0) } => step == Step::Update,
                _ => false,
            };
            if refused && trail.refused.is_none() {
                trail.refused = Some(step);
            }
        }
        trail
    }

    /// Space-separated ids of the reached steps, for a data attribute.
    pub fn reached_ids(&self) -> String {
        self.reached
            .iter()
            .map(|s| s.id())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{ActionKind, CommitFate};
    use crate::input::AttemptSettings;
    use crate::input::Mistakes;
    use crate::snapshot::Snapshot;
    use crate::sql_trace::{Actor, TraceStep, TxState};

    fn step(step: Step, sent: Sent, answer: Answer) -> TraceStep {
        TraceStep {
            actor: Actor::Service,
            sent,
            answer,
            tx: TxState::Open,
            at_us: 0,
            lane: None,
            answered_us: None,
            step: Some(step),
        }
    }

    fn sql(s: &str) -> Sent {
        Sent::Sql {
            sql: s.to_owned(),
            params: Vec::new(),
        }
    }

    fn ok(rows: u64) -> Answer {
        Answer::Ok { rows: Some(rows) }
    }

    fn report(crash: CrashPoint, trace: Vec<TraceStep>) -> Report {
        let mut r = Report::of_snapshot("sb".into(), ActionKind::Attempt, Snapshot::default());
        r.attempt = Some(AttemptSettings {
            mode: Mode::Outbox,
            mistakes: Mistakes::none(),
            crash,
            commit_fate: CommitFate::Random,
            event_id: "e".into(),
            payload: "{}".into(),
        });
        r.trace = trace;
        r
    }

    #[test]
    fn a_crash_after_the_insert_reaches_the_insert_and_dies_after_it() {
        let r = report(
            CrashPoint::AfterInsert,
            vec![
                step(Step::Begin, sql("BEGIN"), Answer::Ok { rows: None }),
                step(Step::Update, sql("UPDATE"), ok(1)),
                step(Step::Insert, sql("INSERT"), ok(1)),
                step(Step::Crash, Sent::ProcessCrashed, Answer::Nothing),
            ],
        );
        let t = Trail::of(&r);
        assert_eq!(t.reached, vec![Step::Begin, Step::Update, Step::Insert]);
        assert_eq!(t.died, Some(CrashPoint::AfterInsert));
        assert_eq!(t.refused, None);
        assert!(!t.reply_lost);
        assert_eq!(t.reached_ids(), "begin update insert");
    }

    #[test]
    fn a_guard_that_changes_no_row_is_a_refusal_at_the_update() {
        let r = report(
            CrashPoint::None,
            vec![
                step(Step::Begin, sql("BEGIN"), Answer::Ok { rows: None }),
                step(Step::Update, sql("UPDATE"), ok(0)),
                step(Step::Update, sql("ROLLBACK"), Answer::Ok { rows: None }),
            ],
        );
        let t = Trail::of(&r);
        assert_eq!(t.refused, Some(Step::Update));
        assert_eq!(t.died, None);
    }

    #[test]
    fn a_lost_reply_is_drawn_on_commit() {
        let r = report(
            CrashPoint::CommitReplyLost,
            vec![
                step(Step::Commit, sql("COMMIT"), Answer::Nothing),
                step(Step::Commit, Sent::ConnectionCut, Answer::Nothing),
            ],
        );
        let t = Trail::of(&r);
        assert!(t.reply_lost);
        assert_eq!(t.reached, vec![Step::Commit]);
    }

    #[test]
    fn actions_other_than_an_attempt_draw_no_trail() {
        let r = Report::of_snapshot("sb".into(), ActionKind::Reset, Snapshot::default());
        assert_eq!(Trail::of(&r), Trail::default());
    }
}
