//! The Markdown report of a classroom run, and the targets judged against it.

use std::fmt::Write as _;

use super::aftermath::Aftermath;
use super::hostile::{self, Seen};
use super::settings::Settings;
use super::tally::Tally;

/// The latency bound for every action, ms.
const P99_TARGET_MS: f64 = 1000.0;
/// The class size the issue states its targets for.
const TARGET_LEARNERS: usize = 30;

pub struct Results {
    pub mix: Tally,
    pub together: Tally,
    pub hostile: Vec<Seen>,
    pub after: Aftermath,
}

impl Results {
    pub fn server_errors(&self) -> u64 {
        self.mix.server_errors() + self.together.server_errors()
    }

    pub fn wedged(&self) -> u64 {
        self.mix.wedged() + self.together.wedged() + hostile::wedged(&self.hostile)
    }

    /// Transactions left open; `None` when the database could not say.
    pub fn left_open(&self) -> Option<i64> {
        self.after.left_open
    }

    /// What `CLASSROOM_ASSERT=1` fails on (empty: nothing).
    pub fn failures(&self) -> Vec<String> {
        let mut failed = Vec::new();
        if self.server_errors() > 0 {
            failed.push(format!(
                "{} answers with status >= 500",
                self.server_errors()
            ));
        }
        match self.left_open() {
            Some(0) => {}
            Some(n) => failed.push(format!("{n} transactions left open after the run")),
            None => failed.push(format!(
                "the database could not be asked about open transactions: {}",
                self.after.database_error.as_deref().unwrap_or("unknown")
            )),
        }
        if self.after.healthz != Some(200) {
            failed.push(format!("/healthz answered {}", status(self.after.healthz)));
        }
        failed
    }
}

fn status(s: Option<u16>) -> String {
    s.map_or_else(|| "nothing".to_owned(), |s| s.to_string())
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "**missed**" }
}

fn ms(v: f64) -> String {
    if v.is_nan() {
        "–".to_owned()
    } else {
        format!("{v:.1}")
    }
}

/// One table of a phase; returns the slowest p99 in it (kind, ms).
fn phase_table(md: &mut String, tally: &mut Tally) -> Option<(String, f64)> {
    md.push_str("| action | count | answers | p50 ms | p99 ms |\n|---|---:|---|---:|---:|\n");
    let mut slowest: Option<(String, f64)> = None;
    for (name, kind, summary) in tally.summaries() {
        let mut answers: Vec<(&String, &u64)> = kind.answers.iter().collect();
        answers.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let answers: Vec<String> = answers.iter().map(|(l, n)| format!("{l} × {n}")).collect();
        let _ = writeln!(
            md,
            "| {name} | {} | {} | {} | {} |",
            kind.count,
            answers.join(", "),
            ms(summary.p50_ms),
            ms(summary.p99_ms)
        );
        if !summary.p99_ms.is_nan() && slowest.as_ref().is_none_or(|(_, s)| summary.p99_ms > *s) {
            slowest = Some((name.to_owned(), summary.p99_ms));
        }
    }
    md.push('\n');
    slowest
}

pub fn render(s: &Settings, r: &mut Results) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### Classroom: {} learners, {} s\n\nSettings: {} learners, phase 1 {} s, think 0–{} ms \
         (uniform), seed {}, server {}, hostile clients: 2 each of (a)–(d) during phase 1. \
         Latencies are per answer (for step by step: per reply to a command), nearest-rank \
         percentiles; a stepped run is *served* when it reaches its report, *refused* when an \
         error code ends it, *broken* (wedged) when the socket fails or stays silent 15 s; a run \
         ended by `internal` or `unavailable` counts as an answer ≥ 500.\n",
        s.learners,
        s.seconds,
        s.learners,
        s.seconds,
        2 * s.think.as_millis(),
        s.seed,
        s.url
    );
    md.push_str("#### Phase 1: the page's mix\n\n");
    let slow_mix = phase_table(&mut md, &mut r.mix);
    md.push_str(
        "#### Phase 2: together (every learner sends the same request at the same instant)\n\n",
    );
    let slow_together = phase_table(&mut md, &mut r.together);

    md.push_str(
        "#### Hostile clients (not counted as answers)\n\n| client | what it saw |\n|---|---|\n",
    );
    for seen in &r.hostile {
        let _ = writeln!(md, "| {} | {} |", seen.client, seen.saw);
    }
    let a = &r.after;
    let count = |v: Option<i64>| v.map_or_else(|| "unknown".to_owned(), |v| v.to_string());
    let rss = a.rss_mib.map_or_else(
        || "not measured (no CLASSROOM_SERVER_PID)".to_owned(),
        |(now, peak)| format!("{now:.1} / {peak:.1} MiB"),
    );
    let _ = writeln!(
        md,
        "\n#### Afterwards\n\n| | value |\n|---|---:|\n\
         | transactions left open (waited until none, at most 30 s: {:.1} s) | {} |\n\
         | of them: backends `idle in transaction` | {} |\n\
         | of them: the app's backends with a transaction open | {} |\n\
         | backends of the app (`application_name LIKE 'outbox%'`) | {} |\n\
         | server RSS now / peak (VmHWM) | {rss} |\n\
         | `/healthz` | {} |\n\
         | wedged runs (phase 1 / together / floods) | {} ({} / {} / {}) |\n\
         | answers ≥ 500 | {} |\n",
        a.settled_after.as_secs_f64(),
        count(a.left_open),
        count(a.idle_in_transaction),
        count(a.app_transactions),
        count(a.app_backends),
        status(a.healthz),
        r.wedged(),
        r.mix.wedged(),
        r.together.wedged(),
        hostile::wedged(&r.hostile),
        r.server_errors(),
    );
    if let Some(e) = &a.database_error {
        let _ = writeln!(md, "The database could not be asked: {e}\n");
    }

    let slowest = [slow_mix, slow_together]
        .into_iter()
        .flatten()
        .max_by(|x, y| x.1.total_cmp(&y.1));
    let at = if s.learners == TARGET_LEARNERS {
        format!("at {TARGET_LEARNERS} learners + hostile clients")
    } else {
        format!(
            "stated for {TARGET_LEARNERS} learners; measured here at {} learners + hostile clients",
            s.learners
        )
    };
    let _ = writeln!(md, "#### Targets (issue 29, {at})\n");
    let _ = writeln!(
        md,
        "- 0 answers ≥ 500: {} ({})",
        verdict(r.server_errors() == 0),
        r.server_errors()
    );
    let _ = writeln!(
        md,
        "- 0 wedged runs: {} ({})",
        verdict(r.wedged() == 0),
        r.wedged()
    );
    let _ = writeln!(
        md,
        "- 0 transactions left open: {} ({})",
        verdict(r.left_open() == Some(0)),
        count(r.left_open())
    );
    match slowest {
        Some((kind, p99)) => {
            let _ = writeln!(
                md,
                "- p99 of every action ≤ 1 s: {} (slowest: {kind}, p99 {p99:.0} ms)",
                verdict(p99 <= P99_TARGET_MS)
            );
        }
        None => {
            let _ = writeln!(
                md,
                "- p99 of every action ≤ 1 s: **missed** (nothing answered)"
            );
        }
    }
    md
}
