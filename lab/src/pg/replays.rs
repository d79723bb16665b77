//! Shared runs: a sandbox's last report, kept for a replay link (`lab.replays`). What is kept
//! names no sandbox and no learner; the link is the content's own hash, so sharing the same
//! run twice gives the same link.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::Digest;

use crate::report::Report;
use crate::sql_trace::{Answer, Sent};

use super::sandbox::RateLimit;

/// How big a shared run may be, how long it is kept, and how often one address may share.
#[derive(Clone, Copy, Debug)]
pub struct ReplayPolicy {
    pub max_bytes: usize,
    pub keep_for: Duration,
    pub per_client: RateLimit,
}

impl Default for ReplayPolicy {
    fn default() -> Self {
        ReplayPolicy {
            // The largest report a learner can make (two 8 KiB payloads in a race, twice over
            // with the tables before and after) stays well below this.
            max_bytes: 256 * 1024,
            // A course runs for a term; a link in its text should outlive it.
            keep_for: Duration::from_secs(180 * 24 * 3600),
            // A class shares its runs at once behind one address; a script is slowed down.
            per_client: RateLimit {
                per_second: 0.2,
                burst: 60.0,
            },
        }
    }
}

/// A replay link's id: 32 lowercase hex digits (128 bits of the report's SHA-256).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ReplayId(String);

impl ReplayId {
    const LEN: usize = 32;

    pub fn parse(raw: &str) -> Option<Self> {
        (raw.len() == Self::LEN && raw.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .then(|| ReplayId(raw.to_owned()))
    }

    pub(super) fn of(stored: &str) -> Self {
        let digest = sha2::Sha256::digest(stored.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        ReplayId(hex[..Self::LEN].to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ReplayId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What is stored: the report, and the format it was written in. Reports only ever gain
/// fields with defaults, so an old stored report still reads; `format` is for the day one
/// does not.
#[derive(Serialize, Deserialize)]
struct Stored {
    format: u32,
    report: Report,
}

const FORMAT: u32 = 1;

/// What a kept run shows where its sandbox's schema name was.
const SHOWN_SANDBOX: &str = "sb_shared";

/// The text kept for a report: without its sandbox's name (nobody's business, and it would
/// give two learners' identical runs two links).
pub fn stored_text(report: &Report) -> Result<String, serde_json::Error> {
    let mut report = report.clone();
    // The schema's name also travels in the plumbing's parameters and answers.
    let name = std::mem::take(&mut report.sandbox);
    if !name.is_empty() {
        for step in &mut report.trace {
            if let Sent::Sql { params, .. } = &mut step.sent {
                for p in params.iter_mut() {
                    *p = p.replace(&name, SHOWN_SANDBOX);
                }
            }
            if let Answer::Values { values } = &mut step.answer {
                for v in values.iter_mut() {
                    *v = v.replace(&name, SHOWN_SANDBOX);
                }
            }
        }
    }
    serde_json::to_string(&Stored {
        format: FORMAT,
        report,
    })
}

/// Reads a stored text back (any format this server knows).
pub fn read_stored(text: &str) -> Result<Report, serde_json::Error> {
    serde_json::from_str::<Stored>(text).map(|s| s.report)
}
