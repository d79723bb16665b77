//! Stepper sockets and held runs per client address. A classroom behind one NAT shares an
//! address, so the caps are sized for a class; they stop one script from taking every stepped
//! run of the process, not a class from stepping together.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

/// The sockets' shared settings: caps per client address, and the server's shutdown.
#[derive(Clone)]
pub struct Sockets {
    pub clients: Arc<ClientSockets>,
    pub shutdown: watch::Receiver<bool>,
}

impl Sockets {
    /// Sockets with these caps per address; the sender tells them the server shuts down.
    pub fn new(per_client: usize, runs_per_client: usize) -> (Sockets, watch::Sender<bool>) {
        let (tx, rx) = watch::channel(false);
        (
            Sockets {
                clients: ClientSockets::new(per_client, runs_per_client),
                shutdown: rx,
            },
            tx,
        )
    }
}

/// What one address holds now, and what it may hold.
pub struct ClientSockets {
    held: Mutex<HashMap<String, Held>>,
    max_sockets: usize,
    max_runs: usize,
}

#[derive(Default)]
struct Held {
    sockets: usize,
    runs: usize,
}

#[derive(Clone, Copy)]
enum Kind {
    Socket,
    Run,
}

/// One socket or one run of an address; given back when dropped.
pub struct Slot {
    registry: Arc<ClientSockets>,
    client: String,
    kind: Kind,
}

impl ClientSockets {
    pub fn new(max_sockets: usize, max_runs: usize) -> Arc<Self> {
        Arc::new(ClientSockets {
            held: Mutex::new(HashMap::new()),
            max_sockets,
            max_runs,
        })
    }

    /// A socket for `client`, unless it holds as many as it may.
    pub fn socket(self: &Arc<Self>, client: &str) -> Option<Slot> {
        self.take(client, Kind::Socket)
    }

    /// A held run for `client`, unless it holds as many as it may.
    pub fn run(self: &Arc<Self>, client: &str) -> Option<Slot> {
        self.take(client, Kind::Run)
    }

    fn take(self: &Arc<Self>, client: &str, kind: Kind) -> Option<Slot> {
        let mut held = self.lock();
        let entry = held.entry(client.to_owned()).or_default();
        let (count, max) = match kind {
            Kind::Socket => (&mut entry.sockets, self.max_sockets),
            Kind::Run => (&mut entry.runs, self.max_runs),
        };
        if *count >= max {
            return None;
        }
        *count += 1;
        Some(Slot {
            registry: Arc::clone(self),
            client: client.to_owned(),
            kind,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Held>> {
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.registry.lock();
        if let Some(entry) = held.get_mut(&self.client) {
            match self.kind {
                Kind::Socket => entry.sockets = entry.sockets.saturating_sub(1),
                Kind::Run => entry.runs = entry.runs.saturating_sub(1),
            }
            if entry.sockets == 0 && entry.runs == 0 {
                held.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_holds_up_to_its_caps_and_gets_them_back() {
        let registry = ClientSockets::new(2, 1);
        let a = registry.socket("10.0.0.1");
        let b = registry.socket("10.0.0.1");
        assert!(a.is_some() && b.is_some());
        assert!(registry.socket("10.0.0.1").is_none());
        // Another address is counted apart.
        assert!(registry.socket("10.0.0.2").is_some());
        let run = registry.run("10.0.0.1");
        assert!(run.is_some());
        assert!(registry.run("10.0.0.1").is_none());
        drop(a);
        drop(run);
        assert!(registry.socket("10.0.0.1").is_some());
        assert!(registry.run("10.0.0.1").is_some());
    }
}
