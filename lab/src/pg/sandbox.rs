//! Learner sandboxes: claim one from the warm pool, find one by token, keep the pool topped
//! up, and reap idle ones. All coordination goes through PostgreSQL (SKIP LOCKED, advisory
//! locks), so any number of server processes can share one database.

use sqlx::PgPool;
use sqlx::types::Json;

use crate::report::{CompareReport, Report};

use super::error::LabError;
use super::names::{SandboxToken, SchemaName};

/// The advisory lock key that lets one process at a time top up the warm pool.
const REFILL_LOCK: i64 = 0x6f75_7462_6f78_0001;

/// Who may get how many new sandboxes, and when an idle one is handed on.
#[derive(Clone, Copy, Debug)]
pub struct ClaimPolicy {
    pub max_sandboxes: u32,
    /// New sandboxes per client address: a burst, then a steady rate.
    pub per_client: RateLimit,
    /// With no room left, a learner's sandbox idle this long may go to a newcomer.
    pub recycle_after: std::time::Duration,
}

/// Hands a sandbox to a new learner under `token`: a warm one if any, else one stamped now,
/// else (at the maximum) the least recently used idle one, reset. `client` is the address
/// whose budget pays for it; `None` for the playground's own claims (a comparison's pair).
pub async fn claim(
    pool: &PgPool,
    token: SandboxToken,
    client: Option<&str>,
    policy: &ClaimPolicy,
) -> Result<(SandboxToken, SchemaName), LabError> {
    if let Some(client) = client {
        let spent: bool = sqlx::query_scalar("SELECT lab.spend_claim($1, $2, $3)")
            .bind(client)
            .bind(policy.per_client.per_second)
            .bind(policy.per_client.burst)
            .fetch_one(pool)
            .await
            .map_err(LabError::from_sqlx)?;
        if !spent {
            return Err(LabError::SandboxRateLimited);
        }
    }
    match claim_spent(pool, &token, policy).await {
        // Two first actions under the same new token at once: the other one claimed it.
        Err(LabError::Database(e)) if super::error::sqlstate(&e).as_deref() == Some("23505") => {
            match claimed_by(pool, &token).await? {
                Some(name) => Ok((token, name)),
                None => Err(LabError::Database(e)),
            }
        }
        claimed => claimed,
    }
}

/// The sandbox `token` holds, without spending its request budget.
pub async fn claimed_by(
    pool: &PgPool,
    token: &SandboxToken,
) -> Result<Option<SchemaName>, LabError> {
    let name: Option<String> = sqlx::query_scalar(
        "SELECT schema_name FROM lab.sandboxes WHERE token_hash = sha256(decode($1, 'hex'))",
    )
    .bind(token.as_str())
    .fetch_optional(pool)
    .await
    .map_err(LabError::from_sqlx)?;
    Ok(name.as_deref().and_then(SchemaName::parse))
}

/// [`claim`] once the client has paid: a warm sandbox, a recycled one, or a new one.
async fn claim_spent(
    pool: &PgPool,
    token: &SandboxToken,
    policy: &ClaimPolicy,
) -> Result<(SandboxToken, SchemaName), LabError> {
    let token = token.clone();
    let warm: Option<String> =
        sqlx::query_scalar("SELECT lab.claim_sandbox(sha256(decode($1, 'hex')))")
            .bind(token.as_str())
            .fetch_one(pool)
            .await
            .map_err(LabError::from_sqlx)?;
    if let Some(name) = warm.as_deref().and_then(SchemaName::parse) {
        return Ok((token, name));
    }
    if !has_room(pool, policy.max_sandboxes).await? {
        return match recycle(pool, &token, policy.recycle_after).await? {
            Some(name) => Ok((token, name)),
            None => Err(LabError::SandboxLimit(policy.max_sandboxes)),
        };
    }
    // Stamp and claim in one transaction: nobody else can see (and claim) it in between.
    let name = SchemaName::generate();
    let mut tx = pool.begin().await.map_err(LabError::from_sqlx)?;
    sqlx::query("SELECT lab.stamp_sandbox($1)")
        .bind(name.as_str())
        .execute(&mut *tx)
        .await
        .map_err(LabError::from_sqlx)?;
    sqlx::query(
        "UPDATE lab.sandboxes SET token_hash = sha256(decode($2, 'hex')), claimed_at = now(), \
         last_used_at = now() WHERE schema_name = $1",
    )
    .bind(name.as_str())
    .bind(token.as_str())
    .execute(&mut *tx)
    .await
    .map_err(LabError::from_sqlx)?;
    tx.commit().await.map_err(LabError::from_sqlx)?;
    Ok((token, name))
}

/// The least recently used idle learner's sandbox, reset and handed to `token`.
async fn recycle(
    pool: &PgPool,
    token: &SandboxToken,
    min_idle: std::time::Duration,
) -> Result<Option<SchemaName>, LabError> {
    let name: Option<String> = sqlx::query_scalar(
        "SELECT lab.recycle_sandbox(sha256(decode($1, 'hex')), make_interval(secs => $2))",
    )
    .bind(token.as_str())
    .bind(min_idle.as_secs_f64())
    .fetch_one(pool)
    .await
    .map_err(LabError::from_sqlx)?;
    if let Some(name) = &name {
        tracing::info!(sandbox = %name, "recycled an idle sandbox for a newcomer");
    }
    Ok(name.as_deref().and_then(SchemaName::parse))
}

/// The learner's sandbox, if the token belongs to one; spends one request from its budget.
pub async fn find(
    conn: &mut sqlx::PgConnection,
    token: &SandboxToken,
    limit: &RateLimit,
) -> Result<Option<SchemaName>, LabError> {
    let (found, allowed): (Option<String>, Option<bool>) = sqlx::query_as(
        "SELECT schema_name, allowed FROM lab.enter_sandbox(sha256(decode($1, 'hex')), $2, $3)",
    )
    .bind(token.as_str())
    .bind(limit.per_second)
    .bind(limit.burst)
    .fetch_one(conn)
    .await
    .map_err(LabError::from_sqlx)?;
    match found.as_deref().and_then(SchemaName::parse) {
        Some(_) if allowed != Some(true) => Err(LabError::RateLimited),
        found => Ok(found),
    }
}

/// How many requests a sandbox may make: `burst` at once, then `per_second`.
#[derive(Clone, Copy, Debug)]
pub struct RateLimit {
    pub per_second: f32,
    pub burst: f32,
}

async fn has_room(pool: &PgPool, max_sandboxes: u32) -> Result<bool, LabError> {
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM lab.sandboxes")
        .fetch_one(pool)
        .await
        .map_err(LabError::from_sqlx)?;
    Ok(count < i64::from(max_sandboxes))
}

/// Stamps warm sandboxes until `target` wait unclaimed (or the maximum is reached).
/// Returns how many it made. Only one process refills at a time.
pub async fn refill(pool: &PgPool, target: usize, max_sandboxes: u32) -> Result<usize, LabError> {
    let mut made = 0;
    loop {
        let mut tx = pool.begin().await.map_err(LabError::from_sqlx)?;
        let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)")
            .bind(REFILL_LOCK)
            .fetch_one(&mut *tx)
            .await
            .map_err(LabError::from_sqlx)?;
        if !locked {
            return Ok(made);
        }
        let (warm, total): (i64, i64) = sqlx::query_as(
            "SELECT count(*) FILTER (WHERE token_hash IS NULL), count(*) FROM lab.sandboxes",
        )
        .fetch_one(&mut *tx)
        .await
        .map_err(LabError::from_sqlx)?;
        if warm >= target as i64 || total >= i64::from(max_sandboxes) {
            return Ok(made);
        }
        sqlx::query("SELECT lab.stamp_sandbox($1)")
            .bind(SchemaName::generate().as_str())
            .execute(&mut *tx)
            .await
            .map_err(LabError::from_sqlx)?;
        tx.commit().await.map_err(LabError::from_sqlx)?;
        made += 1;
    }
}

/// Drops sandboxes unused for longer than `ttl`, a batch at a time; returns how many. Claim
/// budgets untouched as long are forgotten too (they would be full again).
pub async fn reap(pool: &PgPool, ttl: std::time::Duration) -> Result<u64, LabError> {
    const BATCH: i32 = 20;
    sqlx::query("SELECT lab.forget_claim_budgets(make_interval(secs => $1))")
        .bind(ttl.as_secs_f64())
        .execute(pool)
        .await
        .map_err(LabError::from_sqlx)?;
    let mut total = 0u64;
    loop {
        let n: i32 = sqlx::query_scalar("SELECT lab.reap_sandboxes(make_interval(secs => $1), $2)")
            .bind(ttl.as_secs_f64())
            .bind(BATCH)
            .fetch_one(pool)
            .await
            .map_err(LabError::from_sqlx)?;
        total += n as u64;
        if n < BATCH {
            return Ok(total);
        }
    }
}

/// Keeps an action's report (and the attempt to reconcile) with the sandbox, and releases the
/// sandbox's lock, which `conn` holds.
pub async fn leave_action(
    conn: &mut sqlx::PgConnection,
    sandbox: &SchemaName,
    report: &Report,
    pending: Option<&super::pending::PendingAttempt>,
    keep_pending: bool,
    quests: &crate::quest::judge::Marks,
) -> Result<(), LabError> {
    let found = report
        .outcome
        .and_then(crate::progress::Found::of)
        .map(crate::progress::Found::key);
    let predicted = report.prediction.as_ref().map(|p| p.all_right());
    let mut missed: Vec<&str> = report
        .prediction
        .iter()
        .flat_map(|p| p.items.iter().filter_map(|j| j.why.as_deref()))
        .collect();
    // Two items may name one misunderstanding; it counts once per action.
    missed.sort_unstable();
    missed.dedup();
    sqlx::query("SELECT lab.leave_action($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)")
        .bind(sandbox.as_str())
        .bind(Json(report))
        .bind(pending.map(Json))
        .bind(keep_pending)
        .bind(found.map(|(kind, _)| kind))
        .bind(found.map(|(_, id)| id))
        .bind(predicted)
        .bind(&quests.ids)
        .bind(&quests.met)
        .bind(&quests.stages)
        .bind(&quests.tries_to)
        .bind(&missed)
        .execute(conn)
        .await
        .map_err(LabError::from_sqlx)?;
    Ok(())
}

/// The two sandboxes a learner's comparisons run in, if both still exist.
pub async fn compare_pair(
    pool: &PgPool,
    main: &SchemaName,
) -> Result<Option<(SchemaName, SchemaName)>, LabError> {
    let pair: Option<Option<Vec<String>>> =
        sqlx::query_scalar("SELECT compare_pair FROM lab.sandboxes WHERE schema_name = $1")
            .bind(main.as_str())
            .fetch_optional(pool)
            .await
            .map_err(LabError::from_sqlx)?;
    let Some(pair) = pair else {
        return Err(LabError::SandboxGone(main.to_string()));
    };
    let names: Vec<SchemaName> = pair
        .unwrap_or_default()
        .iter()
        .filter_map(|n| SchemaName::parse(n))
        .collect();
    let Ok([left, right]) = <[SchemaName; 2]>::try_from(names) else {
        return Ok(None);
    };
    // Either may have been reaped while idle; then the learner gets a new pair.
    let alive: i64 =
        sqlx::query_scalar("SELECT count(*) FROM lab.sandboxes WHERE schema_name = ANY($1)")
            .bind(vec![left.to_string(), right.to_string()])
            .fetch_one(pool)
            .await
            .map_err(LabError::from_sqlx)?;
    Ok((alive == 2).then_some((left, right)))
}

pub async fn set_compare_pair(
    pool: &PgPool,
    main: &SchemaName,
    left: &SchemaName,
    right: &SchemaName,
) -> Result<(), LabError> {
    // One statement: the pair is the main's, and the pair's sandboxes know their owner (so
    // they are never recycled for somebody else).
    sqlx::query(
        "WITH pair AS (UPDATE lab.sandboxes SET pair_of = $1 WHERE schema_name IN ($2, $3)) \
         UPDATE lab.sandboxes SET compare_pair = ARRAY[$2, $3] WHERE schema_name = $1",
    )
    .bind(main.as_str())
    .bind(left.as_str())
    .bind(right.as_str())
    .execute(pool)
    .await
    .map_err(LabError::from_sqlx)?;
    Ok(())
}

pub async fn save_compare(
    pool: &PgPool,
    main: &SchemaName,
    report: &CompareReport,
) -> Result<(), LabError> {
    sqlx::query(
        "INSERT INTO lab.sandbox_notes (schema_name, last_compare) VALUES ($1, $2) \
         ON CONFLICT (schema_name) DO UPDATE SET last_compare = excluded.last_compare",
    )
    .bind(main.as_str())
    .bind(Json(report))
    .execute(pool)
    .await
    .map_err(LabError::from_sqlx)?;
    Ok(())
}

/// The last comparison; one saved by an older version that no longer reads counts as none.
pub async fn last_compare(
    pool: &PgPool,
    main: &SchemaName,
) -> Result<Option<CompareReport>, LabError> {
    let saved: Option<Option<Json<serde_json::Value>>> = sqlx::query_scalar(
        "SELECT n.last_compare FROM lab.sandboxes s \
             LEFT JOIN lab.sandbox_notes n USING (schema_name) WHERE s.schema_name = $1",
    )
    .bind(main.as_str())
    .fetch_optional(pool)
    .await
    .map_err(LabError::from_sqlx)?;
    match saved {
        None => Err(LabError::SandboxGone(main.to_string())),
        Some(saved) => Ok(saved.and_then(|Json(v)| serde_json::from_value(v).ok())),
    }
}
