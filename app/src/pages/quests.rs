//! `/quests`: every quest with the learner's standing, grouped by where it is reached, each
//! with a link that opens the playground with that quest's goal in view.

use leptos::prelude::*;
use leptos_i18n::td_string;
use leptos_meta::Title;

use crate::components::header::Header;
use crate::i18n::*;
use crate::quest_api::{QuestEntry, QuestList};

#[component]
pub fn QuestsPage() -> impl IntoView {
    let l = crate::locale::use_locale();
    let list = async move {
        match crate::quest_api::quests().await {
            Ok(list) => view! { <QuestIndex list /> }.into_any(),
            Err(err) => view! { <crate::components::error_line::ErrorNote err /> }.into_any(),
        }
    };
    view! {
        <Title text=td_string!(l, quest.page_title) />
        <div class="page">
            <Header />
            <main id="main" class="quests-page">
                <h2>{td_string!(l, quest.heading)}</h2>
                <p class="intro">{td_string!(l, quest.intro)}</p>
                {Suspend::new(list)}
                <p><a href="/" rel="external">{td_string!(l, quest.back)}</a></p>
            </main>
        </div>
    }
}

#[component]
fn QuestIndex(list: QuestList) -> impl IntoView {
    let l = crate::locale::use_locale();
    let count = td_string!(
        l,
        quest.count,
        reached = list.reached(),
        total = list.quests.len()
    )
    .to_string();
    use outbox_lab::quest::Area;
    // The areas in the catalogue's order; a heading per area, exhaustively.
    let groups: Vec<_> = Area::ALL
        .iter()
        .map(|a| (*a, a.id()))
        .filter_map(|(kind, area)| {
            let items: Vec<_> = list
                .quests
                .iter()
                .filter(|q| q.area == area)
                .map(|q| item(l, q))
                .collect();
            (!items.is_empty()).then(|| {
                let heading = match kind {
                    Area::Ticket => td_string!(l, quest.area_ticket),
                    Area::TraceA => td_string!(l, quest.area_trace_a),
                    Area::Race => td_string!(l, quest.area_race),
                    Area::AfterCommit => td_string!(l, quest.area_after_commit),
                };
                view! {
                    <section class="quest-group" data-area=area>
                        <h3>{heading}</h3>
                        <ul class="quest-list">{items}</ul>
                    </section>
                }
            })
        })
        .collect();
    view! {
        <p class="progress" data-reached=list.reached()>{count}</p>
        {groups}
    }
}

fn item(l: Locale, q: &QuestEntry) -> impl IntoView + use<> {
    let status = match (q.reached, q.explained) {
        (true, Some(true)) => td_string!(l, quest.status_explained),
        (true, _) => td_string!(l, quest.status_reached),
        _ => td_string!(l, quest.status_not_yet),
    };
    let lang = crate::locale::id(l);
    let href = format!("/?quest={}&lang={lang}", q.id);
    view! {
        <li data-quest=q.id.clone() data-reached=q.reached.to_string()>
            <p>
                <strong>{q.title.clone()}</strong>
                " — "
                <span class="quest-status" data-reached=q.reached.to_string()>
                    {if q.reached { "✓ " } else { "" }}
                    {status}
                </span>
            </p>
            <p>{q.goal.clone()}</p>
            <p><a href=href rel="external">{td_string!(l, quest.take)}</a></p>
        </li>
    }
}
