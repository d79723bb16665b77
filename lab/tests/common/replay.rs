//! Replays exported psql scripts for real: a fresh database, one `psql` process per session,
//! each fed its steps through stdin in the order the scripts number them. A step that says it
//! will wait is sent and the driver waits until PostgreSQL shows that session waiting for a
//! lock; a step that says "kill this psql" gets the process SIGKILLed, and the driver waits
//! until its backend has left `pg_stat_activity`. Then the end tables are read.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use outbox_lab::export::{Exported, SCHEMA, Session};
use outbox_lab::snapshot::Snapshot;
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// How long any one condition may take before the replay fails.
const LIMIT: Duration = Duration::from_secs(20);

/// psql from PATH's usual place or from the PostgreSQL installation.
pub fn psql_path() -> String {
    if std::path::Path::new("/usr/bin/psql").exists() {
        return "/usr/bin/psql".into();
    }
    let mut found: Vec<_> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin/psql"))
        .filter(|p| p.exists())
        .collect();
    found.sort();
    found
        .pop()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "psql".into())
}

#[derive(Debug)]
pub struct Step {
    pub number: usize,
    pub session: Session,
    pub reconnect: bool,
    pub waits: bool,
    pub kill: bool,
    pub text: String,
}

/// The text before the first step, and the steps of one script.
pub fn split(session: Session, script: &str) -> (String, Vec<Step>) {
    let mut head = String::new();
    let mut steps: Vec<Step> = Vec::new();
    for line in script.lines() {
        // A step's header: `-- step N of M (session X…): what to do`.
        let header = line.strip_prefix("-- step ").and_then(|rest| {
            let (n, tail) = rest.split_once(' ')?;
            let number: usize = n.parse().ok()?;
            tail.starts_with("of ").then_some((number, rest))
        });
        if let Some((number, rest)) = header {
            let label = format!("(session {}", session.label());
            assert!(rest.contains(&label), "{line} is in the wrong script");
            steps.push(Step {
                number,
                session,
                reconnect: rest.contains(", a new psql window)"),
                waits: rest.ends_with("run now, it will wait"),
                kill: rest.ends_with("kill this psql now"),
                text: String::new(),
            });
        }
        match steps.last_mut() {
            Some(step) => {
                step.text.push_str(line);
                step.text.push('\n');
            }
            None => {
                head.push_str(line);
                head.push('\n');
            }
        }
    }
    (head, steps)
}

struct Psql {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// Every line psql printed, for a failure's message.
    seen: Vec<String>,
    /// A marker sent after a step that waits, not yet seen.
    owed: Option<String>,
    app: String,
}

impl Psql {
    fn start(db: &PgConnectOptions, database: &str, app: &str) -> Psql {
        let mut child = Command::new(psql_path())
            // `foo` is set so that a `:foo` psql wrongly read as a variable would show.
            .args([
                "-X",
                "-v",
                "ON_ERROR_STOP=0",
                "-v",
                "foo=INTERPOLATED",
                "-h",
            ])
            .arg(db.get_host())
            .arg("-p")
            .arg(db.get_port().to_string())
            .arg("-U")
            .arg(db.get_username())
            .arg("-d")
            .arg(database)
            .env("PGAPPNAME", app)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("psql starts");
        let stdin = child.stdin.take().expect("psql's stdin");
        let (tx, rx) = channel();
        let out = child.stdout.take().expect("psql's stdout");
        let err = child.stderr.take().expect("psql's stderr");
        for reader in [
            Box::new(out) as Box<dyn std::io::Read + Send>,
            Box::new(err) as Box<dyn std::io::Read + Send>,
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(reader).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Psql {
            child,
            stdin,
            lines: rx,
            seen: Vec::new(),
            owed: None,
            app: app.to_owned(),
        }
    }

    fn send(&mut self, text: &str) {
        self.stdin.write_all(text.as_bytes()).expect("psql reads");
        self.stdin.flush().expect("psql reads");
    }

    /// Waits until psql has printed `marker` (it prints it after everything sent before it).
    fn await_line(&mut self, marker: &str) {
        let start = Instant::now();
        loop {
            let left = LIMIT.saturating_sub(start.elapsed());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = line == marker;
                    self.seen.push(line);
                    if done {
                        return;
                    }
                }
                Err(e) => panic!(
                    "{}: no {marker} ({e}); psql said:\n{}",
                    self.app,
                    self.seen.join("\n")
                ),
            }
        }
    }

    fn settle(&mut self) {
        if let Some(marker) = self.owed.take() {
            self.await_line(&marker);
        }
    }
}

/// What a replay printed, per session, and the tables it left.
pub struct Replayed {
    pub snapshot: Snapshot,
    pub output: String,
}

/// Runs `exported` on a fresh database next to the test's own; returns the end tables.
pub async fn replay(opts: &PgConnectOptions, exported: &Exported) -> Replayed {
    let base = opts.get_database().expect("the test database").to_owned();
    // The harness's own names fill PostgreSQL's 63 bytes: a suffix would be cut off.
    let database = format!("replay_{:016x}", {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        base.hash(&mut h);
        h.finish()
    });
    let admin = PgPoolOptions::new()
        .max_connections(2)
        .connect_with(opts.clone())
        .await
        .expect("connect");
    // The name is the test harness's own database name plus a suffix.
    sqlx::query(&format!("DROP DATABASE IF EXISTS \"{database}\""))
        .execute(&admin)
        .await
        .expect("drop");
    sqlx::query(&format!("CREATE DATABASE \"{database}\""))
        .execute(&admin)
        .await
        .expect("create a fresh database");
    let tag = format!("replay-{}", std::process::id());
    let mut steps: Vec<Step> = Vec::new();
    let mut heads: Vec<(Session, String)> = Vec::new();
    for session in exported.sessions() {
        let (head, s) = split(session, exported.script(session).expect("a script"));
        heads.push((session, head));
        steps.extend(s);
    }
    steps.sort_by_key(|s| s.number);
    assert_eq!(
        steps.iter().map(|s| s.number).collect::<Vec<_>>(),
        (1..=steps.len()).collect::<Vec<_>>(),
        "the steps are numbered 1..n across the sessions"
    );
    let mut psqls: Vec<(Session, Psql)> = heads
        .iter()
        .map(|(s, head)| {
            let mut p = Psql::start(opts, &database, &format!("{tag}-{}", s.id()));
            p.send(head);
            (*s, p)
        })
        .collect();
    let watcher = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(opts.clone().database(&database))
        .await
        .expect("connect to the replay's database");
    for step in &steps {
        let at = psqls
            .iter()
            .position(|(s, _)| *s == step.session)
            .expect("a psql per session");
        psqls[at].1.settle();
        if step.reconnect {
            let app = psqls[at].1.app.clone();
            psqls[at].1 = Psql::start(opts, &database, &app);
        }
        let p = &mut psqls[at].1;
        if step.kill {
            p.child.kill().expect("SIGKILL psql");
            let _ = p.child.wait();
            let app = p.app.clone();
            wait_for(
                &watcher,
                "no backend of the killed psql is left",
                &app,
                GONE,
            )
            .await;
            continue;
        }
        let marker = format!("replay-step-{}-done", step.number);
        p.send(&step.text);
        p.send(&format!("\\echo {marker}\n"));
        if step.waits {
            p.owed = Some(marker);
            let app = p.app.clone();
            wait_for(&watcher, "the session waits for a lock", &app, WAITING).await;
        } else {
            p.await_line(&marker);
        }
    }
    let mut output = String::new();
    for (s, mut p) in psqls {
        p.settle();
        drop(p.stdin);
        let _ = p.child.wait();
        output.push_str(&format!(
            "== session {} ==\n{}\n",
            s.label(),
            p.seen.join("\n")
        ));
    }
    let snapshot = super::tables_in(&watcher, SCHEMA)
        .await
        .expect("read the replay's tables");
    watcher.close().await;
    sqlx::query(&format!("DROP DATABASE IF EXISTS \"{database}\""))
        .execute(&admin)
        .await
        .expect("drop the replay's database");
    Replayed { snapshot, output }
}

const GONE: &str = "SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = $1)";
const WAITING: &str = "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = $1 \
     AND wait_event_type = 'Lock' AND cardinality(pg_blocking_pids(pid)) > 0)";

/// Polls `condition` (bounded): PostgreSQL has no notification for a backend's exit or wait.
async fn wait_for(pool: &PgPool, what: &str, app: &str, condition: &str) {
    let start = Instant::now();
    loop {
        let holds: bool = sqlx::query_scalar(condition)
            .bind(app)
            .fetch_one(pool)
            .await
            .expect("ask pg_stat_activity");
        if holds {
            return;
        }
        assert!(start.elapsed() < LIMIT, "{app}: never saw: {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
