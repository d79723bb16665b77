//! A crash is a crash: the backend is gone, nothing is left idle in a transaction, the row is
//! not locked, and many crashes leave PostgreSQL as they found it.

mod common;

use common::witness::Witness;
use common::*;
use outbox_lab::catalog::{CommitFate, CrashPoint};
use outbox_lab::sql_trace::Sent;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection, PgConnection};

async fn sessions_idle_in_transaction(conn: &mut PgConnection) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity \
         WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
    )
    .fetch_one(conn)
    .await
    .unwrap()
}

async fn backends_of_this_database(conn: &mut PgConnection) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .fetch_one(conn)
    .await
    .unwrap()
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_crash_mid_transaction_leaves_no_backend_no_open_transaction_and_no_lock(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    let mut observer = PgConnection::connect_with(&opts).await.unwrap();
    for crash in [CrashPoint::AfterUpdate, CrashPoint::AfterInsert] {
        let r = lab.attempt(&sb, &attempt(crash)).await.unwrap();
        let pid = r
            .trace
            .iter()
            .find_map(|s| match s.sent {
                Sent::BackendGone { pid } => Some(pid),
                _ => None,
            })
            .expect("the trace names the dead backend");
        let alive: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)")
                .bind(pid)
                .fetch_one(&mut observer)
                .await
                .unwrap();
        assert!(!alive, "{crash}: backend {pid} is gone");
        assert_eq!(
            sessions_idle_in_transaction(&mut observer).await,
            0,
            "{crash}"
        );
        // NOWAIT fails at once with 55P03 if anyone still holds the row.
        let mut tx = observer.begin().await.unwrap();
        let locked = sqlx::query(&format!(
            "SELECT status FROM {sb}.tickets WHERE id = 'ticket-42' FOR UPDATE NOWAIT"
        ))
        .fetch_one(&mut *tx)
        .await;
        assert!(
            locked.is_ok(),
            "{crash}: ticket-42 is not locked: {locked:?}"
        );
        tx.rollback().await.unwrap();
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn many_crashes_leave_the_pool_and_postgresql_as_they_were(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    let mut observer = PgConnection::connect_with(&opts).await.unwrap();
    // Warm the pool first so that "as they were" compares like with like.
    lab.attempt(&sb, &attempt(CrashPoint::AfterUpdate))
        .await
        .unwrap();
    lab.reset(&sb).await.unwrap();
    let backends_before = backends_of_this_database(&mut observer).await;

    let crashes = [
        attempt(CrashPoint::AfterUpdate),
        attempt(CrashPoint::AfterInsert),
        lost_reply(CommitFate::NotApplied),
        lost_reply(CommitFate::Applied),
    ];
    // The soak command raises this to 5 000.
    let attempts: usize = std::env::var("CRASH_ATTEMPTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    for i in 0..attempts {
        let spec = &crashes[i % crashes.len()];
        lab.attempt(&sb, spec).await.unwrap();
        // Each crash leaves what its outcome says, read with the test's own SELECT.
        let expected = if spec.commit_fate == CommitFate::Applied {
            ("resolved".to_owned(), 1)
        } else {
            ("open".to_owned(), 0)
        };
        assert_eq!(
            plain_read(&mut observer, &sb).await,
            expected,
            "attempt {i}: {}",
            spec.crash
        );
        if spec.commit_fate == CommitFate::Applied {
            lab.reset(&sb).await.unwrap();
        }
    }

    assert!(lab.pool().size() <= lab.config().pool_max);
    // Connections return to the pool in the background (sqlx pings them first).
    let pool = lab.pool().clone();
    let all_back = eventually(std::time::Duration::from_secs(5), || {
        let pool = pool.clone();
        async move { pool.num_idle() == pool.size() as usize }
    })
    .await;
    assert!(all_back, "every pooled connection is back in the pool");
    let backends_after = backends_of_this_database(&mut observer).await;
    assert_eq!(
        backends_after,
        i64::from(lab.open_connections()),
        "no connection outlives its attempt (before: {backends_before})"
    );
    assert_eq!(sessions_idle_in_transaction(&mut observer).await, 0);
    let locks: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
         WHERE a.datname = current_database() AND l.locktype IN ('relation', 'tuple', 'transactionid') \
         AND a.pid <> pg_backend_pid()",
    )
    .fetch_one(&mut observer)
    .await
    .unwrap();
    assert_eq!(locks, 0, "no locks are held");
}

/// The backend of the connection that crashed, as the trace names it.
fn crashed_backend(report: &outbox_lab::report::Report) -> i32 {
    report
        .trace
        .iter()
        .find_map(|s| match s.sent {
            Sent::BackendGone { pid } => Some(pid),
            _ => None,
        })
        .expect("the trace names the dead backend")
}

/// ticket-42's status and the number of outbox rows, read with the test's own SELECTs.
async fn plain_read(conn: &mut PgConnection, sb: &outbox_lab::pg::SchemaName) -> (String, i64) {
    let status = sqlx::query_scalar(&format!(
        "SELECT status FROM {sb}.tickets WHERE id = 'ticket-42'"
    ))
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    let rows = sqlx::query_scalar(&format!("SELECT count(*) FROM {sb}.outbox"))
        .fetch_one(&mut *conn)
        .await
        .unwrap();
    (status, rows)
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_crash_says_nothing_to_postgresql_as_the_wire_shows(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    // Every connection of the lab goes through a relay that writes down what it sent.
    let witness = Witness::start(&opts).await;
    let (lab, sb) = lab_with_sandbox(witness.options(&opts)).await;
    let mut observer = PgConnection::connect_with(&opts).await.unwrap();
    for crash in [CrashPoint::AfterUpdate, CrashPoint::AfterInsert] {
        let r = lab.attempt(&sb, &attempt(crash)).await.unwrap();
        let pid = crashed_backend(&r);
        let wire = witness
            .conversation_of(pid)
            .expect("the crashing connection went through the witness");
        assert!(
            wire.sent_sql_containing("UPDATE"),
            "{crash}: the statements went out"
        );
        assert!(
            !wire.sent_sql_containing("ROLLBACK"),
            "{crash}: a crashed process sends no ROLLBACK: {wire:?}"
        );
        assert!(
            !wire.sent_terminate(),
            "{crash}: a crashed process says no goodbye (Terminate)"
        );
        assert!(wire.client_closed, "{crash}: the client's socket closed");
        // PostgreSQL rolled the open transaction back by itself.
        assert_eq!(
            plain_read(&mut observer, &sb).await,
            ("open".to_owned(), 0),
            "{crash}"
        );
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_lost_reply_meets_both_fates_and_the_wire_agrees_with_pg_xact_status(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let witness = Witness::start(&opts).await;
    let (lab, sb) = lab_with_sandbox(witness.options(&opts)).await;
    let mut observer = PgConnection::connect_with(&opts).await.unwrap();
    let mut fates_seen = [0usize; 2];
    let fates = [CommitFate::Applied, CommitFate::NotApplied]
        .into_iter()
        .chain(std::iter::repeat_n(CommitFate::Random, 40));
    for fate in fates {
        let r = lab.attempt(&sb, &lost_reply(fate)).await.unwrap();
        let pid = crashed_backend(&r);
        // The relay that loses the reply sits between the attempt and the witness: what the
        // witness saw is what reached PostgreSQL.
        let wire = witness
            .conversation_of(pid)
            .expect("the attempt's connection went through the witness");
        let commit_reached_postgres = wire
            .sent
            .iter()
            .any(|(kind, sql)| *kind == b'Q' && sql == "COMMIT");
        let reconciled = lab.reconcile(&sb).await.unwrap();
        let xid = reconciled.reconciliation.expect("a reconciliation").xid;
        let status: Option<String> = sqlx::query_scalar("SELECT pg_xact_status($1::xid8)")
            .bind(&xid)
            .fetch_one(&mut observer)
            .await
            .unwrap();
        let expected = if commit_reached_postgres {
            "committed"
        } else {
            "aborted"
        };
        assert_eq!(status.as_deref(), Some(expected), "{fate}: xid {xid}");
        let tables = plain_read(&mut observer, &sb).await;
        if commit_reached_postgres {
            assert_eq!(tables, ("resolved".to_owned(), 1), "{fate}");
        } else {
            assert_eq!(tables, ("open".to_owned(), 0), "{fate}");
        }
        match fate {
            CommitFate::Applied => assert!(commit_reached_postgres, "applied: COMMIT delivered"),
            CommitFate::NotApplied => assert!(!commit_reached_postgres, "not applied: held back"),
            CommitFate::Random => fates_seen[usize::from(commit_reached_postgres)] += 1,
        }
        lab.reset(&sb).await.unwrap();
    }
    // 40 fair coin flips all alike would happen once in 2^39 runs.
    assert!(
        fates_seen[0] > 0 && fates_seen[1] > 0,
        "a random fate meets both: {fates_seen:?}"
    );
}
