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

/// Where a plain form post goes back to: the page it came from (the server function's
/// redirect to the Referer), without the link's presets. Those describe how the page first
/// opened; kept, they would run `autorun` again after every action and put the form back to
/// the link's settings instead of the learner's. The language, the embed's sandbox token and
/// the server function's error stay.
pub fn page_after_action(location: &str) -> String {
    let (rest, fragment) = match location.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (location, None),
    };
    let Some((path, query)) = rest.split_once('?') else {
        return location.to_owned();
    };
    let presets = [
        param::MODE,
        param::MISTAKES,
        param::CRASH,
        param::COMMIT_FATE,
        param::AUTORUN,
    ];
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let key = pair.split_once('=').map_or(*pair, |(k, _)| k);
            !pair.is_empty() && !presets.contains(&key)
        })
        .collect();
    let mut out = path.to_owned();
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

    #[test]
    fn drops_the_presets_and_keeps_the_rest() {
        assert_eq!(
            page_after_action(
                "http://h:3000/embed?mode=naive&crash=after_commit&autorun=1&lang=en&s=abc"
            ),
            "http://h:3000/embed?lang=en&s=abc"
        );
        assert_eq!(
            page_after_action("/?crash=none&mistakes=a,b&commit_fate=applied&__path=x&__err=y"),
            "/?__path=x&__err=y"
        );
    }

    #[test]
    fn leaves_addresses_without_presets_alone() {
        assert_eq!(page_after_action("/"), "/");
        assert_eq!(page_after_action("/?lang=ru"), "/?lang=ru");
        assert_eq!(page_after_action("/?autorun=1#x"), "/#x");
        assert_eq!(
            page_after_action("/?crashed=1&&lang=en"),
            "/?crashed=1&lang=en"
        );
    }
}
