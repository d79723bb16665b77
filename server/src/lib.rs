//! The playground's HTTP server: configuration, routes, background upkeep.

pub mod config;
pub mod routes;
pub mod upkeep;
