//! The playground's UI: a page and an embed rendered on the server, with the controls hydrated
//! in the browser as an island, plus the server functions the forms post to. Texts come from `locales/*.json` through
//! the generated `i18n` module.

// Leptos' typed views nest deeply; the default limit is too small for the page (its two
// views' panels, each erased with `into_any`, still need more than 256).
#![recursion_limit = "512"]

pub mod api;
pub mod api_error;
pub mod app;
mod components;
mod enhance;
pub mod links;
pub mod locale;
mod pages;
pub mod quest_api;
mod texts;

#[cfg(feature = "ssr")]
pub mod backend;
/// A stepped run's pause, drawn for the stepper's socket.
#[cfg(feature = "ssr")]
pub use components::pause_view;

include!(concat!(env!("OUT_DIR"), "/i18n/mod.rs"));

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // Islands: only the controls are interactive; the rest of the page is server HTML.
    leptos::mount::hydrate_islands();
}
