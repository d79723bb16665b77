//! The page's small plain-JavaScript layer: it posts the playground's forms in the background
//! and swaps in the server's new rendering. Kept out of the WebAssembly on purpose: the
//! browser would otherwise need every view and the report's decoders (hundreds of kilobytes)
//! just to show HTML the server already renders.

/// Inlined into the page once, after the playground.
pub const SCRIPT: &str = include_str!("enhance.js");

/// The stepper's socket and panel (see `components::stepper`), in the same plain JavaScript.
pub const STEPPER: &str = include_str!("stepper.js");
