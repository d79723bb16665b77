//! The benchmark behind `scripts/bench.sh`: the lesson's transaction on raw PostgreSQL
//! (pgbench) against the playground over HTTP at the same concurrency, page latency idle and
//! under load, sandbox creation, memory with many idle sandboxes, and the WASM size.
//! It prints a Markdown report and writes it to BENCHMARKS.md.
//!
//! `bench classroom` is the classroom load generator instead (issue 29; see
//! `classroom/mod.rs` and scripts/classroom.sh).

mod classroom;
mod cost;
mod http_load;
mod pgbench;
mod profile;
mod sandboxes;
mod stats;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Context, Result};
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, Executor, PgConnection};

use http_load::Client;
use stats::Summary;

/// Everything the script hands over, from the environment.
struct Settings {
    url: String,
    server_pid: u32,
    pg_server: String,
    app_database: String,
    pgbench: PathBuf,
    seconds: u64,
    clients: Vec<usize>,
    idle_sandboxes: usize,
    context: String,
    wasm: String,
    out: PathBuf,
    server_bin: PathBuf,
}

fn env(name: &str) -> Result<String> {
    std::env::var(name).with_context(|| format!("{name} is not set (run scripts/bench.sh)"))
}

impl Settings {
    fn from_env() -> Result<Settings> {
        let clients = env("BENCH_CLIENTS")
            .unwrap_or_else(|_| "1,8,32".into())
            .split(',')
            .map(|c| c.trim().parse())
            .collect::<Result<Vec<usize>, _>>()
            .context("BENCH_CLIENTS must be numbers separated by commas")?;
        Ok(Settings {
            url: env("BENCH_URL")?,
            server_pid: env("BENCH_SERVER_PID")?.parse()?,
            pg_server: env("BENCH_PG_SERVER_URL")?,
            app_database: env("BENCH_APP_DATABASE_URL")?,
            pgbench: env("BENCH_PGBENCH")?.into(),
            seconds: env("BENCH_SECONDS")
                .unwrap_or_else(|_| "10".into())
                .parse()?,
            clients,
            idle_sandboxes: env("BENCH_IDLE_SANDBOXES")
                .unwrap_or_else(|_| "10000".into())
                .parse()?,
            context: env("BENCH_CONTEXT").unwrap_or_default(),
            wasm: env("BENCH_WASM").unwrap_or_else(|_| "not measured".into()),
            out: env("BENCH_OUT")
                .unwrap_or_else(|_| "BENCHMARKS.md".into())
                .into(),
            server_bin: env("BENCH_SERVER_BIN")
                .unwrap_or_else(|_| "target/release/server".into())
                .into(),
        })
    }
}

struct Row {
    clients: usize,
    pg: Summary,
    /// pgbench's cycle plus the tables read after each action (see [`pgbench::Cycle::Floor`]).
    floor: Summary,
    cycles: Summary,
    attempts: Summary,
}

#[tokio::main]
async fn main() -> Result<()> {
    // No argument keeps what scripts/bench.sh has always run.
    match std::env::args().nth(1).as_deref() {
        None => benchmark().await,
        Some("classroom") => classroom::main().await,
        Some("profile") => profile_only().await,
        Some("cost") => cost_only().await,
        Some(other) => anyhow::bail!(
            "unknown subcommand {other:?}: use `bench`, `bench classroom`, `bench profile` or \
             `bench cost`"
        ),
    }
}

/// `bench cost`: only what one action costs PostgreSQL (BENCH_SERVER_BIN,
/// BENCH_PG_SERVER_URL, BENCH_PGBENCH), printed as the report's table.
async fn cost_only() -> Result<()> {
    let pg_server_url = env("BENCH_PG_SERVER_URL")?;
    let pg_server = PgConnectOptions::from_str(&pg_server_url)?;
    let pgbench = pgbench::PgBench {
        binary: env("BENCH_PGBENCH")?.into(),
        server: pg_server.clone(),
        database: "outbox_bench_raw".into(),
        work_dir: std::env::temp_dir().join("outbox-bench"),
    };
    pgbench.prepare(1).await?;
    let database = "outbox_bench_cost";
    let costs = cost::measure(
        &cost::CostServer {
            binary: env("BENCH_SERVER_BIN")
                .unwrap_or_else(|_| "target/release/server".into())
                .into(),
            pg_server: pg_server.clone(),
            pg_server_url,
            database: database.into(),
        },
        &pgbench,
    )
    .await?;
    drop_database(&pg_server, database).await?;
    drop_database(&pg_server, &pgbench.database).await?;
    println!("{}", cost_table(&costs));
    Ok(())
}

/// `bench profile`: only the server's instructions per action (BENCH_SERVER_BIN,
/// BENCH_PG_SERVER_URL), printed as the report's table.
async fn profile_only() -> Result<()> {
    let server_bin = env("BENCH_SERVER_BIN").unwrap_or_else(|_| "target/release/server".into());
    let pg_server = env("BENCH_PG_SERVER_URL")?;
    let database = "outbox_bench_profile";
    let profile = profile::measure(&profile::ProfiledServer {
        binary: server_bin.into(),
        database_url: format!("{}/{database}", pg_server.trim_end_matches('/')),
    })
    .await?;
    drop_database(&PgConnectOptions::from_str(&pg_server)?, database).await?;
    println!("{}", profile_table(&profile));
    Ok(())
}

async fn benchmark() -> Result<()> {
    let s = Settings::from_env()?;
    let duration = Duration::from_secs(s.seconds);
    let max_clients = s.clients.iter().copied().max().unwrap_or(1);
    let pg_server = PgConnectOptions::from_str(&s.pg_server)?;

    eprintln!("pgbench: preparing");
    let pgbench = pgbench::PgBench {
        binary: s.pgbench.clone(),
        server: pg_server.clone(),
        database: "outbox_bench_raw".into(),
        work_dir: std::env::temp_dir().join("outbox-bench"),
    };
    pgbench.prepare(max_clients).await?;

    let client = Client::new(&s.url);
    let mut cookies = Vec::new();
    for _ in 0..max_clients {
        cookies.push(client.new_learner().await?);
    }

    let mut rows = Vec::new();
    for &c in &s.clients {
        eprintln!("{c} clients: pgbench");
        let pg = pgbench.run(pgbench::Cycle::Lesson, c, duration)?.summary();
        eprintln!("{c} clients: pgbench with the reads (the floor)");
        let floor = pgbench.run(pgbench::Cycle::Floor, c, duration)?.summary();
        eprintln!("{c} learners: playground");
        let mut load = http_load::learners(&client, &cookies[..c], duration).await?;
        rows.push(Row {
            clients: c,
            pg,
            floor,
            cycles: load.cycles.summary(),
            attempts: load.attempts.summary(),
        });
    }

    eprintln!("pages: idle, then under load");
    let page_idle = http_load::pages(&client, &cookies[0], duration)
        .await?
        .summary();
    let (page_load, _) = tokio::join!(
        http_load::pages(&client, &cookies[0], duration),
        http_load::learners(&client, &cookies[1..], duration)
    );
    let page_load = page_load?.summary();

    eprintln!("cost per action, through a counting relay");
    let cost_database = "outbox_bench_cost";
    let costs = cost::measure(
        &cost::CostServer {
            binary: s.server_bin.clone(),
            pg_server: pg_server.clone(),
            pg_server_url: s.pg_server.clone(),
            database: cost_database.into(),
        },
        &pgbench,
    )
    .await?;
    drop_database(&pg_server, cost_database).await?;

    eprintln!("the server's instructions per action, under callgrind");
    let profile_database = "outbox_bench_profile";
    let profile = profile::measure(&profile::ProfiledServer {
        binary: s.server_bin.clone(),
        database_url: format!("{}/{profile_database}", s.pg_server.trim_end_matches('/')),
    })
    .await?;
    drop_database(&pg_server, profile_database).await?;

    eprintln!("sandbox creation");
    let scratch = "outbox_bench_sandboxes";
    let scratch_url = format!("{}/{scratch}", s.pg_server.trim_end_matches('/'));
    let rates = sandboxes::creation_rates(&scratch_url, 100).await?;
    drop_database(&pg_server, scratch).await?;
    drop_database(&pg_server, &pgbench.database).await?;

    eprintln!("{} idle sandboxes", s.idle_sandboxes);
    let rss_before = sandboxes::rss_mib(s.server_pid)?;
    sandboxes::make_idle(&s.app_database, s.idle_sandboxes).await?;
    let rss_after = sandboxes::rss_mib(s.server_pid)?;
    let mut after = http_load::learners(&client, &cookies[..1], duration).await?;
    let attempt_after = after.attempts.summary();

    let report = render(
        &s,
        &rows,
        (page_idle, page_load),
        rates,
        (rss_before, rss_after),
        attempt_after,
        (&costs, &profile),
    );
    println!("{report}");
    std::fs::write(&s.out, report).with_context(|| format!("writing {}", s.out.display()))?;
    Ok(())
}

async fn drop_database(server: &PgConnectOptions, name: &str) -> Result<()> {
    let mut admin = PgConnection::connect_with(&server.clone().database("postgres")).await?;
    // Our own constant names only.
    admin
        .execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str())
        .await?;
    Ok(())
}

/// Why a playground cycle costs more than pgbench's, whatever the numbers of a run.
const WHERE_THE_TIME_GOES: &str = "## Where the time goes\n\n\
pgbench sends six prepared statements per cycle on one connection and reads nothing back. \
Around the same transaction, a playground action also: looks up the sandbox by the cookie's \
token and spends one request from its budget (a small write, committed without waiting for the \
WAL flush); takes the sandbox's advisory lock and gets the tables in one statement (the copy the \
last action kept while it is current, else a read); runs the lesson's BEGIN, search_path, \
UPDATE, INSERT and COMMIT on the session that holds that lock; reads the tables after it; keeps \
the report (an unlogged table, no WAL) and lets the lock go in one statement; and sqlx tests \
each pooled connection with a round trip when it goes back to the pool (the sandbox lookup's \
and the lock's). A reset puts back only the tables that changed. Each answer is a full report in JSON (tables before and after, the \
trace, the model's verdict) over HTTP. On this two-core machine PostgreSQL, the server and the \
load generator share the cores, so the extra work shows directly in throughput.\n\n";

fn cost_table(c: &cost::Costs) -> String {
    let cycle = cost::Cost {
        round_trips: c.attempt.round_trips + c.reset.round_trips,
        wal_bytes: c.attempt.wal_bytes + c.reset.wal_bytes,
    };
    let mut md = String::from(
        "## What one action costs PostgreSQL\n\n\
         Measured on a second server connected through a relay that counts PostgreSQL's \
         ReadyForQuery messages (one per round trip, pool checks included), with no warm pool \
         and one learner, averaged over 50 actions of each kind; WAL bytes from \
         `pg_current_wal_insert_lsn()` before and after each action. pgbench's cycle is \
         measured through the same relay.\n\n\
         | | round trips | WAL bytes |\n|---|---:|---:|\n",
    );
    for (name, cost) in [
        ("playground attempt (crash `none`)", c.attempt),
        ("playground reset", c.reset),
        ("playground cycle (attempt + reset)", cycle),
        (
            "pgbench cycle (the same transaction, then the ticket put back)",
            c.pgbench_cycle,
        ),
    ] {
        let _ = writeln!(
            md,
            "| {name} | {:.1} | {:.0} |",
            cost.round_trips, cost.wal_bytes
        );
    }
    md.push_str(
        "\nPostgreSQL's time for the playground's heaviest statements, each run alone by pgbench \
         on one connection for 3 s (prepared; the per-sandbox SQL inside is still planned on \
         every call, because each sandbox is a schema of its own):\n\n\
         | statement | mean ms |\n|---|---:|\n",
    );
    for (name, ms) in &c.statements {
        let _ = writeln!(md, "| {name} | {ms:.3} |");
    }
    md.push_str(
        "\nThe round trips by what each one ran (the relay names each by the statement the \
         client executed before its Sync; `prepare:` is a statement parsed into a connection's \
         cache), per action:\n\n| action | statement | round trips |\n|---|---|---:|\n",
    );
    for (action, rows) in [("attempt", &c.attempt_by), ("reset", &c.reset_by)] {
        for (statement, n) in rows {
            let statement = statement.replace('|', "\\|").replace('`', "'");
            let _ = writeln!(md, "| {action} | `{statement}` | {n:.2} |");
        }
    }
    md.push('\n');
    md
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "**missed**" }
}

fn render(
    s: &Settings,
    rows: &[Row],
    (page_idle, page_load): (Summary, Summary),
    (stamped, warm): (f64, f64),
    (rss_before, rss_after): (f64, f64),
    attempt_after: Summary,
    (costs, profile): (&cost::Costs, &profile::Profile),
) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Benchmarks\n\n{}\n", s.context.trim());
    let _ = writeln!(
        md,
        "Each step runs {} s. A **cycle** is one learner's attempt plus the reset before the next \
         one. pgbench runs the lesson's transaction (BEGIN, guarded UPDATE, INSERT into the outbox, \
         COMMIT) and then puts its own ticket back (DELETE the outbox rows, UPDATE to open), one \
         ticket per client, on the same PostgreSQL. The playground's learners each have their \
         own sandbox and do `POST /api/attempt` (crash `none`) then `POST /api/reset` over \
         HTTP/1.1 keep-alive. Latencies are per cycle, nearest-rank percentiles.\n\n\
         The **floor** is pgbench's cycle plus, after the attempt and after the put-back, one \
         read of every table the page shows, as JSON, the way the playground reads them. It is \
         the least SQL a playground can send if it shows the tables as they really are after \
         each action: the tables are shared and keyed by client (one static prepared statement \
         each), and there is no HTTP, no server process, no sandbox lock and no kept report. \
         Every playground cycle holds at least this work, so the floor bounds its ratio on \
         this machine.\n",
        s.seconds
    );
    md.push_str("## The lesson's transaction: raw PostgreSQL against the playground\n\n");
    md.push_str(
        "| clients | pgbench cycles/s | p50 ms | p99 ms | playground cycles/s | p50 ms | p99 ms \
         | attempt alone p50 / p99 ms | ratio (cycles/s) | p99 ÷ pgbench p99 | errors \
         | floor cycles/s | floor p99 ms | floor ratio |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {:.0} | {:.2} | {:.2} | {:.0} | {:.2} | {:.2} | {:.2} / {:.2} | {:.2} | {:.1} | {} / {} | {:.0} | {:.2} | {:.2} |",
            r.clients,
            r.pg.per_second,
            r.pg.p50_ms,
            r.pg.p99_ms,
            r.cycles.per_second,
            r.cycles.p50_ms,
            r.cycles.p99_ms,
            r.attempts.p50_ms,
            r.attempts.p99_ms,
            r.cycles.per_second / r.pg.per_second,
            r.cycles.p99_ms / r.pg.p99_ms,
            r.pg.errors,
            r.cycles.errors,
            r.floor.per_second,
            r.floor.p99_ms,
            r.floor.per_second / r.pg.per_second,
        );
    }
    let _ = writeln!(
        md,
        "\n## The page (server-side rendering)\n\n| | pages/s | p50 ms | p99 ms |\n|---|---:|---:|---:|\n\
         | idle | {:.0} | {:.2} | {:.2} |\n| under load ({} learners) | {:.0} | {:.2} | {:.2} |\n",
        page_idle.per_second,
        page_idle.p50_ms,
        page_idle.p99_ms,
        rows.last().map_or(0, |r| r.clients).saturating_sub(1),
        page_load.per_second,
        page_load.p50_ms,
        page_load.p99_ms,
    );
    let _ = writeln!(
        md,
        "## Sandboxes\n\n| | value |\n|---|---:|\n| created on demand (stamped from the template) | {stamped:.0} /s |\n\
         | handed out from the warm pool | {warm:.0} /s |\n| server RSS before | {rss_before:.1} MiB |\n\
         | server RSS with {} more idle sandboxes | {rss_after:.1} MiB |\n\
         | one learner's attempt with them, p50 / p99 | {:.2} / {:.2} ms |\n\n\
         ## WASM\n\n{}\n",
        s.idle_sandboxes, attempt_after.p50_ms, attempt_after.p99_ms, s.wasm
    );
    md.push_str(&cost_table(costs));
    md.push_str(&profile_table(profile));
    md.push_str(WHERE_THE_TIME_GOES);
    md.push_str("## Targets\n\n");
    if let Some(top) = rows.iter().max_by_key(|r| r.clients) {
        let ratio = top.cycles.per_second / top.pg.per_second;
        let p99 = top.cycles.p99_ms / top.pg.p99_ms;
        let _ = writeln!(
            md,
            "- ratio ≥ 0.5 at {} learners: {} ({ratio:.2})\n- p99 ≤ 3 × pgbench's p99: {} ({p99:.1} ×)",
            top.clients,
            verdict(ratio >= 0.5),
            verdict(p99 <= 3.0)
        );
        let _ = writeln!(
            md,
            "- the floor at {} clients (pgbench plus the reads, no playground around them): \
             ratio {:.2}, p99 {:.1} × pgbench's; the playground reaches {:.0} % of the floor's \
             cycles/s",
            top.clients,
            top.floor.per_second / top.pg.per_second,
            top.floor.p99_ms / top.pg.p99_ms,
            100.0 * top.cycles.per_second / top.floor.per_second,
        );
    }
    if let Some(one) = rows.iter().find(|r| r.clients == 1) {
        let _ = writeln!(
            md,
            "- attempt latency unchanged with {} idle sandboxes: p50 {:.2} ms before, {:.2} ms after",
            s.idle_sandboxes, one.attempts.p50_ms, attempt_after.p50_ms
        );
    }
    let _ = writeln!(
        md,
        "- server RSS < 200 MB with {} idle sandboxes: {} ({rss_after:.1} MiB)",
        s.idle_sandboxes,
        verdict(rss_after < 200.0)
    );
    md.push_str(&cost_targets(rows, (page_idle, page_load), costs, profile));
    md
}

/// The targets of "cost per action" (round trips, WAL, throughput beside the floor, pages),
/// each met or missed, and for a miss what it would take, from the numbers measured here.
fn cost_targets(
    rows: &[Row],
    (page_idle, page_load): (Summary, Summary),
    c: &cost::Costs,
    profile: &profile::Profile,
) -> String {
    let mut md = String::from("\n### Cost per action\n\n");
    let cycle_trips = c.attempt.round_trips + c.reset.round_trips;
    let cycle_wal = c.attempt.wal_bytes + c.reset.wal_bytes;
    let beyond = |by: &[(String, f64)], lesson: &[&str]| -> String {
        by.iter()
            .filter(|(s, _)| !lesson.iter().any(|l| s.starts_with(l)))
            .map(|(s, n)| format!("`{}` ({n:.1})", s.replace('`', "'")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    const LESSON: [&str; 5] = [
        "BEGIN",
        "SELECT set_config('search_path'",
        "UPDATE tickets",
        "INSERT INTO outbox",
        "COMMIT",
    ];
    for (what, value, limit, by, lesson) in [
        (
            "an attempt",
            c.attempt.round_trips,
            8.0,
            &c.attempt_by,
            &LESSON[..],
        ),
        ("a reset", c.reset.round_trips, 2.0, &c.reset_by, &[][..]),
    ] {
        let _ = write!(
            md,
            "- round trips, {what} ≤ {limit}: {} ({value:.1})",
            verdict(value <= limit)
        );
        if value > limit {
            let _ = write!(
                md,
                "; {:.1} more would have to fold into the others, from: {}",
                value - limit,
                beyond(by, lesson)
            );
        }
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "- round trips, a cycle ≤ 10: {} ({cycle_trips:.1})",
        verdict(cycle_trips <= 10.0)
    );
    let wal_ratio = cycle_wal / c.pgbench_cycle.wal_bytes.max(1.0);
    let _ = writeln!(
        md,
        "- WAL per cycle ≤ 1.1 × pgbench's: {} ({cycle_wal:.0} bytes, {wal_ratio:.2} ×)",
        verdict(wal_ratio <= 1.1)
    );
    if let Some(top) = rows.iter().max_by_key(|r| r.clients) {
        let share = top.cycles.per_second / top.floor.per_second;
        let p99 = top.cycles.p99_ms / top.floor.p99_ms;
        let _ = write!(
            md,
            "- throughput ≥ 0.6 × the floor at {} learners: {} ({share:.2}: {:.0} against {:.0} cycles/s)",
            top.clients,
            verdict(share >= 0.6),
            top.cycles.per_second,
            top.floor.per_second
        );
        if share < 0.6 {
            let _ = write!(
                md,
                "; it would take {:.0} cycles/s, {:.1} × today's, so each cycle's cost on the two \
                 shared cores (server CPU, round trips, PostgreSQL's own work) would have to fall \
                 to {:.0} % of today's",
                0.6 * top.floor.per_second,
                0.6 / share,
                100.0 * share / 0.6
            );
        }
        md.push('\n');
        let _ = writeln!(
            md,
            "- p99 ≤ 2 × the floor's p99 at {} learners: {} ({p99:.1} ×)",
            top.clients,
            verdict(p99 <= 2.0)
        );
    }
    let page_cpu = profile
        .iter()
        .find(|(k, _)| k.starts_with("page view"))
        .map_or(0.0, |(_, m)| *m);
    let _ = write!(
        md,
        "- pages ≥ 1 000/s idle: {} ({:.0}/s",
        verdict(page_idle.per_second >= 1000.0),
        page_idle.per_second
    );
    if page_idle.per_second < 1000.0 && page_cpu > 0.0 {
        let _ = write!(
            md,
            "; a page costs the server {page_cpu:.2} M instructions: 1 000/s on one core would \
             need about {:.1} M or less, and the load generator shares the cores",
            page_cpu * page_idle.per_second / 1000.0
        );
    }
    md.push_str(")\n");
    let third = page_load.per_second >= page_idle.per_second.max(1000.0) / 3.0;
    let _ = writeln!(
        md,
        "- pages under load ≥ a third of 1 000/s with p99 ≤ 50 ms: {} ({:.0}/s, p99 {:.1} ms)",
        verdict(third && page_load.p99_ms <= 50.0),
        page_load.per_second,
        page_load.p99_ms
    );
    md
}

fn profile_table(profile: &profile::Profile) -> String {
    let mut md = String::from(
        "## The server's CPU per action\n\n\
         The release server under callgrind (`valgrind --tool=callgrind`): for each kind, the \
         counters are zeroed, one learner runs it 20 times in a row (an attempt's resets between \
         are not counted) and the counts are dumped. Instructions, unlike timings, do not depend \
         on what else the two cores are doing. Every thread of the server counts (HTTP, the \
         page's rendering, JSON, the pool, the model).\n\n\
         | action | M instructions |\n|---|---:|\n",
    );
    for (kind, millions) in profile {
        let _ = writeln!(md, "| {kind} | {millions:.2} |");
    }
    md.push('\n');
    md
}
