//! The style rules that show the line explaining the chosen mode and crash point, and hide the
//! slots of the other modes, generated from the catalogue: a crash point or a mode added there
//! gets its rules here, with nothing to add to the style sheet. They work without JavaScript
//! (`:has()` on the radio buttons), so they are written into the page with the controls.

use std::fmt::Write;
use std::sync::LazyLock;

use outbox_lab::catalog::{CrashPoint, Mode};

/// `.controls:has(input[name="<field>"][value="<id>"]:checked) <target>`, where `target` may
/// name the id as `{id}`.
fn when_checked(field: &str, id: &str, target: &str) -> String {
    format!(
        ".controls:has(input[name=\"{field}\"][value=\"{id}\"]:checked) {}",
        target.replace("{id}", id)
    )
}

static RULES: LazyLock<String> = LazyLock::new(|| {
    let mut css = String::new();
    let shown: Vec<String> = Mode::ALL
        .iter()
        .map(|m| when_checked("mode", m.id(), ".mode-line[data-for=\"{id}\"]"))
        .chain(
            CrashPoint::ALL
                .iter()
                .map(|c| when_checked("crash", c.id(), ".strip-line[data-for=\"{id}\"]")),
        )
        .collect();
    let _ = write!(css, "{}{{display:block}}", shown.join(","));
    let hidden: Vec<String> = Mode::ALL
        .iter()
        .map(|m| when_checked("mode", m.id(), "[data-in]:not([data-in~=\"{id}\"])"))
        .collect();
    let _ = write!(css, "{}{{display:none}}", hidden.join(","));
    css
});

/// The rules, as the text of a `<style>` element.
pub fn rules() -> &'static str {
    &RULES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_crash_point_and_mode_has_its_rule() {
        for c in CrashPoint::ALL {
            let rule = format!(".strip-line[data-for=\"{}\"]", c.id());
            assert!(rules().contains(&rule), "{rule}");
        }
        for m in Mode::ALL {
            let rule = format!("[data-in]:not([data-in~=\"{}\"])", m.id());
            assert!(rules().contains(&rule), "{rule}");
        }
    }
}
