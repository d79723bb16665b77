//! One pause of a stepped run, drawn by the server in the page's language: where the run is
//! held, the same tables from inside its transaction and from another session, what
//! PostgreSQL shows of the held backend, and the SQL so far (with the trace table the
//! one-shot result uses). The stepper's socket sends it beside the pause's JSON, and the
//! page's script only swaps it into the panel, so the script holds no words and no logic
//! of its own about what a pause means.

use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::catalog::names::TICKET_ID;
use outbox_lab::snapshot::Snapshot;
use outbox_lab::step::{LockRow, Pause};
use outbox_lab::stepped::{Waiter, WaiterState};
use serde::Serialize;

use crate::components::{strip, trace};
use crate::i18n::*;
use crate::texts;

/// A pause as the stepper's panel shows it: the sentence for the live region, and the
/// panel's body.
#[derive(Clone, Debug, Serialize)]
pub struct DrawnPause {
    /// "Paused: … Next step — …", read out by screen readers as the run moves.
    #[serde(rename = "where")]
    pub where_text: String,
    /// The panel's body, as HTML (text escaped by Leptos).
    pub html: String,
}

/// Draws `pause` in `l`.
pub fn draw(l: Locale, pause: &Pause) -> DrawnPause {
    let pause = pause.clone();
    let html = Owner::new().with(|| pause_body(l, pause.clone()).to_html());
    DrawnPause {
        where_text: where_text(l, &pause),
        html,
    }
}

fn where_text(l: Locale, pause: &Pause) -> String {
    let next = match pause.next {
        Some(step) => format!(
            "{} {}.",
            td_string!(l, stepper.next_is),
            strip::step_name(l, step)
        ),
        None => format!("{}.", td_string!(l, stepper.returns)),
    };
    format!(
        "{} {}. {next}",
        td_string!(l, stepper.paused),
        texts::pause_label(l, pause.point)
    )
}

/// One row of the two views: the same fact through the held connection and through another.
struct ViewRow {
    id: &'static str,
    label: &'static str,
    inside: String,
    outside: String,
}

fn view_rows(l: Locale, pause: &Pause) -> Vec<ViewRow> {
    // After COMMIT no transaction is open: its connection sees the committed tables.
    let inside = pause.inside.as_ref().unwrap_or(&pause.outside);
    let outside = &pause.outside;
    let none = td_string!(l, stepper.none);
    let listed = |ids: Vec<String>| {
        if ids.is_empty() {
            none.to_owned()
        } else {
            ids.join(", ")
        }
    };
    let status = |s: &Snapshot| {
        s.tickets
            .iter()
            .find(|t| t.id == TICKET_ID)
            .map_or_else(|| none.to_owned(), |t| t.status.clone())
    };
    let outbox = |s: &Snapshot| listed(s.outbox.iter().map(|o| o.event_id.clone()).collect());
    let marked = |s: &Snapshot| {
        s.outbox
            .iter()
            .filter(|o| o.published_at.is_some())
            .count()
            .to_string()
    };
    let inbox = |s: &Snapshot| listed(s.inbox.clone());
    let row = |id, label, f: &dyn Fn(&Snapshot) -> String| ViewRow {
        id,
        label,
        inside: f(inside),
        outside: f(outside),
    };
    vec![
        row("status", td_string!(l, stepper.status), &status),
        row("outbox", td_string!(l, stepper.outbox), &outbox),
        row("kafka", td_string!(l, stepper.kafka), &|s| {
            s.kafka.len().to_string()
        }),
        row("marked", td_string!(l, stepper.marked), &marked),
        row("history", td_string!(l, stepper.history), &|s| {
            s.history.len().to_string()
        }),
        row("inbox", td_string!(l, stepper.inbox), &inbox),
    ]
}

fn locks_text(l: Locale, locks: &[LockRow]) -> String {
    if locks.is_empty() {
        return td_string!(l, stepper.locks_none).to_owned();
    }
    locks
        .iter()
        .map(|k| {
            let what = k.relation.as_deref().unwrap_or(&k.locktype);
            let waiting = if k.granted {
                String::new()
            } else {
                format!(" {}", td_string!(l, stepper.lock_waiting))
            };
            format!("{what}: {}{waiting}", k.mode)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn waiter_text(l: Locale, waiter: Option<&Waiter>) -> String {
    let Some(w) = waiter else {
        return td_string!(l, stepper.waiter_none).to_owned();
    };
    let who = format!("{} {}: ", td_string!(l, stepper.backend_pid), w.pid);
    match w.state {
        WaiterState::Waiting => {
            let by = trace::join_pids(&w.blocked_by);
            format!("{who}{} {{{by}}}", td_string!(l, stepper.waiting))
        }
        WaiterState::Done => {
            let done = if w.skip_locked.is_some() {
                td_string!(l, stepper.publisher_done)
            } else {
                td_string!(l, stepper.waiter_done)
            };
            format!("{who}{done} {}", w.rows.unwrap_or_default())
        }
        WaiterState::Failed => format!(
            "{who}{} {}",
            td_string!(l, stepper.waiter_failed),
            w.sqlstate.as_deref().unwrap_or("?")
        ),
    }
}

/// "≠ differs" or "= same": the sign always, the word beside it where there is room (and for
/// screen readers everywhere).
fn compared(l: Locale, differs: bool) -> impl IntoView + use<> {
    let said = if differs {
        td_string!(l, stepper.differs)
    } else {
        td_string!(l, stepper.same)
    };
    let mut chars = said.chars();
    let sign = chars.next().map(String::from).unwrap_or_default();
    let rest = chars.as_str().trim().to_owned();
    view! {
        <span aria-hidden="true">{sign} " "</span>
        <span class="cmp-word">{rest}</span>
    }
}

/// The panel's body at one pause.
pub fn pause_body(l: Locale, pause: Pause) -> impl IntoView {
    let no_tx = pause.inside.is_none();
    let rows = view_rows(l, &pause)
        .into_iter()
        .map(|r| {
            let differs = r.inside != r.outside;
            // Only the status row says why both sides agree once COMMIT has ended the
            // transaction: it is the first row a learner reads.
            let inside = if no_tx && r.id == "status" {
                format!("{} {}", r.inside, td_string!(l, stepper.no_tx))
            } else {
                r.inside
            };
            view! {
                <tr data-row=r.id data-differs=differs.to_string()>
                    <th scope="row">{r.label}</th>
                    <td data-side="inside">{inside}</td>
                    <td data-side="outside">{r.outside}</td>
                    <td data-side="compare">{compared(l, differs)}</td>
                </tr>
            }
        })
        .collect_view();
    let xid = pause
        .backend
        .xid
        .clone()
        .unwrap_or_else(|| td_string!(l, stepper.xid_none).to_owned());
    let model = if pause.matches_model {
        td_string!(l, stepper.model_ok)
    } else {
        td_string!(l, stepper.model_differs)
    };
    let trace_so_far = (!pause.trace.is_empty()).then(|| {
        view! {
            <details class="step-trace">
                <summary>{td_string!(l, stepper.trace_so_far)}</summary>
                {trace::table(l, pause.trace.clone())}
            </details>
        }
    });
    view! {
        <table class="step-views">
            <caption>{td_string!(l, stepper.views_caption)}</caption>
            <thead>
                <tr>
                    <th scope="col">{td_string!(l, stepper.row)}</th>
                    <th scope="col">{td_string!(l, stepper.inside)}</th>
                    <th scope="col">{td_string!(l, stepper.outside)}</th>
                    <th scope="col">
                        <span class="visually-hidden">{td_string!(l, stepper.same)}</span>
                    </th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
        <div class="step-pg">
            <h3>{td_string!(l, stepper.pg)}</h3>
            <dl>
                <dt>{td_string!(l, stepper.pid)}</dt>
                <dd data-pg="pid">{pause.backend.pid.to_string()}</dd>
                <dt>{td_string!(l, stepper.state)}</dt>
                <dd data-pg="state">{pause.backend.state.clone()}</dd>
                <dt>{td_string!(l, stepper.xid)}</dt>
                <dd data-pg="xid">{xid}</dd>
                <dt>{td_string!(l, stepper.locks)}</dt>
                <dd data-pg="locks">{locks_text(l, &pause.locks)}</dd>
                <dt>{td_string!(l, stepper.waiter)}</dt>
                <dd data-pg="waiter">{waiter_text(l, pause.waiter.as_ref())}</dd>
            </dl>
            <p class="action-hint">{td_string!(l, stepper.locks_note)}</p>
            <p class="action-hint" data-pg="model">{model}</p>
        </div>
        {trace_so_far}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use outbox_lab::catalog::{CrashPoint, PausePoint, PublisherCrash, Step};
    use outbox_lab::step::Backend;

    fn pause(point: PausePoint, next: Option<Step>) -> Pause {
        Pause {
            point,
            next,
            inside: None,
            outside: Snapshot::default(),
            backend: Backend {
                pid: 4242,
                state: "idle in transaction".into(),
                xid: None,
            },
            locks: vec![],
            waiter: None,
            trace: vec![],
            matches_model: true,
        }
    }

    #[test]
    fn a_pause_is_drawn_in_the_pages_language_only() {
        let p = pause(
            PausePoint::Publisher(PublisherCrash::AfterSend),
            Some(Step::Mark),
        );
        let ru = draw(Locale::ru, &p);
        let en = draw(Locale::en, &p);
        assert!(
            ru.where_text
                .contains(texts::publisher_crash_text(Locale::ru, PublisherCrash::AfterSend).1)
        );
        assert!(
            en.where_text
                .contains(strip::step_name(Locale::en, Step::Mark))
        );
        assert!(ru.html.contains("data-pg=\"pid\""));
        assert!(ru.html.contains("4242"));
        // The English page has no Cyrillic; the Russian one none of the English labels.
        assert!(
            !en.html
                .chars()
                .any(|c| ('\u{0400}'..='\u{04FF}').contains(&c))
        );
        assert!(
            !en.where_text
                .chars()
                .any(|c| ('\u{0400}'..='\u{04FF}').contains(&c))
        );
        for english in [
            "waiting",
            "not started",
            "Inside the transaction",
            "Next step",
        ] {
            assert!(
                !ru.html.contains(english) && !ru.where_text.contains(english),
                "{english}"
            );
        }
    }

    #[test]
    fn the_end_of_the_function_says_it_returns() {
        let p = pause(PausePoint::Ticket(CrashPoint::None), None);
        let en = draw(Locale::en, &p);
        assert!(
            en.where_text
                .ends_with(&format!("{}.", td_string!(Locale::en, stepper.returns)))
        );
        // No transaction open: the status row says so.
        assert!(en.html.contains(td_string!(Locale::en, stepper.no_tx)));
    }
}
