//! Generates the `i18n` module from `locales/*.json` at compile time, so a missing or
//! misspelt text key is a build error rather than a blank on the page; and writes the text
//! lookups of the catalogue's values from the catalogue itself (`catalogue_texts.rs`), so a
//! new crash point or outcome needs only its entry in the catalogue and its two locale texts.

use leptos_i18n_build::{Config, ParseOptions, TranslationsInfos};
use outbox_lab::catalog::{
    CommitFate, ConsumerCrash, CrashPoint, Difference, FailureRow, Mistake, Mode, OutcomeId,
    PublisherCrash, Setup, Stage,
};
use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=Cargo.toml");

    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("cargo did not set OUT_DIR")?);
    let i18n_mod_directory = out_dir.join("i18n");

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

    write_catalogue_texts(&out_dir.join("catalogue_texts.rs"))?;
    Ok(())
}

/// One generated lookup: `fn name(l: Locale, v: Type) -> shape`, one match arm per variant,
/// each key written from a template where `{id}` is the variant's catalogue id.
struct Lookup {
    doc: &'static str,
    name: &'static str,
    ty: &'static str,
    variants: &'static [&'static str],
    ids: Vec<&'static str>,
    keys: &'static [&'static str],
    shape: Shape,
}

/// What a lookup returns: one text, a pair, or an array of texts.
#[derive(Clone, Copy)]
enum Shape {
    One,
    Pair,
    Array,
}

fn ids<T: Copy>(all: &[T], id: fn(T) -> &'static str) -> Vec<&'static str> {
    all.iter().map(|&v| id(v)).collect()
}

fn lookups() -> Vec<Lookup> {
    use Shape::*;
    let one = |doc, name, ty, variants, ids, keys| Lookup {
        doc,
        name,
        ty,
        variants,
        ids,
        keys,
        shape: One,
    };
    vec![
        one(
            "A crash point's name.",
            "crash_label",
            "CrashPoint",
            CrashPoint::VARIANTS,
            ids(CrashPoint::ALL, CrashPoint::id),
            &["crash.{id}.label"],
        ),
        one(
            "What a crash point means.",
            "crash_hint",
            "CrashPoint",
            CrashPoint::VARIANTS,
            ids(CrashPoint::ALL, CrashPoint::id),
            &["crash.{id}.hint"],
        ),
        Lookup {
            doc: "A publisher crash point: its mark on the after-COMMIT strip, and its label.",
            name: "publisher_crash_text",
            ty: "PublisherCrash",
            variants: PublisherCrash::VARIANTS,
            ids: ids(PublisherCrash::ALL, PublisherCrash::id),
            keys: &[
                "after.publisher_crash.{id}.mark",
                "after.publisher_crash.{id}.label",
            ],
            shape: Pair,
        },
        Lookup {
            doc: "A consumer crash point: its mark on the after-COMMIT strip, and its label.",
            name: "consumer_crash_text",
            ty: "ConsumerCrash",
            variants: ConsumerCrash::VARIANTS,
            ids: ids(ConsumerCrash::ALL, ConsumerCrash::id),
            keys: &[
                "after.consumer_crash.{id}.mark",
                "after.consumer_crash.{id}.label",
            ],
            shape: Pair,
        },
        Lookup {
            doc: "Title and explanation of an outcome.",
            name: "outcome_text",
            ty: "OutcomeId",
            variants: OutcomeId::VARIANTS,
            ids: ids(OutcomeId::ALL, OutcomeId::id),
            keys: &["outcome.{id}.title", "outcome.{id}.body"],
            shape: Pair,
        },
        Lookup {
            doc: "The four cells of a failure-table row: point, tickets, outbox, Kafka/History.",
            name: "failure_row",
            ty: "FailureRow",
            variants: FailureRow::VARIANTS,
            ids: ids(FailureRow::ALL, FailureRow::id),
            keys: &[
                "failures.{id}.point",
                "failures.{id}.tickets",
                "failures.{id}.outbox",
                "failures.{id}.kafka",
            ],
            shape: Array,
        },
        one(
            "A place on the after-COMMIT strip.",
            "stage_name",
            "Stage",
            Stage::VARIANTS,
            ids(Stage::ALL, Stage::id),
            &["after.step_{id}"],
        ),
        one(
            "A commit fate's name.",
            "fate_label",
            "CommitFate",
            CommitFate::VARIANTS,
            ids(CommitFate::ALL, CommitFate::id),
            &["fate.{id}.label"],
        ),
        one(
            "What a commit fate means.",
            "fate_hint",
            "CommitFate",
            CommitFate::VARIANTS,
            ids(CommitFate::ALL, CommitFate::id),
            &["fate.{id}.hint"],
        ),
        one(
            "A mode's name.",
            "mode_label",
            "Mode",
            Mode::VARIANTS,
            ids(Mode::ALL, Mode::id),
            &["mode.{id}.label"],
        ),
        one(
            "What a mode means.",
            "mode_hint",
            "Mode",
            Mode::VARIANTS,
            ids(Mode::ALL, Mode::id),
            &["mode.{id}.hint"],
        ),
        one(
            "A mistake's name.",
            "mistake_label",
            "Mistake",
            Mistake::VARIANTS,
            ids(Mistake::ALL, Mistake::id),
            &["mistake.{id}.label"],
        ),
        one(
            "What a mistake does.",
            "mistake_hint",
            "Mistake",
            Mistake::VARIANTS,
            ids(Mistake::ALL, Mistake::id),
            &["mistake.{id}.hint"],
        ),
        one(
            "How two runs differ, in words.",
            "difference",
            "Difference",
            Difference::VARIANTS,
            ids(Difference::ALL, Difference::id),
            &["compare.difference.{id}"],
        ),
        one(
            "The tables a comparison starts from.",
            "setup",
            "Setup",
            Setup::VARIANTS,
            ids(Setup::ALL, Setup::id),
            &["compare.setup.{id}"],
        ),
    ]
}

/// Writes every lookup as an exhaustive match; `td_string!` then checks each key against
/// the locale files when the app compiles.
fn write_catalogue_texts(path: &Path) -> Result<(), Box<dyn Error>> {
    let mut out = String::from(
        "// Generated by app/build.rs from the catalogue (outbox_lab::catalog); do not edit.\n",
    );
    for f in lookups() {
        if f.variants.len() != f.ids.len() {
            return Err(format!("{}: variants and ids differ in length", f.ty).into());
        }
        let ret = match f.shape {
            Shape::One => "&'static str".to_owned(),
            Shape::Pair => "(&'static str, &'static str)".to_owned(),
            Shape::Array => format!("[&'static str; {}]", f.keys.len()),
        };
        writeln!(out, "\n/// {}", f.doc)?;
        writeln!(out, "pub fn {}(l: Locale, v: {}) -> {ret} {{", f.name, f.ty)?;
        writeln!(out, "    match v {{")?;
        for (variant, id) in f.variants.iter().zip(&f.ids) {
            let texts: Vec<String> = f
                .keys
                .iter()
                .map(|k| format!("td_string!(l, {})", k.replace("{id}", id)))
                .collect();
            let value = match f.shape {
                Shape::One => texts.join(""),
                Shape::Pair => format!("({})", texts.join(", ")),
                Shape::Array => format!("[{}]", texts.join(", ")),
            };
            writeln!(out, "        {}::{variant} => {value},", f.ty)?;
        }
        writeln!(out, "    }}\n}}")?;
    }
    std::fs::write(path, out)?;
    Ok(())
}
