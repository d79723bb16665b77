//! The chosen quest beside the playground: its goal (kept in view while the learner works),
//! what the last action showed of it, the hints taken so far, and, once PostgreSQL confirms the
//! goal, the question. Plain forms: each works without JavaScript, and the page's script posts
//! them in the background like every other form.

use leptos::prelude::*;
use leptos::server_fn::ServerFn;
use leptos_i18n::td_string;
use outbox_lab::catalog::ActionKind;
use outbox_lab::report::Report;

use crate::i18n::*;
use crate::links::ActionOrigin;
use crate::quest_api::{QuestAnswer, QuestEntry, QuestHint};

/// The query parameter that chooses quests (`quest=a` or `quest=a,b`).
pub const QUEST_PARAM: &str = "quest";

/// The quest ids a link asks for, in its order, at most a handful.
pub fn chosen(raw: Option<&str>) -> Vec<String> {
    raw.unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|id| outbox_lab::quest::valid_id(id))
        .take(6)
        .map(str::to_owned)
        .collect()
}

#[component]
pub fn QuestPanel(entry: QuestEntry, report: Report, leave_href: String) -> impl IntoView {
    let l = crate::locale::use_locale();
    let origin = use_context::<ActionOrigin>().unwrap_or_default();
    let status = if entry.reached {
        td_string!(l, quest.reached).to_owned()
    } else {
        td_string!(l, quest.not_reached).to_owned()
    };
    let title_id = format!("quest-{}", entry.id);
    let labelled_by = title_id.clone();
    let checks = checks(l, &entry, &report);
    let dead_end = entry
        .dead_end
        .clone()
        .map(|says| view! { <p class="quest-dead-end">{says}</p> });
    let hints = hints(l, &entry, &origin);
    let question = question(l, &entry, &origin);
    // A plain form post's refusal comes back in the address it was redirected to.
    let refused = ServerAction::<QuestHint>::new()
        .value()
        .get_untracked()
        .and_then(Result::err)
        .or_else(|| {
            ServerAction::<QuestAnswer>::new()
                .value()
                .get_untracked()
                .and_then(Result::err)
        })
        .map(|err| view! { <crate::components::error_line::ErrorNote err /> });
    // The goal bar is the playground's own child, so it stays stuck to the top of the
    // viewport for the whole playground, not just for this panel.
    view! {
        <div class="quest-goal" data-quest=entry.id.clone() data-reached=entry.reached.to_string()>
            <p class="quest-head">
                <span class="quest-label">{td_string!(l, quest.label)}</span>
                " "
                <a href=format!("#{title_id}") class="quest-title">{entry.title.clone()}</a>
                " "
                <span class="quest-status" data-reached=entry.reached.to_string()>
                    {if entry.reached { "✓ " } else { "" }}
                    {status}
                </span>
            </p>
            <p class="quest-text">{entry.goal.clone()}</p>
        </div>
        <section class="quest panel" aria-labelledby=labelled_by data-quest=entry.id.clone()
            data-reached=entry.reached.to_string()>
            <h2 id=title_id class="quest-heading">{td_string!(l, quest.label)} ": " {entry.title.clone()}</h2>
            {refused}
            {checks}
            {dead_end}
            {hints}
            {question}
            <p class="quest-links">
                <a href="/quests" rel="external">{td_string!(l, quest.all)}</a>
                " · "
                <a href=leave_href rel="external">{td_string!(l, quest.leave)}</a>
            </p>
        </section>
    }
}

/// The checks of the stage the learner is at, each marked by the last action's report.
fn checks(l: Locale, entry: &QuestEntry, report: &Report) -> impl IntoView + use<> {
    let total = entry.stages.len();
    let at = (entry.stage as usize).min(total.saturating_sub(1));
    let ran = !matches!(report.action, ActionKind::Snapshot) && !report.trace.is_empty();
    let seen = report.quests.iter().find(|s| s.quest == entry.id);
    let held = |k: usize, i: usize| {
        seen.and_then(|s| s.held.get(k))
            .and_then(|c| c.get(i))
            .copied()
            .unwrap_or(false)
    };
    let stage_line = (total > 1).then(|| {
        let done: Vec<_> = (0..at)
            .map(|k| {
                let line = td_string!(l, quest.stage_done, n = k + 1, total = total).to_string();
                view! { <p class="quest-stage-done">"✓ " {line}</p> }
            })
            .collect();
        let line = td_string!(l, quest.stage, n = at + 1, total = total).to_string();
        view! {
            {done}
            <p class="quest-stage">{line}</p>
        }
    });
    let items: Vec<_> = entry
        .stages
        .get(at)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, says)| {
            let mark = if !ran { None } else { Some(held(at, i)) };
            let (sign, word) = match mark {
                None => ("·", None),
                Some(true) => ("✓", Some(td_string!(l, quest.held))),
                Some(false) => ("✗", Some(td_string!(l, quest.not_held))),
            };
            view! {
                <li data-held=mark.map(|m| m.to_string())>
                    <span aria-hidden="true">{sign} " "</span>
                    {says}
                    {word.map(|w| view! { <span class="visually-hidden">" — " {w}</span> })}
                </li>
            }
        })
        .collect();
    let heading = if ran {
        td_string!(l, quest.checks_heading).to_owned()
    } else {
        td_string!(l, quest.checks_none).to_owned()
    };
    view! {
        <div class="quest-checks" role="status">
            <p class="quest-checks-heading">{heading}</p>
            {stage_line}
            <ul>{items}</ul>
        </div>
    }
}

fn hints(l: Locale, entry: &QuestEntry, origin: &ActionOrigin) -> impl IntoView + use<> {
    let shown: Vec<_> = entry
        .hints
        .iter()
        .map(|h| view! { <li>{h.clone()}</li> })
        .collect();
    let list = (!shown.is_empty()).then(|| {
        view! {
            <p class="quest-hints-heading">{td_string!(l, quest.hints_heading)}</p>
            <ol class="quest-hints">{shown}</ol>
        }
    });
    // Once the goal holds, no more hints are offered: the question is what is left.
    let more = entry.hints_used < entry.hints_total;
    let button = if entry.reached {
        ().into_any()
    } else if more {
        let label = if entry.hints_used == 0 {
            td_string!(l, quest.hint).to_owned()
        } else {
            td_string!(
                l,
                quest.hint_next,
                n = entry.hints_used + 1,
                total = entry.hints_total
            )
            .to_string()
        };
        view! {
            <form method="post" action=origin.action_url(QuestHint::url()) class="quest-hint-form">
                <input type="hidden" name="quest" value=entry.id.clone() />
                <button type="submit" class="secondary">{label}</button>
            </form>
        }
        .into_any()
    } else {
        view! { <p class="quest-hints-done">{td_string!(l, quest.hints_done)}</p> }.into_any()
    };
    view! { <div class="quest-hints-box">{list}{button}</div> }
}

fn question(l: Locale, entry: &QuestEntry, origin: &ActionOrigin) -> impl IntoView + use<> {
    let q = entry.question.clone()?;
    let last = entry.last_answer.clone();
    let verdict = last.as_ref().map(|a| {
        let head = if a.right {
            td_string!(l, quest.right)
        } else {
            td_string!(l, quest.wrong)
        };
        view! {
            <p class="quest-verdict" data-right=a.right.to_string() role="status">
                <strong>{head}</strong>
                {a.why.clone().map(|w| view! { " " {w} })}
            </p>
        }
    });
    let explained = (entry.explained == Some(true))
        .then(|| view! { <p class="quest-explained">"✓ " {td_string!(l, quest.explained)}</p> });
    let choices: Vec<_> = q
        .choices
        .into_iter()
        .map(|(id, text)| {
            let input_id = format!("quest-{}-{}", entry.id, id);
            let checked = last.as_ref().is_some_and(|a| a.id == id);
            view! {
                <div class="quest-choice">
                    <input type="radio" name="answer" id=input_id.clone() value=id required checked=checked />
                    <label for=input_id>{text}</label>
                </div>
            }
        })
        .collect();
    Some(view! {
        <form method="post" action=origin.action_url(QuestAnswer::url()) class="quest-question">
            <input type="hidden" name="quest" value=entry.id.clone() />
            <fieldset>
                <legend>{td_string!(l, quest.question_heading)} ": " {q.ask}</legend>
                {choices}
            </fieldset>
            <button type="submit">{td_string!(l, quest.answer)}</button>
            {verdict}
            {explained}
        </form>
    })
}
