//! The sandbox's tables as PostgreSQL holds them after the last action.

use leptos::prelude::*;
use outbox_lab::outcome::Report;

use crate::i18n::*;

#[component]
pub fn Tables(report: Signal<Report>) -> impl IntoView {
    let i18n = use_i18n();
    let (notes, set_notes) = signal(false);
    view! {
        <section class="tables" aria-labelledby="tables-heading">
            <h2 id="tables-heading">{t!(i18n, tables_heading)}</h2>
            <p class="db-label">{t!(i18n, ticket_db)}</p>
            <div class="table-wrap">
                <table class="data" data-table="tickets">
                    <caption>{t!(i18n, tickets_caption)}</caption>
                    <thead>
                        <tr>
                            <th scope="col">{t!(i18n, col_id)}</th>
                            <th scope="col">{t!(i18n, col_status)}</th>
                        </tr>
                    </thead>
                    <tbody>
                        {move || {
                            report
                                .read()
                                .snapshot
                                .tickets
                                .iter()
                                .map(|t| {
                                    view! {
                                        <tr data-id=t.id.clone()>
                                            <td>{t.id.clone()}</td>
                                            <td data-col="status">{t.status.clone()}</td>
                                        </tr>
                                    }
                                })
                                .collect_view()
                        }}
                    </tbody>
                </table>
            </div>
            <div class="table-wrap">
                <table class="data" data-table="outbox">
                    <caption>{t!(i18n, outbox_caption)}</caption>
                    <thead>
                        <tr>
                            <th scope="col">{t!(i18n, col_event_id)}</th>
                            <th scope="col">{t!(i18n, col_aggregate_id)}</th>
                            <th scope="col">{t!(i18n, col_payload)}</th>
                            <th scope="col">{t!(i18n, col_published_at)}</th>
                        </tr>
                    </thead>
                    <tbody>
                        {move || {
                            let rows = report.read().snapshot.outbox.clone();
                            if rows.is_empty() {
                                view! {
                                    <tr class="empty">
                                        <td colspan="4">{t!(i18n, empty_table)}</td>
                                    </tr>
                                }
                                    .into_any()
                            } else {
                                rows.into_iter()
                                    .map(|r| {
                                        let id = r.event_id.clone();
                                        view! {
                                            <tr data-id=id>
                                                <td>{r.event_id}</td>
                                                <td>{r.aggregate_id}</td>
                                                <td class="json">
                                                    <code>{r.payload}</code>
                                                </td>
                                                <td data-col="published_at">
                                                    {r.published_at.unwrap_or_else(|| "NULL".to_owned())}
                                                </td>
                                            </tr>
                                        }
                                    })
                                    .collect_view()
                                    .into_any()
                            }
                        }}
                    </tbody>
                </table>
            </div>
            <button
                type="button"
                class="link-button"
                aria-expanded=move || notes.get().to_string()
                aria-controls="column-notes"
                on:click=move |_| set_notes.update(|open| *open = !*open)
            >
                {move || if notes.get() { t_string!(i18n, notes_hide) } else { t_string!(i18n, notes_show) }}
            </button>
            <ul id="column-notes" class="column-notes" hidden=move || !notes.get()>
                <li>{t!(i18n, note_event_id)}</li>
                <li>{t!(i18n, note_aggregate_id)}</li>
                <li>{t!(i18n, note_payload)}</li>
                <li>{t!(i18n, note_published_at)}</li>
            </ul>
            <p class="sandbox">
                {t!(i18n, sandbox_label)} ": " <code>{move || report.read().sandbox.clone()}</code>
            </p>
        </section>
    }
}
