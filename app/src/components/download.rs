//! "Download as psql": plain links to `/api/export` beside a result, one per session the run
//! used (no JavaScript needed; the browser saves the file the server names). Inside an embed
//! each link carries the frame's token, which names the frame's sandbox.

use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::catalog::ActionKind;
use outbox_lab::report::Report;

use crate::i18n::*;
use crate::links::ActionOrigin;

const EXPORT_URL: &str = "/api/export";

/// The links for `report`; `side` names a comparison's side (`outbox` or `wrong`).
pub fn download_links(
    l: Locale,
    report: &Report,
    side: Option<&'static str>,
) -> impl IntoView + use<> {
    let run = report.action != ActionKind::Snapshot && !report.trace.is_empty();
    let origin = use_context::<ActionOrigin>().unwrap_or_default();
    let sessions = if run { sessions(report) } else { Vec::new() };
    let href = move |session: &str| {
        let mut url = origin.action_url(EXPORT_URL);
        let mut params = Vec::new();
        if session != "a" {
            params.push(format!("session={session}"));
        }
        if let Some(side) = side {
            params.push(format!("side={side}"));
        }
        for p in params {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(&p);
        }
        url
    };
    let hint = td_string!(l, export.hint);
    let others: Vec<_> = sessions
        .iter()
        .skip(1)
        .map(|&s| {
            let label = td_string!(l, export.session, session = s.to_uppercase()).to_string();
            view! {
                " · "
                <a href=href(s) download data-export-session=s title=hint>
                    {label}
                </a>
            }
        })
        .collect();
    let several = sessions.len() > 1;
    // Inline, so it fits on a line that is already there (the page's height is budgeted).
    (!sessions.is_empty()).then(|| {
        view! {
            <span class="download" data-side=side.unwrap_or("last")>
                <a href=href("a") download data-export-session="a" title=hint>
                    {td_string!(l, export.download)}
                    {several.then(|| td_string!(l, export.session_a_suffix))}
                </a>
                {others}
            </span>
        }
    })
}

/// The sessions the run's scripts have ("a", then "b", "c"). Only the server renders results;
/// the browser build has no exporter and never needs one.
fn sessions(report: &Report) -> Vec<&'static str> {
    #[cfg(feature = "ssr")]
    {
        match outbox_lab::export::export(report, None) {
            Ok(e) => e.sessions().into_iter().map(|s| s.id()).collect(),
            Err(e) => {
                tracing::warn!(error = %e, "a report that cannot be exported: no download link");
                Vec::new()
            }
        }
    }
    #[cfg(not(feature = "ssr"))]
    {
        let _ = report;
        vec!["a"]
    }
}
