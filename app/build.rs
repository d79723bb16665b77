//! Generates the `i18n` module from `locales/*.json` at compile time, so a missing or
//! misspelt text key is a build error rather than a blank on the page.

use leptos_i18n_build::{Config, ParseOptions, TranslationsInfos};
use std::error::Error;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=Cargo.toml");

    let out_dir = std::env::var_os("OUT_DIR").ok_or("cargo did not set OUT_DIR")?;
    let i18n_mod_directory = PathBuf::from(out_dir).join("i18n");

    // Russian first: it is the course's language and the default locale.
    // `interpolate_display` lets server code build interpolated texts as plain strings
    // (error messages in API answers).
    let cfg = Config::new("ru")?
        .add_locale("en")?
        .parse_options(ParseOptions::new().interpolate_display(true));
    let translations = TranslationsInfos::parse(cfg)?;
    translations.emit_diagnostics();
    translations.rerun_if_locales_changed();
    translations.generate_i18n_module(i18n_mod_directory)?;
    Ok(())
}
