//! Side by side: the same crash point the outbox way and a wrong way, each in a sandbox of its
//! own, with what differs stated in one sentence.

use leptos::either::Either;
use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::catalog::{CommitFate, CrashPoint, Mode, WRONG_WAYS};
use outbox_lab::input::Mistakes;
use outbox_lab::report::{CompareReport, Report};

use leptos::server_fn::ServerFn;

use crate::api::Compare;
use crate::components::tables::Tables;
use crate::i18n::*;
use crate::texts::{self, Tone};

/// A wrong way as the form posts it: a mode id, or mistake ids.
fn way_value(mode: Mode, mistakes: &[outbox_lab::catalog::Mistake]) -> String {
    if mistakes.is_empty() {
        mode.id().to_owned()
    } else {
        Mistakes::of(mistakes).ids()
    }
}

#[component]
pub fn ComparePanel(initial: Option<CompareReport>) -> impl IntoView {
    let l = crate::locale::use_locale();
    let action = ServerAction::<Compare>::new();
    let origin = use_context::<crate::links::ActionOrigin>().unwrap_or_default();
    // Rendered on the server only (see `enhance`): the result is the kept comparison, and a
    // refused post comes back with its error in the URL.
    let result = Signal::stored(initial);
    let error = Signal::stored(action.value().get_untracked().and_then(Result::err));
    let open = result.with_untracked(Option::is_some) || error.with_untracked(Option::is_some);

    let way_options = WRONG_WAYS
        .iter()
        .map(|(mode, list)| {
            view! {
                <option value=way_value(*mode, list)>{texts::way_label(l, *mode, list)}</option>
            }
        })
        .collect_view();
    let crash_options = CrashPoint::ALL
        .iter()
        .map(|&c| view! { <option value=c.id()>{texts::crash_label(l, c)}</option> })
        .collect_view();
    let fate_options = [CommitFate::Applied, CommitFate::NotApplied]
        .iter()
        .map(|&f| view! { <option value=f.id()>{texts::fate_label(l, f)}</option> })
        .collect_view();

    view! {
        <section class="panel compare" aria-labelledby="compare-heading">
            // Folded until used: the attempt's result is what the page is for.
            <details class="compare-fold" open=open>
            <summary>
                <h2 id="compare-heading">{td_string!(l, compare.heading)}</h2>
            </summary>
            <p class="intro">{td_string!(l, compare.intro)}</p>
            <form method="post" action=origin.action_url(Compare::url()) id="compare-form" class="compare-form">
                <label class="field">
                    <span>{td_string!(l, compare.way)}</span>
                    <select name="way">{way_options}</select>
                </label>
                <label class="field">
                    <span>{td_string!(l, compare.crash)}</span>
                    <select name="crash">{crash_options}</select>
                </label>
                <label class="field">
                    <span>{td_string!(l, controls.fate_legend)}</span>
                    <select name="commit_fate">{fate_options}</select>
                </label>
                <button
                    type="submit"
                    class="primary"
                    data-busy-label=td_string!(l, compare.busy)
                >
                    {td_string!(l, compare.submit)}
                </button>
            </form>
            <div role="status" aria-live="polite" aria-atomic="true" class="compare-news">
                {crate::components::error_line::error_line(error)}
                {move || match result.get() {
                    None => {
                        Either::Left(
                            view! { <p class="compare-empty">{td_string!(l, compare.empty)}</p> },
                        )
                    }
                    Some(r) => {
                        Either::Right(view! {
                            <p class="difference" data-difference=r.difference.id()>
                                <strong>{texts::difference(l, r.difference)}</strong>
                            </p>
                        })
                    }
                }}
            </div>
            {move || result.get().map(|r| sides(l, r))}
            </details>
        </section>
    }
}

fn sides(l: Locale, r: CompareReport) -> impl IntoView {
    let setup = texts::setup(l, r.setup);
    let way = r
        .wrong
        .attempt
        .as_ref()
        .map(|a| {
            let list: Vec<_> = a.mistakes.iter().collect();
            texts::way_label(l, a.mode, &list)
        })
        .unwrap_or_default();
    view! {
        <p class="compare-setup" data-setup=r.setup.id()>
            {td_string!(l, compare.starts, setup = setup)}
        </p>
        <div class="compare-grid">
            {side(l, "outbox", td_string!(l, compare.outbox_side).to_owned(), r.outbox)}
            {side(l, "wrong", td_string!(l, compare.wrong_side, way = way).to_string(), r.wrong)}
        </div>
    }
}

fn side(l: Locale, id: &'static str, title: String, report: Report) -> impl IntoView {
    let tone = Tone::of(report.outcome);
    let (headline, body) = report
        .outcome
        .map(|o| texts::outcome_text(l, o))
        .unwrap_or_else(|| texts::action_text(l, report.action));
    let heading_id = format!("compare-{id}-heading");
    let labelled_by = heading_id.clone();
    let outcome_id = report.outcome.map(|o| o.id());
    let crash = report
        .attempt
        .as_ref()
        .map(|a| texts::crash_label(l, a.crash));
    let download = crate::components::download::download_links(l, &report, Some(id));
    let nested: &'static str = if id == "outbox" {
        "compare-outbox"
    } else {
        "compare-wrong"
    };
    view! {
        <article
            class="compare-side"
            data-side=id
            data-tone=tone.attr()
            data-outcome=outcome_id
            aria-labelledby=labelled_by
        >
            <h3 id=heading_id>{title}</h3>
            <p class="compare-crash">{td_string!(l, compare.crash)} ": " {crash}</p>
            <p class="outcome-title">
                <span class="icon" aria-hidden="true">{tone.icon()}</span>
                <strong>{headline}</strong>
            </p>
            <p class="outcome-body">{body}</p>
            <p class="compare-download">{download}</p>
            <Tables report=Signal::stored(report) nested=nested />
        </article>
    }
}
