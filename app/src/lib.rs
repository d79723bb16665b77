//! The playground's UI: one page (and later an embed) rendered on the server and hydrated in
//! the browser, plus the server functions it calls. Texts come from `locales/*.json` through
//! the generated `i18n` module.

// Leptos' typed views nest deeply; the default limit is too small for the page.
#![recursion_limit = "256"]

pub mod api;
pub mod app;
mod components;
pub mod links;
pub mod locale;
mod pages;
mod texts;

#[cfg(feature = "ssr")]
pub mod backend;

include!(concat!(env!("OUT_DIR"), "/i18n/mod.rs"));

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
