//! Phase 2: the teacher says "now everybody press Attempt". Every learner sends the same
//! request at the same instant, released by one barrier, one kind after another.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Barrier;
use tokio::task::JoinSet;

use super::browser::Jar;
use super::learner::{Action, Classroom, perform};
use super::stepper::Plan;
use super::tally::Tally;

/// Past this a together-action's stragglers are abandoned and counted as broken; each request
/// inside is bounded on its own already, this only stops a stuck task from stopping the run.
const KIND_DEADLINE: Duration = Duration::from_secs(120);

/// The requests the class sends together, each under the name its rows get.
fn kinds() -> Vec<(&'static str, Action)> {
    let post = |kind: &'static str, form: &str| {
        // The row's name starts with the endpoint's.
        let name = kind.split(' ').next().unwrap_or(kind);
        let action = Action::Post {
            kind,
            name,
            form: form.to_owned(),
        };
        (kind, action)
    };
    vec![
        post("attempt", "mode=outbox"),
        post("attempt naive", "mode=naive"),
        post("attempt naive_publish_first", "mode=naive_publish_first"),
        post("attempt insert_outside_tx", "mistakes=insert_outside_tx"),
        post("race", ""),
        post("compare", "way=naive"),
        post("restart", "crash=none"),
        post("consume", "inbox=on"),
        post("publish_race", "skip_locked=on"),
        (
            "step by step",
            Action::Step {
                begin_fields: String::new(),
                plan: Plan::Commit,
            },
        ),
    ]
}

/// Runs every kind with all learners at once; the jars come back (a sandbox cookie may have
/// been replaced on the way).
pub async fn run(class: Arc<Classroom>, jars: &mut [Jar]) -> Tally {
    let mut tally = Tally::default();
    for (name, action) in kinds() {
        eprintln!("together: {name}");
        reset_all(&class, jars, &mut tally).await;
        let barrier = Arc::new(Barrier::new(jars.len()));
        let mut tasks = JoinSet::new();
        for (i, jar) in jars.iter().enumerate() {
            let (class, barrier, mut jar) = (class.clone(), barrier.clone(), jar.clone());
            let action = action.clone();
            tasks.spawn(async move {
                let mut mine = Tally::default();
                // Nothing before the barrier can fail, so every task reaches it.
                barrier.wait().await;
                perform(&class, action, &mut jar, "together: ", &mut mine).await;
                (i, jar, mine)
            });
        }
        let deadline = tokio::time::Instant::now() + KIND_DEADLINE;
        // A learner still waiting then is wedged, whatever the action.
        let kind = format!("together: {name}");
        super::gather(
            &mut tasks,
            jars,
            deadline,
            (&kind, "no end in 120 s"),
            &mut tally,
        )
        .await;
    }
    tally
}

/// Every learner's sandbox back to the start, all at once (not timed as a together-action).
async fn reset_all(class: &Arc<Classroom>, jars: &mut [Jar], tally: &mut Tally) {
    let mut tasks = JoinSet::new();
    for (i, jar) in jars.iter().enumerate() {
        let (class, mut jar) = (class.clone(), jar.clone());
        tasks.spawn(async move {
            let answer = class.client.post("reset", "", &mut jar).await;
            (i, jar, answer)
        });
    }
    while let Some(joined) = tasks.join_next().await {
        if let Ok((i, jar, answer)) = joined {
            jars[i] = jar;
            tally.answer("together: (reset before)", &answer);
        }
    }
}
