//! How far a sandbox has gone through the lesson: which failure-table rows it has produced
//! (in any mode), which wrong ways it has found, and how its predictions went. Kept in
//! PostgreSQL per sandbox, so it survives reloads, resets and other server processes.

use serde::{Deserialize, Serialize};

use crate::catalog::{ConsumerCrash, FailureRow, OutcomeId, PublisherRow, Scenario};

/// What one outcome adds to the map: a failure-table row, a wrong way, a row of the
/// publisher's failure table, or one of the ways a consumer run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    Row(FailureRow),
    WrongWay(OutcomeId),
    Publisher(PublisherRow),
    Consumer(OutcomeId),
}

impl Found {
    /// What producing `outcome` explores; none for outcomes that are neither (a crash right
    /// after BEGIN, a fair race).
    pub fn of(outcome: OutcomeId) -> Option<Found> {
        if let Some(row) = outcome.failure_row() {
            return Some(Found::Row(row));
        }
        if let Some(row) = outcome.publisher_row() {
            return Some(Found::Publisher(row));
        }
        if consumer_cases().contains(&outcome) {
            return Some(Found::Consumer(outcome));
        }
        WRONG_WAYS
            .contains(&outcome)
            .then_some(Found::WrongWay(outcome))
    }

    /// The kind and id the registry stores.
    pub fn key(self) -> (&'static str, &'static str) {
        match self {
            Found::Row(r) => ("row", r.id()),
            Found::WrongWay(o) => ("wrong", o.id()),
            Found::Publisher(r) => ("publisher", r.id()),
            Found::Consumer(o) => ("consumer", o.id()),
        }
    }
}

/// The ways a consumer run that read records can end: what the consumer's map counts. It
/// applies each record once, skips a duplicate with its inbox or applies it again without,
/// or dies at one of its crash points (each of which the catalogue gives an outcome).
pub fn consumer_cases() -> Vec<OutcomeId> {
    let mut cases = vec![
        OutcomeId::Consumed,
        OutcomeId::DuplicateSkipped,
        OutcomeId::DuplicateApplied,
    ];
    cases.extend(ConsumerCrash::ALL.iter().filter_map(|c| c.outcome()));
    cases
}

/// One scenario after COMMIT on the learner's map: its cases, and which were produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioMap {
    pub scenario: Scenario,
    /// The ids of its cases (publisher rows, consumer outcomes), in catalogue order.
    pub cases: Vec<String>,
    /// Those of them this sandbox has produced.
    pub explored: Vec<String>,
}

impl ScenarioMap {
    fn of(
        scenario: Scenario,
        kind: &str,
        cases: Vec<&'static str>,
        found: &[(String, String, Option<bool>)],
    ) -> Self {
        let explored = cases
            .iter()
            .filter(|c| found.iter().any(|(k, id, _)| k == kind && id == *c))
            .map(|c| (*c).to_owned())
            .collect();
        ScenarioMap {
            scenario,
            cases: cases.into_iter().map(str::to_owned).collect(),
            explored,
        }
    }
}

/// The outcomes only a wrong way produces: what "wrong ways found" counts.
pub const WRONG_WAYS: &[OutcomeId] = &[
    OutcomeId::NaivePublished,
    OutcomeId::NaiveEventLost,
    OutcomeId::NaivePhantomEvent,
    OutcomeId::ChangeWithoutIntent,
    OutcomeId::OrphanIntent,
    OutcomeId::CommittedSilently,
    OutcomeId::RetryRefused,
    OutcomeId::RetryCommitted,
    OutcomeId::RetryDuplicated,
    OutcomeId::RaceTwoWinners,
];

/// One failure-table row's state for this sandbox.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowProgress {
    pub row: FailureRow,
    pub explored: bool,
    /// The last prediction made for an attempt that produced this row: right or wrong; null
    /// when it was produced without one.
    pub predicted: Option<bool>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Predictions {
    /// Attempts made with a prediction.
    pub made: u32,
    /// Of those, the ones whose every predicted item was right.
    pub right: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrongWaysFound {
    pub found: Vec<OutcomeId>,
    pub total: u32,
}

/// The learner's quests in sum (each quest's own standing: `/api/quests`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestsDone {
    pub reached: u32,
    /// Reached and explained with a right answer.
    pub explained: u32,
    /// Answered, but only wrongly so far.
    pub explained_wrong: u32,
    pub hints_used: u32,
    pub total: u32,
}

/// The answer of `/api/progress`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    pub rows: Vec<RowProgress>,
    pub explored: u32,
    pub total: u32,
    pub predictions: Predictions,
    pub wrong_ways: WrongWaysFound,
    /// The learner's "predict first" choice for this sandbox; null = the page's default.
    pub predict_first: Option<bool>,
    #[serde(default)]
    pub quests: QuestsDone,
    /// The publisher's and the consumer's maps (the ticket function's is `rows`).
    #[serde(default)]
    pub after_commit: Vec<ScenarioMap>,
}

impl Progress {
    /// Builds the answer from the stored keys (`kind`, `id`, `predicted`).
    pub fn from_found(
        found: &[(String, String, Option<bool>)],
        predictions: Predictions,
        predict_first: Option<bool>,
    ) -> Self {
        let rows: Vec<RowProgress> = FailureRow::ALL
            .iter()
            .map(|&row| {
                let hit = found
                    .iter()
                    .find(|(kind, id, _)| kind == "row" && id == row.id());
                RowProgress {
                    row,
                    explored: hit.is_some(),
                    predicted: hit.and_then(|(_, _, p)| *p),
                }
            })
            .collect();
        let explored = rows.iter().filter(|r| r.explored).count() as u32;
        let wrong = WRONG_WAYS
            .iter()
            .copied()
            .filter(|o| {
                found
                    .iter()
                    .any(|(kind, id, _)| kind == "wrong" && id == o.id())
            })
            .collect();
        Progress {
            total: rows.len() as u32,
            rows,
            explored,
            predictions,
            wrong_ways: WrongWaysFound {
                found: wrong,
                total: WRONG_WAYS.len() as u32,
            },
            predict_first,
            quests: QuestsDone::default(),
            after_commit: vec![
                ScenarioMap::of(
                    Scenario::Publisher,
                    "publisher",
                    PublisherRow::ALL.iter().map(|r| r.id()).collect(),
                    found,
                ),
                ScenarioMap::of(
                    Scenario::Consumer,
                    "consumer",
                    consumer_cases().iter().map(|o| o.id()).collect(),
                    found,
                ),
            ],
        }
    }

    /// A sandbox that has done nothing yet.
    pub fn empty() -> Self {
        Progress::from_found(&[], Predictions::default(), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_of_the_table_or_a_wrong_way_is_found_and_fair_ones_are_not() {
        for &o in OutcomeId::ALL {
            let found = Found::of(o);
            match o {
                OutcomeId::CrashedAfterBegin
                | OutcomeId::RaceOneWinner
                | OutcomeId::RaceNoWinner
                | OutcomeId::NothingToPublish
                | OutcomeId::NothingToConsume => assert_eq!(found, None, "{o}"),
                _ => assert!(found.is_some(), "{o} explores nothing"),
            }
        }
    }

    #[test]
    fn progress_counts_rows_and_wrong_ways_apart() {
        let found = vec![
            (
                "row".to_owned(),
                "crash_after_update".to_owned(),
                Some(false),
            ),
            ("row".to_owned(), "insert_error".to_owned(), None),
            (
                "wrong".to_owned(),
                "naive_event_lost".to_owned(),
                Some(true),
            ),
        ];
        let p = Progress::from_found(&found, Predictions { made: 2, right: 1 }, None);
        assert_eq!((p.explored, p.total), (2, 6));
        assert_eq!(p.rows[0].predicted, Some(false));
        assert_eq!(p.wrong_ways.found, vec![OutcomeId::NaiveEventLost]);
        assert_eq!(Progress::empty().explored, 0);
    }

    #[test]
    fn the_publisher_and_the_consumer_have_maps_of_their_own() {
        let found = vec![
            ("publisher".to_owned(), "crash_after_send".to_owned(), None),
            ("consumer".to_owned(), "duplicate_applied".to_owned(), None),
            ("row".to_owned(), "crash_after_send".to_owned(), None),
        ];
        let p = Progress::from_found(&found, Predictions::default(), None);
        let [publisher, consumer] = &p.after_commit[..] else {
            panic!("two maps: {:?}", p.after_commit);
        };
        assert_eq!(publisher.scenario, Scenario::Publisher);
        assert_eq!((publisher.explored.len(), publisher.cases.len()), (1, 3));
        assert_eq!(consumer.explored, ["duplicate_applied"]);
        assert_eq!(consumer.cases.len(), 5);
        // The ticket function's map counts only its own table.
        assert_eq!(p.explored, 0);
        assert_eq!(
            Found::of(OutcomeId::PublisherCrashedAfterMark),
            Some(Found::Publisher(PublisherRow::CrashAfterSend))
        );
    }
}
