//! The sandbox's four tables as they are after the last action, with what changed marked in
//! words (not only by colour).

use leptos::either::Either;
use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::report::Report;
use outbox_lab::snapshot::{OutboxRow, Snapshot, TicketRow};

use crate::i18n::*;

/// How a row differs from the state before the action.
#[derive(Clone, PartialEq)]
enum Change {
    Same,
    New,
    Changed { from: String, to: String },
    Removed,
}

impl Change {
    fn attr(&self) -> &'static str {
        match self {
            Change::Same => "same",
            Change::New => "new",
            Change::Changed { .. } => "changed",
            Change::Removed => "removed",
        }
    }

    fn mark(&self, l: Locale) -> Option<String> {
        match self {
            Change::Same => None,
            Change::New => Some(td_string!(l, tables.mark_new).to_owned()),
            Change::Removed => Some(td_string!(l, tables.mark_removed).to_owned()),
            Change::Changed { from, to } => {
                Some(td_string!(l, tables.mark_changed, from = from, to = to).to_string())
            }
        }
    }
}

fn ticket_rows(before: Option<&Snapshot>, after: &Snapshot) -> Vec<(TicketRow, Change)> {
    let mut rows: Vec<(TicketRow, Change)> = after
        .tickets
        .iter()
        .map(|t| {
            let change = match before.map(|b| b.ticket(&t.id)) {
                None => Change::Same,
                Some(None) => Change::New,
                Some(Some(old)) if old.status != t.status => Change::Changed {
                    from: old.status.clone(),
                    to: t.status.clone(),
                },
                Some(Some(_)) => Change::Same,
            };
            (t.clone(), change)
        })
        .collect();
    if let Some(b) = before {
        for old in &b.tickets {
            if after.ticket(&old.id).is_none() {
                rows.push((old.clone(), Change::Removed));
            }
        }
    }
    rows
}

fn outbox_rows(before: Option<&Snapshot>, after: &Snapshot) -> Vec<(OutboxRow, Change)> {
    let mut rows: Vec<(OutboxRow, Change)> = after
        .outbox
        .iter()
        .map(|r| {
            let change = match before.map(|b| b.outbox_row(&r.event_id)) {
                Some(None) => Change::New,
                _ => Change::Same,
            };
            (r.clone(), change)
        })
        .collect();
    if let Some(b) = before {
        for old in &b.outbox {
            if after.outbox_row(&old.event_id).is_none() {
                rows.push((old.clone(), Change::Removed));
            }
        }
    }
    rows
}

fn mark_view(change: &Change, l: Locale) -> impl IntoView + use<> {
    change
        .mark(l)
        .map(|m| view! { <span class="change-mark">{m}</span> })
}

#[component]
pub fn Tables(
    report: Signal<Report>,
    /// Inside a comparison: an id prefix, a lower heading, and no column notes.
    #[prop(optional)]
    nested: Option<&'static str>,
    /// Only the ticket database: the page shows Kafka / History beside the outcome.
    #[prop(optional)]
    db_only: bool,
    /// A replay's recording: its own heading is the page's, and it belongs to no sandbox.
    #[prop(optional)]
    recorded: bool,
) -> impl IntoView {
    let l = crate::locale::use_locale();
    let heading_id = nested.map_or_else(
        || "tables-heading".to_owned(),
        |p| format!("{p}-tables-heading"),
    );
    let heading = match nested {
        None => {
            Either::Left(view! { <h2 id=heading_id.clone()>{td_string!(l, tables_heading)}</h2> })
        }
        Some(_) => {
            Either::Right(view! { <h4 id=heading_id.clone()>{td_string!(l, tables_heading)}</h4> })
        }
    };
    let notes = nested.is_none().then(|| {
        view! {
            <details class="column-notes">
                <summary>{td_string!(l, notes_show)}</summary>
                <ul>
                    <li>{td_string!(l, note_event_id)}</li>
                    <li>{td_string!(l, note_aggregate_id)}</li>
                    <li>{td_string!(l, note_payload)}</li>
                    <li>{td_string!(l, note_published_at)}</li>
                    <li>"Kafka / History: " {td_string!(l, tables.simulated)}</li>
                </ul>
            </details>
        }
    });
    let tickets = move || {
        let r = report.read();
        ticket_rows(r.before.as_ref(), &r.snapshot)
            .into_iter()
            .map(|(t, change)| {
                view! {
                    <tr data-id=t.id.clone() data-change=change.attr()>
                        <td data-label="id">{t.id.clone()}</td>
                        <td data-col="status" data-label="status">{t.status.clone()}</td>
                        <td class="mark-cell">{mark_view(&change, l)}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    let outbox = move || {
        let r = report.read();
        let rows = outbox_rows(r.before.as_ref(), &r.snapshot);
        if rows.is_empty() {
            return Either::Left(view! {
                <tr class="empty">
                    <td colspan="4">{td_string!(l, empty_table)}</td>
                </tr>
            });
        }
        Either::Right(rows.into_iter()
            .map(|(row, change)| {
                view! {
                    <tr data-id=row.event_id.clone() data-change=change.attr()>
                        // The change mark sits under the id: the payload needs the width.
                        <td data-col="event_id" data-label="event_id">
                            {row.event_id.clone()}
                            {mark_view(&change, l)}
                        </td>
                        <td data-col="aggregate_id" data-label="aggregate_id">{row.aggregate_id.clone()}</td>
                        <td class="json" data-col="payload" data-label="payload">
                            <code>{row.payload.clone()}</code>
                        </td>
                        <td data-col="published_at" data-label="published_at">
                            {row.published_at.clone().unwrap_or_else(|| "NULL".to_owned())}
                        </td>
                    </tr>
                }
            })
            .collect_view())
    };
    let changed_word = move |changed: bool| {
        if changed {
            td_string!(l, tables.changed)
        } else {
            td_string!(l, tables.unchanged)
        }
    };
    let tickets_changed = move || {
        let r = report.read();
        r.before
            .as_ref()
            .is_some_and(|b| b.tickets != r.snapshot.tickets)
    };
    let outbox_changed = move || {
        let r = report.read();
        r.before
            .as_ref()
            .is_some_and(|b| b.outbox != r.snapshot.outbox)
    };

    view! {
        // Inside a comparison the tables are part of their side, not a region of their own
        // (two regions with one name would confuse a screen reader's landmark list).
        <section class="panel tables" aria-labelledby=nested.is_none().then_some(heading_id)>
            {(!recorded).then_some(heading)}
            <p class="db-label">{td_string!(l, ticket_db)}</p>
            <p class="sandbox" hidden=recorded>
                {td_string!(l, sandbox_label)} ": "
                {move || {
                    let name = report.read().sandbox.clone();
                    if name.is_empty() {
                        Either::Left(view! {
                            <span data-sandbox="">{td_string!(l, sandbox_not_yet)}</span>
                        })
                    } else {
                        Either::Right(view! { <code data-sandbox=name.clone()>{name.clone()}</code> })
                    }
                }}
                // The result's own tables get the run's scripts beside them; a comparison's
                // side has its links in its own heading.
                {nested
                    .is_none()
                    .then(|| {
                        let r = report.read_untracked();
                        (
                            crate::components::download::download_links(l, &r, None),
                            crate::components::share::share_button(l, &r),
                        )
                    })}
            </p>
            <div class="tables-grid">
                <div class="table-wrap" tabindex="0">
                    <table class="data stack" data-table="tickets">
                        <caption>
                            {td_string!(l, tickets_caption)} " — "
                            <span class="caption-state">{move || changed_word(tickets_changed())}</span>
                        </caption>
                        <thead>
                            <tr>
                                <th scope="col">{td_string!(l, col_id)}</th>
                                <th scope="col">{td_string!(l, col_status)}</th>
                                <th scope="col" class="mark-cell">
                                    <span class="visually-hidden">{td_string!(l, tables.changed)}</span>
                                </th>
                            </tr>
                        </thead>
                        <tbody>{tickets}</tbody>
                    </table>
                </div>
                <div class="table-wrap" tabindex="0">
                    <table class="data stack" data-table="outbox">
                        <caption>
                            {td_string!(l, outbox_caption)} " — "
                            <span class="caption-state">{move || changed_word(outbox_changed())}</span>
                        </caption>
                        <thead>
                            <tr>
                                <th scope="col">{td_string!(l, col_event_id)}</th>
                                <th scope="col">{td_string!(l, col_aggregate_id)}</th>
                                <th scope="col">{td_string!(l, col_payload)}</th>
                                <th scope="col">{td_string!(l, col_published_at)}</th>
                            </tr>
                        </thead>
                        <tbody>{outbox}</tbody>
                    </table>
                </div>
            </div>
            {notes}
            {(!db_only).then(|| view! { <OutsideTables report /> })}
        </section>
    }
}

/// Kafka and History: outside the transaction, written through their own connections and
/// commits.
#[component]
pub fn OutsideTables(report: Signal<Report>) -> impl IntoView {
    let l = crate::locale::use_locale();
    let kafka = move || {
        let records = report.read().snapshot.kafka.clone();
        if records.is_empty() {
            return Either::Left(view! {
                <tr class="empty">
                    <td colspan="3">{td_string!(l, tables.kafka_empty)}</td>
                </tr>
            });
        }
        Either::Right(
            records
                .into_iter()
                .map(|k| {
                    view! {
                        <tr>
                            <td>{k.offset}</td>
                            <td>{k.key}</td>
                            <td class="json">
                                <code>{k.value}</code>
                            </td>
                        </tr>
                    }
                })
                .collect_view(),
        )
    };
    let history = move || {
        let entries = report.read().snapshot.history.clone();
        if entries.is_empty() {
            return Either::Left(view! {
                <tr class="empty">
                    <td colspan="3">{td_string!(l, tables.history_empty)}</td>
                </tr>
            });
        }
        Either::Right(
            entries
                .into_iter()
                .map(|h| {
                    view! {
                        <tr>
                            <td>{h.event_id}</td>
                            <td>{h.ticket_id}</td>
                            <td>{h.to_status}</td>
                        </tr>
                    }
                })
                .collect_view(),
        )
    };
    view! {
        <div class="outside-tables">
            <p class="db-label">
                "Kafka / History — " <span class="sim">{td_string!(l, tables.outside)}</span>
            </p>
            <div class="tables-grid even">
                <div class="table-wrap" tabindex="0">
                    <table class="data" data-table="kafka">
                        <caption>{td_string!(l, tables.kafka_caption)}</caption>
                        <thead>
                            <tr>
                                <th scope="col">{td_string!(l, tables.col_offset)}</th>
                                <th scope="col">{td_string!(l, tables.col_key)}</th>
                                <th scope="col">{td_string!(l, tables.col_value)}</th>
                            </tr>
                        </thead>
                        <tbody>{kafka}</tbody>
                    </table>
                </div>
                <div class="table-wrap" tabindex="0">
                    <table class="data" data-table="history">
                        <caption>{td_string!(l, tables.history_caption)}</caption>
                        <thead>
                            <tr>
                                <th scope="col">{td_string!(l, tables.col_event_id)}</th>
                                <th scope="col">{td_string!(l, tables.col_ticket_id)}</th>
                                <th scope="col">{td_string!(l, tables.col_to_status)}</th>
                            </tr>
                        </thead>
                        <tbody>{history}</tbody>
                    </table>
                </div>
            </div>
        </div>
    }
}
