//! The page's address as a link carries settings in it, and the address a form post returns to.

use outbox_lab::catalog::{CommitFate, CrashPoint, Mode};

use crate::i18n::Locale;

/// The query parameters that preset the attempt form (`autorun=1` also runs it on load).
pub mod param {
    pub const MODE: &str = "mode";
    pub const MISTAKES: &str = "mistakes";
    pub const CRASH: &str = "crash";
    pub const COMMIT_FATE: &str = "commit_fate";
    pub const AUTORUN: &str = "autorun";
}

/// What a link to the form's settings says.
pub struct Link {
    pub mode: Mode,
    /// Comma-separated mistake ids, as the form's select holds them.
    pub mistakes: String,
    pub crash: CrashPoint,
    pub commit_fate: CommitFate,
    pub autorun: bool,
    pub lang: Locale,
}

/// The query of a link to `link` (`?mode=…&lang=…`). It names only what matters for the
/// settings: mistakes in outbox mode, the commit fate for a lost COMMIT reply.
pub fn query(link: &Link) -> String {
    let mut q = format!("?{}={}", param::MODE, link.mode.id());
    if link.mode == Mode::Outbox && !link.mistakes.is_empty() {
        q.push_str(&format!("&{}={}", param::MISTAKES, link.mistakes));
    }
    q.push_str(&format!("&{}={}", param::CRASH, link.crash.id()));
    if link.crash == CrashPoint::CommitReplyLost {
        q.push_str(&format!(
            "&{}={}",
            param::COMMIT_FATE,
            link.commit_fate.id()
        ));
    }
    if link.autorun {
        q.push_str(&format!("&{}=1", param::AUTORUN));
    }
    q.push_str(&format!(
        "&{}={}",
        crate::locale::LANG_PARAM,
        crate::locale::id(link.lang)
    ));
    q
}

/// Where a form was posted from, as the address it posted to says: an embed's forms post to
/// `/api/…?s=<frame token>&lang=…`, so that the frame's sandbox and language survive a
/// browser that sends no Referer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActionOrigin {
    pub frame_token: Option<String>,
    pub lang: Option<String>,
}

impl ActionOrigin {
    pub fn from_query(query: &str) -> Self {
        let value = |name: &str| {
            query
                .split('&')
                .filter_map(|pair| pair.split_once('='))
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_owned())
                .filter(|v| !v.is_empty())
        };
        ActionOrigin {
            frame_token: value(FRAME_TOKEN),
            lang: value(crate::locale::LANG_PARAM),
        }
    }

    /// The address a form of this page posts to: the server function's, plus the frame's token
    /// and language inside an embed.
    pub fn action_url(&self, server_fn_url: &str) -> String {
        let Some(token) = &self.frame_token else {
            return server_fn_url.to_owned();
        };
        let mut url = format!("{server_fn_url}?{FRAME_TOKEN}={token}");
        if let Some(lang) = &self.lang {
            url.push_str(&format!("&{}={lang}", crate::locale::LANG_PARAM));
        }
        url
    }
}

/// The query parameter of an embed's sandbox token (see the server's session module).
const FRAME_TOKEN: &str = "s";
const EMBED_PATH: &str = "/embed";

/// Where a plain form post goes back to: the page it came from (the server function's
/// redirect to the Referer), without the link's presets. Those describe how the page first
/// opened; kept, they would run `autorun` again after every action and put the form back to
/// the link's settings instead of the learner's. The language, the embed's sandbox token and
/// the server function's error stay. A post from an embed goes back to its frame (its token
/// and language from the address it posted to) even when the Referer was withheld.
pub fn page_after_action(location: &str, from: &ActionOrigin) -> String {
    let (rest, fragment) = match location.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (location, None),
    };
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let presets = [
        param::MODE,
        param::MISTAKES,
        param::CRASH,
        param::COMMIT_FATE,
        param::AUTORUN,
    ];
    let key_of = |pair: &str| pair.split_once('=').map_or(pair, |(k, _)| k).to_owned();
    let mut kept: Vec<String> = query
        .split('&')
        .filter(|pair| !pair.is_empty() && !presets.contains(&key_of(pair).as_str()))
        .map(str::to_owned)
        .collect();
    let mut path = path.to_owned();
    if let Some(token) = &from.frame_token {
        // Scheme and host (if any) stay; the page is the frame's.
        let origin_end = path.find("://").map_or(0, |i| {
            path[i + 3..].find('/').map_or(path.len(), |j| i + 3 + j)
        });
        path.truncate(origin_end);
        path.push_str(EMBED_PATH);
        kept.retain(|pair| key_of(pair) != FRAME_TOKEN);
        kept.insert(0, format!("{FRAME_TOKEN}={token}"));
        let has_lang = kept
            .iter()
            .any(|pair| key_of(pair) == crate::locale::LANG_PARAM);
        if let (Some(lang), false) = (&from.lang, has_lang) {
            kept.insert(1, format!("{}={lang}", crate::locale::LANG_PARAM));
        }
    }
    let mut out = path;
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

/// The replay page of a shared run, in a language when one is given.
pub fn replay_path(id: &str, lang: Option<Locale>) -> String {
    match lang {
        Some(l) => format!(
            "/replay/{id}?{}={}",
            crate::locale::LANG_PARAM,
            crate::locale::id(l)
        ),
        None => format!("/replay/{id}"),
    }
}

/// The embed's query parameter that names a shared run to replay.
pub const REPLAY_PARAM: &str = "replay";

/// A shared run's replay inside an embed's frame.
pub fn embedded_replay_path(id: &str, lang: Locale) -> String {
    format!(
        "{EMBED_PATH}?{REPLAY_PARAM}={id}&{}={}",
        crate::locale::LANG_PARAM,
        crate::locale::id(lang)
    )
}

/// Percent-encodes a query parameter's name or value (everything but unreserved characters).
pub fn encode(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for b in raw.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(b))
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_names_only_the_settings_that_matter() {
        let mut link = Link {
            mode: Mode::Naive,
            mistakes: "unguarded_update".to_owned(),
            crash: CrashPoint::AfterCommit,
            commit_fate: CommitFate::Applied,
            autorun: false,
            lang: Locale::en,
        };
        assert_eq!(query(&link), "?mode=naive&crash=after_commit&lang=en");
        link.mode = Mode::Outbox;
        link.crash = CrashPoint::CommitReplyLost;
        link.autorun = true;
        assert_eq!(
            query(&link),
            "?mode=outbox&mistakes=unguarded_update&crash=commit_reply_lost\
             &commit_fate=applied&autorun=1&lang=en"
        );
    }

    fn main_page(location: &str) -> String {
        page_after_action(location, &ActionOrigin::default())
    }

    #[test]
    fn drops_the_presets_and_keeps_the_rest() {
        assert_eq!(
            main_page("http://h:3000/embed?mode=naive&crash=after_commit&autorun=1&lang=en&s=abc"),
            "http://h:3000/embed?lang=en&s=abc"
        );
        assert_eq!(
            main_page("/?crash=none&mistakes=a,b&commit_fate=applied&__path=x&__err=y"),
            "/?__path=x&__err=y"
        );
    }

    #[test]
    fn leaves_addresses_without_presets_alone() {
        assert_eq!(main_page("/"), "/");
        assert_eq!(main_page("/?lang=ru"), "/?lang=ru");
        assert_eq!(main_page("/?autorun=1#x"), "/#x");
        assert_eq!(main_page("/?crashed=1&&lang=en"), "/?crashed=1&lang=en");
    }

    #[test]
    fn an_embeds_post_goes_back_to_its_frame_without_a_referer() {
        let from = ActionOrigin::from_query("s=abc&lang=en");
        assert_eq!(from.action_url("/api/reset"), "/api/reset?s=abc&lang=en");
        // No Referer: the framework sends the browser to "/" (with the error, if any).
        assert_eq!(page_after_action("/", &from), "/embed?s=abc&lang=en");
        assert_eq!(
            page_after_action("/?__path=x&__err=y", &from),
            "/embed?s=abc&lang=en&__path=x&__err=y"
        );
        // With a Referer the frame's own address stays, presets dropped, token the action's.
        assert_eq!(
            page_after_action(
                "http://h:3000/embed?crash=none&autorun=1&lang=ru&s=abc",
                &from
            ),
            "http://h:3000/embed?s=abc&lang=ru"
        );
        assert_eq!(
            ActionOrigin::default().action_url("/api/reset"),
            "/api/reset"
        );
    }
}
