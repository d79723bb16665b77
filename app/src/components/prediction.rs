//! Predict, then see: the prediction's fields on the attempt form, the judgement beside the
//! outcome, the "predict first" switch and the learner's map of the failure table. All plain
//! server HTML (the fields reach the island as server-rendered children), so none of it costs
//! WebAssembly and all of it works without JavaScript.

use leptos::prelude::*;
use leptos::server_fn::ServerFn;
use leptos_i18n::td_string;
use outbox_lab::catalog::Scenario;
use outbox_lab::prediction::{Item, Judged, Judgement};
use outbox_lab::progress::Progress;

use crate::api::PredictFirst;
use crate::i18n::*;

pub fn item_label(l: Locale, item: Item) -> &'static str {
    match item {
        Item::Ticket => td_string!(l, prediction.item.ticket),
        Item::Outbox => td_string!(l, prediction.item.outbox),
        Item::Kafka => td_string!(l, prediction.item.kafka),
        Item::Client => td_string!(l, prediction.item.client),
        Item::Sends => td_string!(l, prediction.item.sends),
        Item::Mark => td_string!(l, prediction.item.mark),
        Item::History => td_string!(l, prediction.item.history),
    }
}

pub fn value_label(l: Locale, item: Item, value: &str) -> &'static str {
    match (item, value) {
        (Item::Ticket, "open") => td_string!(l, prediction.value.ticket_open),
        (Item::Ticket, _) => td_string!(l, prediction.value.ticket_resolved),
        (Item::Outbox, "none") => td_string!(l, prediction.value.outbox_none),
        (Item::Outbox, _) => td_string!(l, prediction.value.outbox_row),
        (Item::Kafka, "none") => td_string!(l, prediction.value.kafka_none),
        (Item::Kafka, _) => td_string!(l, prediction.value.kafka_event),
        (Item::Client, "ok") => td_string!(l, prediction.value.client_ok),
        (Item::Client, "error") => td_string!(l, prediction.value.client_error),
        (Item::Client, _) => td_string!(l, prediction.value.client_unknown),
        (Item::Sends, "none") => td_string!(l, prediction.value.sends_none),
        (Item::Sends, "one") => td_string!(l, prediction.value.sends_one),
        (Item::Sends, _) => td_string!(l, prediction.value.sends_more),
        (Item::Mark, "null") => td_string!(l, prediction.value.mark_null),
        (Item::Mark, _) => td_string!(l, prediction.value.mark_set),
        (Item::History, "none") => td_string!(l, prediction.value.history_none),
        (Item::History, "once") => td_string!(l, prediction.value.history_once),
        (Item::History, _) => td_string!(l, prediction.value.history_twice),
    }
}

pub fn why_text(l: Locale, id: &str) -> Option<&'static str> {
    Some(match id {
        "rolled_back_on_error" => td_string!(l, prediction.why.rolled_back_on_error),
        "commit_not_applied" => td_string!(l, prediction.why.commit_not_applied),
        "guard_changed_nothing" => td_string!(l, prediction.why.guard_changed_nothing),
        "unfinished_rolled_back" => td_string!(l, prediction.why.unfinished_rolled_back),
        "commit_applied_reply_lost" => td_string!(l, prediction.why.commit_applied_reply_lost),
        "update_outside_committed" => td_string!(l, prediction.why.update_outside_committed),
        "commit_is_durable" => td_string!(l, prediction.why.commit_is_durable),
        "guard_no_event" => td_string!(l, prediction.why.guard_no_event),
        "naive_has_no_outbox" => td_string!(l, prediction.why.naive_has_no_outbox),
        "do_nothing_hid_conflict" => td_string!(l, prediction.why.do_nothing_hid_conflict),
        "earlier_row_stays" => td_string!(l, prediction.why.earlier_row_stays),
        "insert_outside_committed" => td_string!(l, prediction.why.insert_outside_committed),
        "intent_commits_with_status" => td_string!(l, prediction.why.intent_commits_with_status),
        "died_before_publish" => td_string!(l, prediction.why.died_before_publish),
        "outbox_does_not_publish" => td_string!(l, prediction.why.outbox_does_not_publish),
        "published_before_commit" => td_string!(l, prediction.why.published_before_commit),
        "naive_publishes_directly" => td_string!(l, prediction.why.naive_publishes_directly),
        "reply_lost_unknown" => td_string!(l, prediction.why.reply_lost_unknown),
        "process_died_no_reply" => td_string!(l, prediction.why.process_died_no_reply),
        "do_nothing_reports_ok" => td_string!(l, prediction.why.do_nothing_reports_ok),
        "commit_ok_answer" => td_string!(l, prediction.why.commit_ok_answer),
        "refusal_answers_error" => td_string!(l, prediction.why.refusal_answers_error),
        "died_before_send" => td_string!(l, prediction.why.died_before_send),
        "send_commits_in_broker" => td_string!(l, prediction.why.send_commits_in_broker),
        "mark_needs_commit" => td_string!(l, prediction.why.mark_needs_commit),
        "mark_committed" => td_string!(l, prediction.why.mark_committed),
        "apply_needs_commit" => td_string!(l, prediction.why.apply_needs_commit),
        "inbox_applies_once" => td_string!(l, prediction.why.inbox_applies_once),
        "applied_again_without_inbox" => td_string!(l, prediction.why.applied_again_without_inbox),
        _ => return None,
    })
}

/// The prediction's fields, posted with the attempt form. Every line starts on "no guess":
/// a prediction is made fresh for each attempt.
pub fn prediction_fields(l: Locale, predict_first: bool) -> impl IntoView {
    let lines = prediction_lines(l, Item::TICKET);
    let (first, flip) = if predict_first {
        (
            td_string!(l, prediction.first_on),
            td_string!(l, prediction.turn_off),
        )
    } else {
        (
            td_string!(l, prediction.first_off),
            td_string!(l, prediction.turn_on),
        )
    };
    view! {
        <details class="predict" open=predict_first data-predict-first=predict_first.to_string()>
            <summary>{td_string!(l, prediction.legend)}</summary>
            <p class="action-hint">{td_string!(l, prediction.intro)}</p>
            <div class="predict-lines">{lines}</div>
            <p class="predict-first">
                {first}
                " "
                // An <input>, not a <button>: it sits inside the attempt form's markup, where
                // `#attempt-form button[type=submit]` must keep meaning "Resolve ticket-42".
                <input type="submit" form=PREDICT_FIRST_FORM value=flip />
            </p>
        </details>
    }
}

/// One radio line per item, each starting on "no guess".
pub fn prediction_lines(l: Locale, items: &'static [Item]) -> impl IntoView + use<> {
    items
        .iter()
        .map(|&item| {
            let name = item.field();
            let values = item
                .values()
                .iter()
                .map(|&v| {
                    view! {
                        <label class="segment">
                            <input type="radio" name=name value=v />
                            <span>{value_label(l, item, v)}</span>
                        </label>
                    }
                })
                .collect_view();
            view! {
                <fieldset class="predict-line" data-item=item.id()>
                    <legend>{item_label(l, item)}</legend>
                    <div class="segments">
                        <label class="segment">
                            <input type="radio" name=name value="" checked=true />
                            <span>{td_string!(l, prediction.no_guess)}</span>
                        </label>
                        {values}
                    </div>
                </fieldset>
            }
        })
        .collect_view()
}

/// The judgement, item by item, with a mark that is a sign and a word (never colour alone).
pub fn judgement(l: Locale, j: Judgement) -> impl IntoView {
    let all_right = j.all_right();
    let items = j
        .items
        .into_iter()
        .map(
            |Judged {
                 item,
                 predicted,
                 actual,
                 right,
                 why,
             }| {
                let said = value_label(l, item, &predicted);
                let line = match &actual {
                    Some(a) => {
                        let was = value_label(l, item, a);
                        td_string!(l, prediction.line, predicted = said, actual = was).to_string()
                    }
                    None => td_string!(l, prediction.line_unknown, predicted = said).to_string(),
                };
                let mark = if right {
                    td_string!(l, prediction.right)
                } else {
                    td_string!(l, prediction.wrong)
                };
                let why = why
                    .as_deref()
                    .and_then(|w| why_text(l, w))
                    .map(|t| view! { <p class="why">{t}</p> });
                view! {
                    <li data-item=item.id() data-right=right.to_string()>
                        <span class="mark" aria-hidden="true">{if right { "✓" } else { "✗" }}</span>
                        <strong>{mark}</strong>
                        " · "
                        {item_label(l, item)}
                        ": "
                        {line}
                        {why}
                    </li>
                }
            },
        )
        .collect_view();
    let summary = all_right.then(|| view! { <p>{td_string!(l, prediction.all_right)}</p> });
    view! {
        <div class="judgement">
            <h3>{td_string!(l, prediction.heading)}</h3>
            <ul>{items}</ul>
            {summary}
        </div>
    }
}

/// The form that flips "predict first". It stands outside the attempt form (forms do not
/// nest); its button sits in the prediction's fold and names it with `form=`.
pub fn predict_first_form(on: bool) -> impl IntoView {
    let origin = use_context::<crate::links::ActionOrigin>().unwrap_or_default();
    view! {
        <form method="post" action=origin.action_url(PredictFirst::url()) id=PREDICT_FIRST_FORM>
            <input type="hidden" name="on" value=(!on).to_string() />
        </form>
    }
}

const PREDICT_FIRST_FORM: &str = "predict-first-form";

/// The learner's map in one line: rows explored, wrong ways found, predictions.
pub fn progress_summary(l: Locale, p: &Progress) -> impl IntoView + use<> {
    let explored = td_string!(l, prediction.explored, n = p.explored, total = p.total).to_string();
    let found = p.wrong_ways.found.len();
    let wrong = td_string!(
        l,
        prediction.wrong_ways,
        n = found,
        total = p.wrong_ways.total
    )
    .to_string();
    let predictions = (p.predictions.made > 0).then(|| {
        let (right, made) = (p.predictions.right, p.predictions.made);
        let line = td_string!(l, prediction.predictions, right = right, made = made).to_string();
        view! {
            " · "
            <span data-progress="predictions">{line}</span>
        }
    });
    let quests = (p.quests.total > 0).then(|| {
        let line = td_string!(
            l,
            quest.map,
            reached = p.quests.reached,
            total = p.quests.total
        )
        .to_string();
        view! {
            " · "
            <a href="/quests" rel="external" data-progress="quests">{line}</a>
        }
    });
    // The publisher's and the consumer's maps, once the learner has run either.
    let after_commit = p
        .after_commit
        .iter()
        .filter(|m| !m.explored.is_empty())
        .map(|m| {
            let (n, total) = (m.explored.len(), m.cases.len());
            let line = match m.scenario {
                Scenario::Publisher => {
                    td_string!(l, prediction.publisher_map, n = n, total = total)
                }
                _ => td_string!(l, prediction.consumer_map, n = n, total = total),
            }
            .to_string();
            view! {
                " · "
                <span data-progress=m.scenario.id()>{line}</span>
            }
        })
        .collect_view();
    view! {
        <p class="progress" data-explored=p.explored data-total=p.total>
            <span data-progress="rows">{explored}</span>
            " · "
            <span data-progress="wrong">{wrong}</span>
            {after_commit}
            {predictions}
            {quests}
        </p>
    }
}

/// A failure-table row's mark on the learner's map; none for a row not produced yet (the
/// summary line counts those).
pub fn row_mark(l: Locale, explored: bool, predicted: Option<bool>) -> Option<impl IntoView> {
    let (sign, word) = match (explored, predicted) {
        (false, _) => return None,
        (true, Some(true)) => ("✓", td_string!(l, prediction.row_right)),
        (true, Some(false)) => ("✗", td_string!(l, prediction.row_wrong)),
        (true, None) => ("✓", td_string!(l, prediction.row_explored)),
    };
    Some(view! {
        <span class="row-mark" data-explored="true">
            <span aria-hidden="true">{sign} " "</span>
            {word}
        </span>
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sentence_a_judgement_can_name_has_its_text_in_both_languages() {
        for l in [Locale::ru, Locale::en] {
            for id in outbox_lab::prediction::WHY_IDS {
                assert!(why_text(l, id).is_some_and(|t| !t.is_empty()), "{id}");
            }
        }
    }
}
