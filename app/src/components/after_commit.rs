//! After COMMIT, previewed (lessons 8.3 and 8.4): the second strip — restart, publisher,
//! Kafka, consumer, History — drawn from the sandbox's tables, what the last run did, the
//! forms that run the publisher and the consumer, and the publisher's own failure table: the
//! panels of the page's after-COMMIT view (see `view_switch`). Plain server HTML and plain forms: it needs no WebAssembly and works without JavaScript.

use leptos::prelude::*;
use leptos::server_fn::ServerFn;
use leptos_i18n::td_string;
use outbox_lab::catalog::{ConsumerCrash, PublisherCrash, PublisherRow, Scenario, Stage};
use outbox_lab::prediction::Item;
use outbox_lab::report::{AfterCommitRun, Report};

use crate::api::{Consume, PublishRace, Restart};
use crate::i18n::*;
use crate::links::ActionOrigin;
use crate::texts;

/// The view's head: what it previews, and the strip of stages drawn from the sandbox's tables.
#[component]
pub fn AfterCommitStrip(report: Signal<Report>) -> impl IntoView {
    let l = crate::locale::use_locale();
    let r = report.get_untracked();
    view! {
        <section class="panel after-commit" id="after-commit" aria-labelledby="after-heading">
            <h2 id="after-heading">{td_string!(l, after.heading)}</h2>
            <p class="action-hint">
                <span class="badge">{td_string!(l, after.preview)}</span>
                " "
                {td_string!(l, after.intro)}
            </p>
            {strip(l, &r)}
            {inbox_line(l, &r)}
        </section>
    }
}

/// The three runs after COMMIT, side by side: the restart's publisher, two publishers at once,
/// the consumer.
#[component]
pub fn AfterCommitForms() -> impl IntoView {
    let l = crate::locale::use_locale();
    let origin = use_context::<ActionOrigin>().unwrap_or_default();
    forms(l, &origin)
}

/// What the last run after COMMIT did (nothing when the last action was another).
#[component]
pub fn AfterCommitResult(report: Signal<Report>) -> impl IntoView {
    let l = crate::locale::use_locale();
    last_run(l, &report.get_untracked())
}

/// The publisher's failure table, in the place the ticket function's stands in its view.
#[component]
pub fn PublisherFailures(report: Signal<Report>) -> impl IntoView {
    let l = crate::locale::use_locale();
    let r = report.get_untracked();
    view! {
        <section class="panel publisher-failures-panel" aria-labelledby="publisher-failures-heading">
            {publisher_table(l, &r)}
            <p class="action-hint">{td_string!(l, after.order_note)}</p>
        </section>
    }
}

/// Restart → publisher → Kafka → consumer → History (the catalogue's stages), with what the
/// tables say at each, the crash points of the scenario that runs there, and the last run's
/// stages and the point it died at lit.
fn strip(l: Locale, r: &Report) -> impl IntoView + use<> {
    let s = &r.snapshot;
    let ran = r.after_commit.as_ref().map(|run| run.scenario());
    let died = r
        .after_commit
        .as_ref()
        .and_then(|run| run.died_at(r.outcome));
    let note = |stage: Stage| -> Option<String> {
        let count = |n: usize| n.to_string();
        match stage {
            Stage::Restart => None,
            Stage::Publisher => {
                let waiting = s.outbox.iter().filter(|o| o.published_at.is_none()).count();
                Some(td_string!(l, after.waiting_rows, count = count(waiting)).to_string())
            }
            Stage::Kafka => {
                Some(td_string!(l, after.records, count = count(s.kafka.len())).to_string())
            }
            Stage::Consumer => Some(
                td_string!(l, after.offset, offset = s.consumer_offset.to_string()).to_string(),
            ),
            Stage::History => {
                Some(td_string!(l, after.lines, count = count(s.history.len())).to_string())
            }
        }
    };
    let nodes = Stage::ALL
        .iter()
        .map(|&stage| {
            let marks = stage.runs().map(|scenario| {
                scenario
                    .crash_points()
                    .into_iter()
                    .map(|point| {
                        view! {
                            <span class="after-mark" data-mark=point.id() data-lit=(died == Some(point)).to_string()>
                                <span aria-hidden="true">"✕ "</span>
                                {texts::pause_mark(l, point)}
                            </span>
                        }
                    })
                    .collect_view()
            });
            let lit = ran.is_some_and(|sc| sc.stages().contains(&stage));
            view! {
                <li
                    class="node"
                    data-node=stage.id()
                    data-runs=stage.runs().map(|sc| sc.id())
                    data-ran=lit.to_string()
                >
                    <span class="node-name">{texts::stage_name(l, stage)}</span>
                    {note(stage).map(|n| view! { <span class="node-note">{n}</span> })}
                    {marks}
                </li>
            }
        })
        .collect_view();
    view! { <ol class="after-strip" aria-label=td_string!(l, after.strip_label)>{nodes}</ol> }
}

/// What the last publisher or consumer run sent, applied or skipped, under the outcome panel
/// that names its outcome.
fn last_run(l: Locale, r: &Report) -> impl IntoView + use<> {
    let run = r.after_commit.clone()?;
    let outcome = r.outcome?;
    let ids = |v: &[String]| {
        if v.is_empty() {
            td_string!(l, after.none).to_owned()
        } else {
            v.join(", ")
        }
    };
    let lines: Vec<String> = match &run {
        AfterCommitRun::Publisher { sent, .. } if sent.is_empty() => {
            vec![td_string!(l, after.sent_none).to_owned()]
        }
        AfterCommitRun::Publisher { sent, .. } => {
            vec![td_string!(l, after.sent, ids = ids(sent)).to_string()]
        }
        AfterCommitRun::PublishRace {
            a_sent,
            b_sent,
            lock_wait,
            ..
        } => {
            let mut lines =
                vec![td_string!(l, after.sent_ab, a = ids(a_sent), b = ids(b_sent)).to_string()];
            if let Some(w) = lock_wait {
                let by = w
                    .blocked_by
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                lines.push(
                    td_string!(l, after.lock_wait, pid = w.waiting_pid.to_string(), by = by)
                        .to_string(),
                );
            }
            lines
        }
        AfterCommitRun::Consumer {
            applied, skipped, ..
        } => {
            let mut lines = vec![td_string!(l, after.applied, ids = ids(applied)).to_string()];
            if !skipped.is_empty() {
                lines.push(td_string!(l, after.skipped, ids = ids(skipped)).to_string());
            }
            lines
        }
    };
    let tone = texts::Tone::of(Some(outcome)).attr();
    let judged = r
        .prediction
        .clone()
        .map(|j| crate::components::prediction::judgement(l, j));
    Some(view! {
        <div class="after-result" data-outcome=outcome.id() data-tone=tone role="status">
            // The outcome's title and body stand in the outcome panel just above.
            <h3>{td_string!(l, after.result_heading)}</h3>
            <ul>{lines.into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}</ul>
            {judged}
        </div>
    })
}

/// The prediction lines of a run after COMMIT, folded away until the learner opens them.
fn predict(l: Locale, items: &'static [Item]) -> impl IntoView + use<> {
    view! {
        <details class="after-predict">
            <summary>{td_string!(l, prediction.legend)}</summary>
            <div class="predict-lines">
                {crate::components::prediction::prediction_lines(l, items)}
            </div>
        </details>
    }
}

/// One radio button of a form's choice.
fn radio(
    name: &'static str,
    value: &'static str,
    label: &'static str,
    checked: bool,
) -> impl IntoView {
    view! {
        <label class="choice">
            <input type="radio" name=name value=value checked=checked />
            <span>{label}</span>
        </label>
    }
}

fn forms(l: Locale, origin: &ActionOrigin) -> impl IntoView + use<> {
    let busy = td_string!(l, controls.busy);
    view! {
        <div class="panel after-forms">
            <form method="post" action=origin.action_url(Restart::url()) class="after-form" data-form="restart">
                <fieldset>
                    <legend>{td_string!(l, after.restart_legend)}</legend>
                    {PublisherCrash::ALL
                        .iter()
                        .map(|&c| radio("crash", c.id(), texts::publisher_crash_text(l, c).1, c == PublisherCrash::None))
                        .collect_view()}
                </fieldset>
                {predict(l, Item::PUBLISHER)}
                <button type="submit" data-busy-label=busy>
                    {td_string!(l, after.restart_button)}
                </button>
                {crate::components::stepper::start_after_commit(l, Scenario::Publisher)}
            </form>
            <form method="post" action=origin.action_url(PublishRace::url()) class="after-form" data-form="publish_race">
                <fieldset>
                    <legend>{td_string!(l, after.race_legend)}</legend>
                    {radio("skip_locked", "on", td_string!(l, after.skip_on), true)}
                    {radio("skip_locked", "off", td_string!(l, after.skip_off), false)}
                </fieldset>
                <button type="submit" data-busy-label=busy>
                    {td_string!(l, after.race_button)}
                </button>
            </form>
            <form method="post" action=origin.action_url(Consume::url()) class="after-form" data-form="consume">
                <fieldset>
                    <legend>{td_string!(l, after.consume_legend)}</legend>
                    {radio("inbox", "on", td_string!(l, after.inbox_on), true)}
                    {radio("inbox", "off", td_string!(l, after.inbox_off), false)}
                    {ConsumerCrash::ALL
                        .iter()
                        .map(|&c| radio("crash", c.id(), texts::consumer_crash_text(l, c).1, c == ConsumerCrash::None))
                        .collect_view()}
                </fieldset>
                {predict(l, Item::CONSUMER)}
                <button type="submit" data-busy-label=busy>
                    {td_string!(l, after.consume_button)}
                </button>
                {crate::components::stepper::start_after_commit(l, Scenario::Consumer)}
            </form>
        </div>
    }
}

fn publisher_row_text(l: Locale, row: PublisherRow) -> [&'static str; 3] {
    match row {
        PublisherRow::CrashBeforeSend => [
            td_string!(l, after.row_crash_before_send.point),
            td_string!(l, after.row_crash_before_send.outbox),
            td_string!(l, after.row_crash_before_send.kafka),
        ],
        PublisherRow::CrashAfterSend => [
            td_string!(l, after.row_crash_after_send.point),
            td_string!(l, after.row_crash_after_send.outbox),
            td_string!(l, after.row_crash_after_send.kafka),
        ],
        PublisherRow::CrashAfterMark => [
            td_string!(l, after.row_crash_after_mark.point),
            td_string!(l, after.row_crash_after_mark.outbox),
            td_string!(l, after.row_crash_after_mark.kafka),
        ],
    }
}

/// The publisher's failure table, with the row of the last run lit.
fn publisher_table(l: Locale, r: &Report) -> impl IntoView + use<> {
    let lit = r.outcome.and_then(|o| o.publisher_row());
    let col_outbox = td_string!(l, after.col_outbox);
    let col_kafka = td_string!(l, after.col_kafka);
    let rows = PublisherRow::ALL
        .iter()
        .map(|&row| {
            let [point, outbox, kafka] = publisher_row_text(l, row);
            let here = lit == Some(row);
            view! {
                <tr data-row=row.id() aria-current=here.then_some("true")>
                    <th scope="row">
                        {point}
                        {here.then(|| view! { " " <span class="here">{td_string!(l, after.here)}</span> })}
                    </th>
                    <td data-label=col_outbox>{outbox}</td>
                    <td data-label=col_kafka>{kafka}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <h2 id="publisher-failures-heading">{td_string!(l, after.table_heading)}</h2>
        <div class="table-wrap" tabindex="0">
            <table class="data failures stack publisher-failures" aria-labelledby="publisher-failures-heading">
                <thead>
                    <tr>
                        <th scope="col">{td_string!(l, after.col_point)}</th>
                        <th scope="col">{col_outbox}</th>
                        <th scope="col">{col_kafka}</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// The consumer's own bookkeeping, in one line: its inbox and its committed offset.
fn inbox_line(l: Locale, r: &Report) -> impl IntoView + use<> {
    let s = &r.snapshot;
    let ids = if s.inbox.is_empty() {
        td_string!(l, after.inbox_empty).to_owned()
    } else {
        s.inbox.join(", ")
    };
    let offset = td_string!(l, after.offset, offset = s.consumer_offset.to_string()).to_string();
    view! {
        <p class="action-hint" data-inbox=s.inbox.join(" ")>
            {td_string!(l, after.inbox_caption)} ": " {ids} " · " {offset}
        </p>
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use outbox_lab::catalog::{ActionKind, OutcomeId};

    fn drawn(run: AfterCommitRun, outcome: OutcomeId) -> String {
        let mut r = Report::of_snapshot(
            String::new(),
            ActionKind::Restart,
            outbox_lab::model::initial_state(),
        );
        r.after_commit = Some(run);
        r.outcome = Some(outcome);
        Owner::new().with(|| strip(Locale::en, &r).to_html())
    }

    #[test]
    fn the_strip_draws_every_stage_and_every_crash_point_of_the_catalogue() {
        let html = drawn(
            AfterCommitRun::Publisher {
                crash: PublisherCrash::AfterSend,
                sent: vec![],
            },
            OutcomeId::PublisherCrashedAfterSend,
        );
        for stage in Stage::ALL {
            assert!(
                html.contains(&format!("data-node=\"{}\"", stage.id())),
                "{stage}"
            );
        }
        for scenario in [Scenario::Publisher, Scenario::Consumer] {
            for point in scenario.crash_points() {
                assert!(
                    html.contains(&format!("data-mark=\"{}\"", point.id())),
                    "{point:?}"
                );
            }
        }
        assert!(
            html.contains("data-mark=\"after_send\" data-lit=\"true\""),
            "{html}"
        );
        assert_eq!(html.matches("data-lit=\"true\"").count(), 1);
        // The publisher's run went through the restart, the publisher and Kafka only.
        assert!(
            html.contains("data-node=\"kafka\" data-ran=\"true\""),
            "{html}"
        );
        assert!(
            html.contains("data-node=\"history\" data-ran=\"false\""),
            "{html}"
        );
    }

    #[test]
    fn a_consumer_that_did_not_die_lights_no_mark() {
        let html = drawn(
            AfterCommitRun::Consumer {
                inbox: true,
                crash: ConsumerCrash::None,
                applied: vec![],
                skipped: vec![],
            },
            OutcomeId::Consumed,
        );
        assert!(!html.contains("data-lit=\"true\""), "{html}");
        assert!(
            html.contains("data-runs=\"consumer\" data-ran=\"true\""),
            "{html}"
        );
    }
}
