//! One file per panel of the page.

pub mod actions;
pub mod after_commit;
pub mod choice_rules;
pub mod compare;
pub mod controls;
pub mod download;
pub mod error_line;
pub mod failure_table;
pub mod guarantee;
pub mod header;
pub mod outcome;
// Drawn by the server only: the stepper's socket sends it, the browser never builds it.
#[cfg(feature = "ssr")]
pub mod pause_view;
pub mod prediction;
pub mod quest;
pub mod share;
pub mod stepper;
pub mod strip;
pub mod tables;
pub mod trace;
pub mod view_switch;
