//! `bench classroom`: a class of learners uses one server at the same moment (issue 29).
//! Phase 1 is the page's own mix with think time, while hostile clients misbehave beside
//! it; phase 2 has everybody press the same button at once. Then the report: what each
//! kind of action was answered, how fast, and what the class left behind.

mod aftermath;
mod browser;
mod hostile;
mod learner;
mod report;
mod settings;
mod stepper;
mod tally;
mod together;

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::task::JoinSet;
use tokio::time::Instant;

use browser::{Client, Jar};
use learner::Classroom;
use settings::Settings;
use stepper::{Outcome, Run};
use tally::Tally;

/// After phase 1's end, how long a learner's last action may still take before its task is
/// dropped (each request is bounded on its own; this bounds the whole).
const PHASE_GRACE: Duration = Duration::from_secs(60);

pub async fn main() -> Result<()> {
    let s = Settings::from_env()?;
    let client = Client::new(&s.url, &s.origin);
    let class = Arc::new(Classroom {
        client: client.clone(),
        url: s.url.clone(),
        origin: s.origin.clone(),
        think: s.think,
    });

    eprintln!("classroom: {} learners arrive", s.learners);
    let mut mix = Tally::default();
    let mut jars = arrive(&class, s.learners, &mut mix).await;
    let without = jars.iter().filter(|j| j.is_empty()).count();
    if without > 0 {
        // They go on: each action then tries to claim a sandbox, as the page would.
        eprintln!("classroom: {without} learners got no sandbox cookie on arrival");
    }

    eprintln!(
        "classroom: phase 1, the mix, {} s, with hostile clients",
        s.seconds
    );
    let deadline = Instant::now() + Duration::from_secs(s.seconds);
    let target = Arc::new(hostile::Target {
        client: client.clone(),
        url: s.url.clone(),
        origin: s.origin.clone(),
        authority: s.authority.clone(),
    });
    let hostile_run = tokio::spawn(hostile::run_all(target, deadline));
    mix.merge(phase_one(&class, &s, &mut jars, deadline).await);
    let hostile = match hostile_run.await {
        Ok(seen) => seen,
        Err(e) => vec![hostile::Seen {
            client: "(all)".into(),
            saw: format!("the hostile clients' task failed: {e}"),
            wedged: 0,
        }],
    };

    eprintln!("classroom: phase 2, together");
    let together = together::run(class.clone(), &mut jars).await;

    eprintln!("classroom: waiting for the server to settle");
    let after = aftermath::measure(&s.database_url, s.server_pid, &client).await;

    let mut results = report::Results {
        mix,
        together,
        hostile,
        after,
    };
    let md = report::render(&s, &mut results);
    println!("{md}");
    if let Some(out) = &s.out {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(out)
            .with_context(|| format!("opening {}", out.display()))?;
        writeln!(file, "{md}").with_context(|| format!("writing {}", out.display()))?;
    }
    let failures = results.failures();
    if s.assert && !failures.is_empty() {
        bail!("the classroom run failed: {}", failures.join("; "));
    }
    Ok(())
}

/// The class arrives together: each learner's first action (a reset) claims its sandbox.
async fn arrive(class: &Arc<Classroom>, learners: usize, tally: &mut Tally) -> Vec<Jar> {
    let mut tasks = JoinSet::new();
    for i in 0..learners {
        let class = class.clone();
        tasks.spawn(async move {
            let mut jar = Jar::default();
            let answer = class.client.post("reset", "", &mut jar).await;
            (i, jar, answer)
        });
    }
    let mut jars = vec![Jar::default(); learners];
    while let Some(joined) = tasks.join_next().await {
        if let Ok((i, jar, answer)) = joined {
            jars[i] = jar;
            tally.answer("arrive (first reset)", &answer);
        }
    }
    jars
}

async fn phase_one(
    class: &Arc<Classroom>,
    s: &Settings,
    jars: &mut [Jar],
    deadline: Instant,
) -> Tally {
    // Enough for a learner who never thinks and is answered in 5 ms; the deadline ends it first.
    let max_actions = usize::try_from(s.seconds.saturating_mul(200)).unwrap_or(usize::MAX);
    let mut tasks = JoinSet::new();
    for (i, jar) in jars.iter().enumerate() {
        let rng = StdRng::seed_from_u64(s.seed.wrapping_mul(1000).wrapping_add(i as u64));
        let (class, jar) = (class.clone(), jar.clone());
        tasks.spawn(async move {
            let (jar, tally) = learner::mix(class, jar, rng, deadline, max_actions).await;
            (i, jar, tally)
        });
    }
    let mut tally = Tally::default();
    let late = (
        "(a learner's last action)",
        "still busy 60 s after the phase",
    );
    gather(&mut tasks, jars, deadline + PHASE_GRACE, late, &mut tally).await;
    tally
}

/// Collects the learners' tasks until `deadline`: their jars back in place and their tallies
/// merged. A task still running then is aborted and counted under `late` (kind, why) as a
/// broken run: a learner left waiting.
async fn gather(
    tasks: &mut JoinSet<(usize, Jar, Tally)>,
    jars: &mut [Jar],
    deadline: Instant,
    late: (&str, &'static str),
    tally: &mut Tally,
) {
    let mut finished = 0;
    while let Ok(Some(joined)) = tokio::time::timeout_at(deadline, tasks.join_next()).await {
        if let Ok((i, jar, mine)) = joined {
            jars[i] = jar;
            tally.merge(mine);
        }
        finished += 1;
    }
    if finished < jars.len() {
        tasks.abort_all();
        let stuck = Run {
            outcome: Outcome::Broken(late.1),
            replies: Vec::new(),
        };
        for _ in finished..jars.len() {
            tally.run(late.0, &stuck);
        }
    }
}
