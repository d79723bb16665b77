//! `/author?token=…`: what the class got wrong, for the course author. Counts over every
//! sandbox, no personal data; the same as CSV at `/author.csv`. Without a configured token
//! there is no page (404); with a wrong or missing one, a form asks for it.

use leptos::prelude::*;
use leptos_i18n::td_string;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;
use outbox_lab::quest::author::AuthorCounts;

#[component]
pub fn AuthorPage() -> impl IntoView {
    let l = crate::locale::use_locale();
    let token = use_query_map().get_untracked().get("token");
    let body = async move {
        match crate::quest_api::author(token.clone()).await {
            Ok(counts) => view! { <Counts counts token=token.unwrap_or_default() /> }.into_any(),
            Err(err) if err.code == "author_token_wrong" => {
                let note = token.is_some().then(|| {
                    view! { <crate::components::error_line::ErrorNote err /> }
                });
                view! {
                    {note}
                    <form method="get" action="/author" class="author-token">
                        <label for="author-token">{td_string!(l, author.token)}</label>
                        <input id="author-token" name="token" type="password" required
                            autocomplete="current-password" />
                        <button type="submit">{td_string!(l, author.open)}</button>
                    </form>
                }
                .into_any()
            }
            Err(err) => view! { <crate::components::error_line::ErrorNote err /> }.into_any(),
        }
    };
    view! {
        <Title text=td_string!(l, author.title) />
        <meta name="robots" content="noindex" />
        <div class="page">
            <main id="main" class="author-page">
                <h1>{td_string!(l, author.title)}</h1>
                <p class="intro">{td_string!(l, author.intro)}</p>
                {Suspend::new(body)}
            </main>
        </div>
    }
}

#[component]
fn Counts(counts: AuthorCounts, token: String) -> impl IntoView {
    let l = crate::locale::use_locale();
    let csv = format!("/author.csv?token={}", crate::links::encode(&token));
    let list = |v: &[(String, u32)]| {
        v.iter()
            .map(|(id, n)| format!("{id} ({n})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let learners = td_string!(l, author.learners, n = counts.learners).to_string();
    let rows: Vec<_> = counts
        .rows
        .iter()
        .map(|r| {
            view! {
                <tr data-kind=r.kind.clone() data-id=r.id.clone()>
                    <th scope="row"><code>{r.id.clone()}</code></th>
                    <td>{match r.kind.as_str() {
                        "row" => td_string!(l, author.kind_row),
                        "publisher" => td_string!(l, after.step_publisher),
                        "consumer" => td_string!(l, after.step_consumer),
                        _ => td_string!(l, author.kind_wrong),
                    }}</td>
                    <td>{r.explored}</td>
                    <td>{r.predicted}</td>
                    <td>{r.right}</td>
                    <td>{list(&r.misses)}</td>
                </tr>
            }
        })
        .collect();
    let quests: Vec<_> = counts
        .quests
        .iter()
        .map(|q| {
            view! {
                <tr data-quest=q.id.clone()>
                    <th scope="row"><code>{q.id.clone()}</code></th>
                    <td>{q.touched}</td>
                    <td>{q.reached}</td>
                    <td>{q.explained_right}</td>
                    <td>{q.explained_wrong}</td>
                    <td>{q.hints_used}</td>
                    <td>{list(&q.wrong_answers)}</td>
                </tr>
            }
        })
        .collect();
    view! {
        <p>{learners} " · " <a href=csv download="outbox-playground-class.csv">{td_string!(l, author.csv)}</a></p>
        <div class="table-scroll">
            <table class="author-table">
                <caption>{td_string!(l, author.rows_caption)}</caption>
                <thead>
                    <tr>
                        <th scope="col">"id"</th>
                        <th scope="col">{td_string!(l, author.col_kind)}</th>
                        <th scope="col">{td_string!(l, author.col_explored)}</th>
                        <th scope="col">{td_string!(l, author.col_predicted)}</th>
                        <th scope="col">{td_string!(l, author.col_right)}</th>
                        <th scope="col">{td_string!(l, author.col_misses)}</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        <div class="table-scroll">
            <table class="author-table">
                <caption>{td_string!(l, author.quests_caption)}</caption>
                <thead>
                    <tr>
                        <th scope="col">"id"</th>
                        <th scope="col">{td_string!(l, author.col_touched)}</th>
                        <th scope="col">{td_string!(l, author.col_reached)}</th>
                        <th scope="col">{td_string!(l, author.col_explained_right)}</th>
                        <th scope="col">{td_string!(l, author.col_explained_wrong)}</th>
                        <th scope="col">{td_string!(l, author.col_hints)}</th>
                        <th scope="col">{td_string!(l, author.col_wrong_answers)}</th>
                    </tr>
                </thead>
                <tbody>{quests}</tbody>
            </table>
        </div>
    }
}
