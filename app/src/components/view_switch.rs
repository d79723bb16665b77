//! The page's two views of one sandbox: the ticket function (lesson 8.2) and what happens after
//! its COMMIT (the previews of 8.3 and 8.4). Stacked, the two made one page over 4 000 px tall
//! at 1280 px; switched, each keeps the height of one.
//!
//! Two radio buttons and a `:has()` rule in the CSS (`.for-ticket` / `.for-after-commit`):
//! it switches without JavaScript and without a round trip. The server checks the view the
//! last run belongs to (or the one the link asks for with `?view=`); the page's script keeps
//! the learner's choice across the swaps that follow an action.

use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::report::Report;

use crate::i18n::*;

/// The query parameter that opens the page on a view (`?view=after_commit`).
pub const VIEW_PARAM: &str = "view";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageView {
    Ticket,
    AfterCommit,
}

impl PageView {
    pub const ALL: [PageView; 2] = [PageView::Ticket, PageView::AfterCommit];

    pub fn id(self) -> &'static str {
        match self {
            PageView::Ticket => "ticket",
            PageView::AfterCommit => "after_commit",
        }
    }

    /// The view the page opens on: the one the link asks for, else the one the last run
    /// belongs to. An unknown `?view=` is ignored, as an unknown preset is.
    pub fn chosen(asked: Option<&str>, report: &Report) -> PageView {
        Self::ALL
            .into_iter()
            .find(|v| Some(v.id()) == asked)
            .unwrap_or(if report.after_commit.is_some() {
                PageView::AfterCommit
            } else {
                PageView::Ticket
            })
    }
}

/// The switch itself, above both views.
pub fn view_switch(l: Locale, chosen: PageView) -> impl IntoView {
    let tabs = PageView::ALL
        .into_iter()
        .map(|v| {
            let (name, lesson) = match v {
                PageView::Ticket => (
                    td_string!(l, view.ticket),
                    td_string!(l, view.ticket_lesson),
                ),
                PageView::AfterCommit => (
                    td_string!(l, view.after_commit),
                    td_string!(l, view.after_commit_lesson),
                ),
            };
            view! {
                <label class="view-tab">
                    <input
                        type="radio"
                        name="page_view"
                        value=v.id()
                        id=format!("view-{}", v.id())
                        checked=v == chosen
                    />
                    <span class="view-name">{name}</span>
                    <span class="view-lesson">{lesson}</span>
                </label>
            }
        })
        .collect_view();
    view! {
        <fieldset class="view-switch" data-view-switch>
            <legend class="visually-hidden">{td_string!(l, view.legend)}</legend>
            {tabs}
        </fieldset>
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use outbox_lab::catalog::{ActionKind, PublisherCrash};
    use outbox_lab::report::AfterCommitRun;

    fn report(after_commit: bool) -> Report {
        let mut r = Report::of_snapshot(
            String::new(),
            ActionKind::Restart,
            outbox_lab::model::initial_state(),
        );
        r.after_commit = after_commit.then_some(AfterCommitRun::Publisher {
            crash: PublisherCrash::None,
            sent: vec![],
        });
        r
    }

    #[test]
    fn the_last_run_chooses_the_view_unless_the_link_asks() {
        assert_eq!(PageView::chosen(None, &report(false)), PageView::Ticket);
        assert_eq!(PageView::chosen(None, &report(true)), PageView::AfterCommit);
        assert_eq!(
            PageView::chosen(Some("after_commit"), &report(false)),
            PageView::AfterCommit
        );
        assert_eq!(
            PageView::chosen(Some("ticket"), &report(true)),
            PageView::Ticket
        );
        assert_eq!(
            PageView::chosen(Some("<script>"), &report(true)),
            PageView::AfterCommit
        );
    }

    #[test]
    fn exactly_one_view_is_checked() {
        for chosen in PageView::ALL {
            let html = Owner::new().with(|| view_switch(Locale::ru, chosen).to_html());
            assert_eq!(html.matches("checked").count(), 1, "{html}");
            assert!(
                html.contains(&format!("id=\"view-{}\" checked", chosen.id())),
                "{html}"
            );
        }
    }
}
