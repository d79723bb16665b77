//! The state every handler may need: the page's options, the playground's own state, the
//! frame policy, the stepper's sockets and LTI.

use app::backend::state::AppState;
use axum::extract::FromRef;
use leptos::prelude::LeptosOptions;

use crate::client_sockets::Sockets;
use crate::headers::FrameAncestors;

/// Everything a handler may need.
#[derive(Clone)]
pub struct ServerState {
    pub leptos: LeptosOptions,
    pub app: AppState,
    pub frame_ancestors: FrameAncestors,
    /// The stepper's sockets: caps per client address, and the server's shutdown.
    pub sockets: Sockets,
    /// LTI 1.3 (`PLAYGROUND_LTI_CONFIG`); `None`: the LTI routes answer 404.
    pub lti: crate::lti::Configured,
}

impl FromRef<ServerState> for LeptosOptions {
    fn from_ref(state: &ServerState) -> Self {
        state.leptos.clone()
    }
}
