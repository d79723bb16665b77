//! The playground for a course page's iframe: no site chrome, and it tells the page around it
//! how tall it is, so the author can size the frame to fit.

use leptos::prelude::*;
use leptos_i18n::td_string;
use leptos_meta::Title;

use crate::pages::playground::Playground;
use crate::pages::replay::{REPLAY_PARAM, Replay};

/// Posts `{type: "outbox-playground:height", height}` to the parent whenever the document's
/// height changes. Plain JavaScript, so it runs before (and without) the WebAssembly. The
/// height is not a secret, so any parent may read it.
const REPORT_HEIGHT: &str = r#"(function(){var p=window.parent;if(!p||p===window)return;var last=0;function send(){var h=Math.ceil(document.documentElement.getBoundingClientRect().height);if(h!==last){last=h;p.postMessage({type:"outbox-playground:height",height:h},"*");}}if(window.ResizeObserver){new ResizeObserver(send).observe(document.documentElement);}window.addEventListener("load",send);send();})();"#;

/// Posts `{type: "outbox-playground:progress", explored, total, predictions: {made, right},
/// last: {outcome, row, predicted_right}, quest_map: {reached, explained, total}, quests: [{id,
/// reached, explained, hints_used}]}` (the quests the embed's `quest=` chose) to the parent on load and after every action, read
/// from the page's `#progress-message`. Like the height, it is sent to any parent: the host
/// checks the origin, and a learner's progress in a lesson is no secret.
const REPORT_PROGRESS: &str = r#"(function(){var p=window.parent;if(!p||p===window)return;function send(){var e=document.getElementById("progress-message");if(!e)return;var d=e.dataset;function n(v){return Number(v||0);}function o(v){return v?v:null;}var r=d.predictedRight;p.postMessage({type:"outbox-playground:progress",explored:n(d.explored),total:n(d.total),wrong_ways:n(d.wrongWays),predictions:{made:n(d.made),right:n(d.right)},last:{outcome:o(d.outcome),row:o(d.row),predicted_right:r?r==="true":null},quest_map:{reached:n(d.questsReached),explained:n(d.questsExplained),total:n(d.questsTotal)},quests:(d.quests||"").split(";").filter(Boolean).map(function(q){var f=q.split(":");return{id:f[0],reached:f[1]==="true",explained:f[2]==="null"?null:f[2]==="true",hints_used:n(f[3])};}),after_commit:(d.afterCommit||"").split(";").filter(Boolean).map(function(m){var f=m.split(":");return{scenario:f[0],explored:n(f[1]),total:n(f[2])};})},"*");}document.addEventListener("outbox-playground:swapped",send);send();})();"#;

#[component]
pub fn EmbedPage() -> impl IntoView {
    let l = crate::locale::use_locale();
    let replay = leptos_router::hooks::use_query_map()
        .get_untracked()
        .get(REPLAY_PARAM);
    view! {
        <Title text=td_string!(l, meta_title) />
        <div class="page embed">
            <main id="main">
                <h1 class="embed-title">{td_string!(l, title)}</h1>
                {match replay {
                    // An author's replay of one shared run: nothing runs, no sandbox.
                    Some(id) => view! { <Replay id embed=true /> }.into_any(),
                    None => view! { <Playground /> }.into_any(),
                }}
            </main>
        </div>
        <script inner_html=REPORT_HEIGHT></script>
        <script inner_html=REPORT_PROGRESS></script>
    }
}
