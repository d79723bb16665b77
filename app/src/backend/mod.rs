//! Server-side glue between the server functions and the lab: shared state, the learner's
//! sandbox cookie, and turning lab errors into answers a learner can read.

pub mod cookies;
pub mod errors;
pub mod fields;
pub mod request;
pub mod session;
pub mod state;
