//! The playground's HTTP server: configuration, routes, background upkeep.

// Leptos' typed views nest deeply; the default limit is too small for the page.
#![recursion_limit = "256"]

pub mod author;
pub mod body_limit;
pub mod client_sockets;
pub mod config;
pub mod config_error;
pub mod cross_site;
pub mod embed;
pub mod export;
pub mod form_redirect;
pub mod headers;
pub mod lti;
pub mod routes;
pub mod serve;
pub mod server_state;
pub mod step_socket;
pub mod unknown_fields;
pub mod upkeep;
