//! The quest file: TOML a course author edits, checked against the catalogue before the
//! server starts. Every refusal names the line it is about.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use crate::catalog::Mode;
use crate::prediction::WHY_IDS;

use super::{
    Area, Check, Choice, Condition, DeadEnd, Fact, Quest, QuestBook, Question, Rows, Stage, Table,
    Text, valid_id,
};

/// The quests shipped with the playground (`quests/quests.toml`).
pub const BUILT_IN: &str = include_str!("../../../quests/quests.toml");

/// Why a quest file was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct QuestFileError {
    /// 1-based; 0 when the file as a whole is at fault.
    pub line: usize,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    quest: Vec<Spanned<RawQuest>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuest {
    id: Spanned<String>,
    area: Spanned<String>,
    title: Text,
    goal: Text,
    #[serde(default)]
    stage: Vec<Spanned<RawStage>>,
    dead_end: Option<Spanned<RawDeadEnd>>,
    question: Spanned<RawQuestion>,
    hints: Option<Spanned<Vec<Text>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStage {
    #[serde(default)]
    check: Vec<Spanned<RawCheck>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    table: Option<Spanned<String>>,
    fact: Option<Spanned<String>>,
    equal: Option<Spanned<BTreeMap<String, String>>>,
    contain: Option<Spanned<BTreeMap<String, String>>>,
    null: Option<Spanned<Vec<String>>>,
    not_null: Option<Spanned<Vec<String>>>,
    rows: Option<u32>,
    at_least: Option<u32>,
    says: Text,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDeadEnd {
    mode: Spanned<String>,
    after: u32,
    says: Text,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuestion {
    ask: Text,
    #[serde(default)]
    choice: Vec<Spanned<RawChoice>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChoice {
    id: Spanned<String>,
    text: Text,
    #[serde(default)]
    right: bool,
    why: Option<Text>,
    why_id: Option<Spanned<String>>,
}

/// Reads and checks a quest file.
pub fn parse(source: &str) -> Result<QuestBook, QuestFileError> {
    let lines = Lines::new(source);
    let raw: RawFile = toml::from_str(source).map_err(|e| QuestFileError {
        line: e.span().map_or(0, |s| lines.of(s.start)),
        message: e.message().to_owned(),
    })?;
    let refuse = |at: usize, message: String| QuestFileError {
        line: lines.of(at),
        message,
    };
    let mut quests: Vec<Quest> = Vec::new();
    for raw in raw.quest {
        let at = raw.span().start;
        let raw = raw.into_inner();
        let id = raw.id.get_ref();
        if !valid_id(id) {
            return Err(refuse(
                raw.id.span().start,
                format!("quest id {id:?} must be 1 to 40 of a-z, 0-9 and _"),
            ));
        }
        if quests.iter().any(|q| &q.id == id) {
            return Err(refuse(
                raw.id.span().start,
                format!("quest id {id:?} is used twice"),
            ));
        }
        let area = Area::parse(raw.area.get_ref()).ok_or_else(|| {
            refuse(
                raw.area.span().start,
                format!(
                    "unknown area {:?}; one of: {}",
                    raw.area.get_ref(),
                    ids(Area::ALL.iter().map(|a| a.id()))
                ),
            )
        })?;
        text(&raw.title, "title").map_err(|m| refuse(at, format!("quest {id}: {m}")))?;
        text(&raw.goal, "goal").map_err(|m| refuse(at, format!("quest {id}: {m}")))?;
        if raw.stage.is_empty() {
            return Err(refuse(at, format!("quest {id} has no [[quest.stage]]")));
        }
        if raw.stage.len() > 8 {
            return Err(refuse(at, format!("quest {id} has more than 8 stages")));
        }
        let mut stages = Vec::new();
        for stage in raw.stage {
            let stage_at = stage.span().start;
            let stage = stage.into_inner();
            if stage.check.is_empty() {
                return Err(refuse(
                    stage_at,
                    format!("a stage of quest {id} has no [[quest.stage.check]]"),
                ));
            }
            let mut checks = Vec::new();
            for check in stage.check {
                let check_at = check.span().start;
                checks.push(check_of(check.into_inner()).map_err(|(at, m)| {
                    refuse(at.unwrap_or(check_at), format!("quest {id}: {m}"))
                })?);
            }
            stages.push(Stage { checks });
        }
        let dead_end = match raw.dead_end {
            None => None,
            Some(d) => {
                let d_at = d.span().start;
                let d = d.into_inner();
                let mode = Mode::parse(d.mode.get_ref()).ok_or_else(|| {
                    refuse(
                        d.mode.span().start,
                        format!(
                            "unknown mode {:?}; one of: {}",
                            d.mode.get_ref(),
                            ids(Mode::ALL.iter().map(|m| m.id()))
                        ),
                    )
                })?;
                if d.after == 0 {
                    return Err(refuse(
                        d_at,
                        format!("quest {id}: dead_end.after must be 1 or more"),
                    ));
                }
                text(&d.says, "dead_end.says").map_err(|m| refuse(d_at, m))?;
                Some(DeadEnd {
                    mode,
                    after: d.after,
                    says: d.says,
                })
            }
        };
        let question = question_of(raw.question, &refuse, id)?;
        let (hints_at, hints) = raw
            .hints
            .map_or((at, Vec::new()), |h| (h.span().start, h.into_inner()));
        if hints.is_empty() || hints.len() > 3 {
            return Err(refuse(
                hints_at,
                format!("quest {id} needs one to three hints, has {}", hints.len()),
            ));
        }
        for h in &hints {
            text(h, "hint").map_err(|m| refuse(hints_at, format!("quest {id}: {m}")))?;
        }
        quests.push(Quest {
            id: id.clone(),
            area,
            title: raw.title,
            goal: raw.goal,
            stages,
            dead_end,
            question,
            hints,
        });
    }
    if quests.is_empty() {
        return Err(QuestFileError {
            line: 0,
            message: "the file holds no [[quest]]".to_owned(),
        });
    }
    Ok(QuestBook { quests })
}

fn question_of(
    raw: Spanned<RawQuestion>,
    refuse: &impl Fn(usize, String) -> QuestFileError,
    quest: &str,
) -> Result<Question, QuestFileError> {
    let at = raw.span().start;
    let raw = raw.into_inner();
    text(&raw.ask, "question.ask").map_err(|m| refuse(at, format!("quest {quest}: {m}")))?;
    if !(2..=4).contains(&raw.choice.len()) {
        return Err(refuse(
            at,
            format!(
                "quest {quest}: a question has two to four choices, this one {}",
                raw.choice.len()
            ),
        ));
    }
    let mut choices: Vec<Choice> = Vec::new();
    for c in raw.choice {
        let c_at = c.span().start;
        let c = c.into_inner();
        let cid = c.id.get_ref();
        if !valid_id(cid) || choices.iter().any(|x| &x.id == cid) {
            return Err(refuse(
                c.id.span().start,
                format!("quest {quest}: choice id {cid:?} is not a fresh id of a-z, 0-9 and _"),
            ));
        }
        text(&c.text, "choice.text").map_err(|m| refuse(c_at, format!("quest {quest}: {m}")))?;
        match (&c.why, c.right) {
            (None, false) => {
                return Err(refuse(
                    c_at,
                    format!(
                        "quest {quest}: wrong choice {cid:?} needs a `why` naming the misunderstanding"
                    ),
                ));
            }
            (Some(why), _) => {
                text(why, "choice.why").map_err(|m| refuse(c_at, format!("quest {quest}: {m}")))?
            }
            (None, true) => {}
        }
        let why_id = match c.why_id {
            Some(w) if !WHY_IDS.contains(&w.get_ref().as_str()) => {
                return Err(refuse(
                    w.span().start,
                    format!("quest {quest}: unknown why_id {:?}", w.get_ref()),
                ));
            }
            w => w.map(Spanned::into_inner),
        };
        choices.push(Choice {
            id: cid.clone(),
            text: c.text,
            right: c.right,
            why: c.why,
            why_id,
        });
    }
    if !choices.iter().any(|c| c.right) {
        return Err(refuse(
            at,
            format!("quest {quest}: no choice is marked right = true"),
        ));
    }
    Ok(Question {
        ask: raw.ask,
        choices,
    })
}

/// A check, or the offset (if more exact than the check's) and reason it was refused.
fn check_of(raw: RawCheck) -> Result<Check, (Option<usize>, String)> {
    text(&raw.says, "check.says").map_err(|m| (None, m))?;
    let condition = match (raw.table, raw.fact) {
        (Some(table), None) => {
            let t = Table::parse(table.get_ref()).ok_or_else(|| {
                (
                    Some(table.span().start),
                    format!(
                        "unknown table {:?}; one of: {}",
                        table.get_ref(),
                        ids(Table::ALL.iter().map(|t| t.id()))
                    ),
                )
            })?;
            let named = [
                raw.equal
                    .as_ref()
                    .map(|m| (m.span().start, m.get_ref().keys().collect::<Vec<_>>())),
                raw.contain
                    .as_ref()
                    .map(|m| (m.span().start, m.get_ref().keys().collect())),
                raw.null
                    .as_ref()
                    .map(|l| (l.span().start, l.get_ref().iter().collect())),
                raw.not_null
                    .as_ref()
                    .map(|l| (l.span().start, l.get_ref().iter().collect())),
            ];
            for (at, cols) in named.into_iter().flatten() {
                if let Some(col) = cols
                    .into_iter()
                    .find(|c| !t.columns().contains(&c.as_str()))
                {
                    return Err((
                        Some(at),
                        format!(
                            "table {} has no column {col:?}; its columns: {}",
                            t.id(),
                            ids(t.columns().iter().copied())
                        ),
                    ));
                }
            }
            let rows = match (raw.rows, raw.at_least) {
                (Some(n), None) => Rows::Exactly(n),
                (None, Some(n)) => Rows::AtLeast(n),
                _ => {
                    return Err((
                        Some(table.span().start),
                        "a table check needs exactly one of `rows` and `at_least`".to_owned(),
                    ));
                }
            };
            Condition::Rows {
                table: t,
                equal: raw
                    .equal
                    .map_or_else(Vec::new, |m| m.into_inner().into_iter().collect()),
                contain: raw
                    .contain
                    .map_or_else(Vec::new, |m| m.into_inner().into_iter().collect()),
                null: raw.null.map_or_else(Vec::new, Spanned::into_inner),
                not_null: raw.not_null.map_or_else(Vec::new, Spanned::into_inner),
                rows,
            }
        }
        (None, Some(fact)) => {
            let any_table_field = raw.equal.is_some()
                || raw.contain.is_some()
                || raw.null.is_some()
                || raw.not_null.is_some()
                || raw.rows.is_some()
                || raw.at_least.is_some();
            if any_table_field {
                return Err((
                    Some(fact.span().start),
                    "a fact check takes no table fields".to_owned(),
                ));
            }
            Condition::Fact(Fact::parse(fact.get_ref()).ok_or_else(|| {
                (
                    Some(fact.span().start),
                    format!(
                        "unknown fact {:?}; one of: {}",
                        fact.get_ref(),
                        ids(Fact::ALL.iter().map(|f| f.id()))
                    ),
                )
            })?)
        }
        _ => {
            return Err((
                None,
                "a check names either a `table` or a `fact`, not both or neither".to_owned(),
            ));
        }
    };
    Ok(Check {
        condition,
        says: raw.says,
    })
}

fn text(t: &Text, what: &str) -> Result<(), String> {
    if t.ru.trim().is_empty() || t.en.trim().is_empty() {
        return Err(format!("{what} needs both ru and en"));
    }
    Ok(())
}

fn ids<'a>(all: impl Iterator<Item = &'a str>) -> String {
    all.collect::<Vec<_>>().join(", ")
}

/// Byte offsets to 1-based line numbers.
struct Lines(Vec<usize>);

impl Lines {
    fn new(source: &str) -> Self {
        Lines(
            source
                .char_indices()
                .filter(|(_, c)| *c == '\n')
                .map(|(i, _)| i)
                .collect(),
        )
    }

    fn of(&self, offset: usize) -> usize {
        self.0.partition_point(|&nl| nl < offset) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_quests_are_valid_and_hold_the_issue_s_six_in_order() {
        let book = parse(BUILT_IN).unwrap_or_else(|e| panic!("quests/quests.toml: {e}"));
        let ids: Vec<&str> = book.quests.iter().map(|q| q.id.as_str()).collect();
        let six = [
            "status_without_intent",
            "unsure_then_proven",
            "history_twice",
            "writer_waits_then_zero",
            "commit_not_kafka",
            "two_winners",
        ];
        assert_eq!(&ids[..6], &six);
        assert!((8..=12).contains(&ids.len()), "{} quests", ids.len());
        for area in Area::ALL {
            assert!(
                book.quests.iter().any(|q| q.area == *area),
                "no quest in {area:?}"
            );
        }
    }

    fn refused(source: &str) -> QuestFileError {
        match parse(source) {
            Ok(_) => panic!("accepted:\n{source}"),
            Err(e) => e,
        }
    }

    /// The built-in file with one line replaced.
    fn with(find: &str, replace: &str) -> (String, usize) {
        let at = BUILT_IN
            .find(find)
            .unwrap_or_else(|| panic!("{find:?} not in the file"));
        let line = BUILT_IN[..at].matches('\n').count() + 1;
        (BUILT_IN.replacen(find, replace, 1), line)
    }

    #[test]
    fn an_unknown_table_column_fact_mode_or_why_is_refused_naming_its_line() {
        let cases = [
            ("table = \"tickets\"", "table = \"ticket\"", "unknown table"),
            (
                "equal = { aggregate_id = \"ticket-42\" }",
                "equal = { aggregate = \"ticket-42\" }",
                "no column",
            ),
            (
                "fact = \"commit_reply_lost\"",
                "fact = \"reply_lost\"",
                "unknown fact",
            ),
            ("mode = \"outbox\"", "mode = \"outbx\"", "unknown mode"),
            (
                "why_id = \"rolled_back_on_error\"",
                "why_id = \"no_such_why\"",
                "unknown why_id",
            ),
            ("area = \"trace_a\"", "area = \"trace_b\"", "unknown area"),
        ];
        for (find, replace, says) in cases {
            let (source, line) = with(find, replace);
            let e = refused(&source);
            assert!(e.message.contains(says), "{find}: {e}");
            assert_eq!(e.line, line, "{find}: {e}");
        }
    }

    #[test]
    fn a_duplicate_id_a_missing_language_or_a_stray_field_is_refused() {
        let (source, _) = with("id = \"history_twice\"", "id = \"two_winners\"");
        // The second use is the later one: two_winners is defined after history_twice.
        assert!(refused(&source).message.contains("used twice") || refused(&source).line > 0);
        let (source, _) = with(
            "title = { ru = \"Дважды в History\", en = \"Twice in History\" }",
            "title = { ru = \"Дважды в History\", en = \"\" }",
        );
        assert!(refused(&source).message.contains("both ru and en"));
        let (source, line) = with("rows = 1\n", "rows = 1\ncolour = \"red\"\n");
        let e = refused(&source);
        assert!(e.message.contains("colour"), "{e}");
        assert_eq!(e.line, line + 1, "{e}");
        assert_eq!(refused("").line, 0);
    }
}
