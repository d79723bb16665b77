//! What the learners saw, per action kind: how often, which answers, how long.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::stats::{Samples, Summary};

#[derive(Default)]
pub struct Kind {
    /// Actions done (for the stepper: runs).
    pub count: u64,
    /// Answers by label (`200`, `503 unavailable`, `served`, `broken timeout`, …).
    pub answers: BTreeMap<String, u64>,
    /// Latency of each answer (for the stepper: of each reply to a command).
    pub latency: Samples,
    /// Answers with status >= 500.
    pub server_errors: u64,
    /// Stepped runs that errored or timed out: the "wedged".
    pub wedged: u64,
}

#[derive(Default)]
pub struct Tally {
    pub kinds: BTreeMap<String, Kind>,
}

impl Tally {
    fn kind(&mut self, kind: &str) -> &mut Kind {
        self.kinds.entry(kind.to_owned()).or_default()
    }

    /// One HTTP action and its answer.
    pub fn answer(&mut self, kind: &str, answer: &super::browser::Answer) {
        let k = self.kind(kind);
        k.count += 1;
        *k.answers.entry(answer.label.clone()).or_default() += 1;
        k.latency.micros.push(micros(answer.took));
        if answer.status.is_some_and(|s| s >= 500) {
            k.server_errors += 1;
        }
    }

    /// One stepped run: its outcome and the latency of each reply it waited for.
    pub fn run(&mut self, kind: &str, run: &super::stepper::Run) {
        let k = self.kind(kind);
        k.count += 1;
        *k.answers.entry(run.outcome.label()).or_default() += 1;
        k.latency
            .micros
            .extend(run.replies.iter().map(|d| micros(*d)));
        if run.outcome.is_wedged() {
            k.wedged += 1;
        }
        if run.outcome.is_server_error() {
            k.server_errors += 1;
        }
    }

    pub fn merge(&mut self, other: Tally) {
        for (name, theirs) in other.kinds {
            let k = self.kind(&name);
            k.count += theirs.count;
            for (label, n) in theirs.answers {
                *k.answers.entry(label).or_default() += n;
            }
            k.latency.merge(theirs.latency);
            k.server_errors += theirs.server_errors;
            k.wedged += theirs.wedged;
        }
    }

    pub fn server_errors(&self) -> u64 {
        self.kinds.values().map(|k| k.server_errors).sum()
    }

    pub fn wedged(&self) -> u64 {
        self.kinds.values().map(|k| k.wedged).sum()
    }

    /// Each kind with its latency summary, in name order.
    pub fn summaries(&mut self) -> Vec<(&str, &Kind, Summary)> {
        let summaries: Vec<Summary> = self
            .kinds
            .values_mut()
            .map(|k| k.latency.summary())
            .collect();
        self.kinds
            .iter()
            .zip(summaries)
            .map(|((name, kind), summary)| (name.as_str(), kind, summary))
            .collect()
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
