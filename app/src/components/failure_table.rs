//! The lesson's failure table, with the row of the last outcome lit.

use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::catalog::FailureRow;
use outbox_lab::progress::Progress;
use outbox_lab::report::Report;

use crate::components::prediction;
use crate::texts;

#[component]
pub fn FailureTable(
    report: Signal<Report>,
    /// The learner's map: which rows this sandbox has produced.
    progress: Progress,
) -> impl IntoView {
    let l = crate::locale::use_locale();
    let col_tickets = td_string!(l, failures.col_tickets);
    let col_outbox = td_string!(l, failures.col_outbox);
    let col_kafka = td_string!(l, failures.col_kafka);
    let summary = prediction::progress_summary(l, &progress);
    let lit = move || report.read().outcome.and_then(|o| o.failure_row());
    let rows = FailureRow::ALL
        .iter()
        .map(|&row| {
            let [point, tickets, outbox, kafka] = texts::failure_row(l, row);
            let here = move || lit() == Some(row);
            let seen = progress.rows.iter().find(|r| r.row == row);
            let mark = prediction::row_mark(
                l,
                seen.is_some_and(|r| r.explored),
                seen.and_then(|r| r.predicted),
            );
            let note = (!row.from_lesson_table()).then(|| {
                view! { <span class="note">" (" {td_string!(l, failures.note)} ")"</span> }
            });
            view! {
                <tr data-row=row.id() aria-current=move || here().then_some("true")>
                    <th scope="row">
                        {point}
                        {note}
                        " "
                        {mark}
                        {move || {
                            here()
                                .then(|| view! { <span class="here">{td_string!(l, failures.here)}</span> })
                        }}
                    </th>
                    <td data-label=col_tickets>{tickets}</td>
                    <td data-label=col_outbox>{outbox}</td>
                    <td data-label=col_kafka>{kafka}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="panel" aria-labelledby="failures-heading">
            <div class="failures-head">
                <h2 id="failures-heading">{td_string!(l, failures.heading)}</h2>
                {summary}
            </div>
            <div class="table-wrap">
                <table class="data failures stack">
                    <thead>
                        <tr>
                            <th scope="col">{td_string!(l, failures.col_point)}</th>
                            <th scope="col">{td_string!(l, failures.col_tickets)}</th>
                            <th scope="col">{td_string!(l, failures.col_outbox)}</th>
                            <th scope="col">{td_string!(l, failures.col_kafka)}</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>

        </section>
    }
}
