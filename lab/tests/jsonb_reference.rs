//! The model takes what a payload becomes as jsonb from PostgreSQL itself (`lab.jsonb_text`,
//! asked as an action takes the sandbox's lock). That function must say exactly what the cast
//! says, and an attempt must end where the model, given that answer, says it does.

mod common;

use common::*;
use outbox_lab::catalog::OutcomeId;
use outbox_lab::input::Payload;
use outbox_lab::pg::Lab;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// Payloads PostgreSQL accepts, each with something the cast changes.
const ACCEPTED: &[&str] = &[
    outbox_lab::catalog::names::PAYLOAD,
    "{}",
    "[]",
    // Whitespace dropped, `", "` and `": "` added.
    "  {\"b\" : [1,2.50 ,-0],\n\t\"a\":null,\"ccc\":true}  ",
    // Keys ordered by length, then bytes; a duplicate key keeps the last value.
    r#"{"bb":1,"a":2,"bb":3,"c":{"z":[],"y":{}}}"#,
    // Escapes decoded to UTF-8 (a surrogate pair to one character), `\/` to `/`; control
    // characters stay escaped.
    r#""\u00e9\ud83d\ude00 \/ \t \u001f \u0008 \"""#,
    // Numbers as numeric prints them: exponents written out, scale kept, -0 is 0.
    "12345678901234567890.123456789",
    "1.0e2",
    "-0",
    "-0.0",
    "-1.0e-5",
    "1E+3",
    "1.5E-3",
    "0.000",
    "1e1001",
    "1e-300",
    "[[[[[[[[[[]]]]]]]]]]",
];

/// Payloads PostgreSQL refuses.
const REFUSED: &[&str] = &[
    "",
    "{",
    "{\"a\":1,}",
    "[1,]",
    "01",
    "1.",
    ".5",
    "+1",
    "NaN",
    "truex",
    r#""\u0000""#,
    r#""\ud800""#,
    "\"a\nb\"",
    "{'a': 1}",
    "{} {}",
    "not json",
    "{\"event_id\": oops",
    // Out of numeric's range: refused by the cast (input validation refuses these earlier).
    "1e131072",
    "0e-16384",
];

async fn lab_text(lab: &Lab, payload: &str) -> Option<String> {
    sqlx::query_scalar("SELECT lab.jsonb_text($1)")
        .bind(payload)
        .fetch_one(lab.pool())
        .await
        .expect("lab.jsonb_text answers")
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_labs_function_gives_exactly_the_casts_text(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let lab = lab(opts).await;
    let deep = format!(
        "{}{}",
        "[".repeat(Payload::MAX_BYTES / 2),
        "]".repeat(Payload::MAX_BYTES / 2)
    );
    for input in ACCEPTED.iter().copied().chain([deep.as_str()]) {
        let cast: String = sqlx::query_scalar("SELECT $1::jsonb::text")
            .bind(input)
            .fetch_one(lab.pool())
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL refuses {input:?}: {e}"));
        assert_eq!(
            lab_text(&lab, input).await.as_ref(),
            Some(&cast),
            "{input:?}"
        );
        // The input check's bound, read off the bytes, is never below the real text.
        assert!(
            Payload::text_bound(input) >= cast.len(),
            "{input:?}: bound {} below {}",
            Payload::text_bound(input),
            cast.len()
        );
    }
    // A few of them spelled out, so that a reader sees what "normalised" means.
    for (input, text) in [
        (r#"{"bb":1,"a":2,"bb":3}"#, r#"{"a": 2, "bb": 3}"#),
        ("1.0e2", "100"),
        ("-0", "0"),
        (r#""\u00e9\/""#, "\"\u{e9}/\""),
    ] {
        assert_eq!(lab_text(&lab, input).await.as_deref(), Some(text));
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_labs_function_is_null_where_the_cast_refuses(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let lab = lab(opts).await;
    for &input in REFUSED {
        let cast: Result<String, _> = sqlx::query_scalar("SELECT $1::jsonb::text")
            .bind(input)
            .fetch_one(lab.pool())
            .await;
        assert!(cast.is_err(), "{input:?}: PostgreSQL accepts it");
        assert_eq!(lab_text(&lab, input).await, None, "{input:?}");
    }
    // A refusal ends only the function's own subtransaction: the transaction around it goes on.
    let mut tx = lab.pool().begin().await.expect("begin");
    let refused: Option<String> = sqlx::query_scalar("SELECT lab.jsonb_text($1)")
        .bind("{not json")
        .fetch_one(&mut *tx)
        .await
        .expect("a refusal is an answer, not an error");
    assert_eq!(refused, None);
    let after: i32 = sqlx::query_scalar("SELECT 1")
        .fetch_one(&mut *tx)
        .await
        .expect("the transaction is still usable");
    assert_eq!(after, 1);
    tx.commit().await.expect("commit");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_payload_the_input_check_lets_through_stays_within_the_text_limit(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let lab = lab(opts).await;
    // As large as the bound allows: numbers written out nearly to the limit.
    for input in ["1e16370", "1e-16370", "[1e8000,1e8000]", "-9.99e16360"] {
        assert!(Payload::parse(input).is_ok(), "{input:?} is refused");
        let text = lab_text(&lab, input).await.expect("PostgreSQL accepts it");
        assert!(text.len() <= Payload::MAX_TEXT_BYTES, "{input:?}");
        assert!(text.len() <= Payload::text_bound(input), "{input:?}");
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn an_invalid_payload_ends_in_invalid_payload_and_the_model_agrees(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    for input in ["{not json", r#""\ud800""#, "[1,]"] {
        let r = lab.attempt(&sb, &with_payload(input)).await.unwrap();
        assert_eq!(r.outcome, Some(OutcomeId::InvalidPayload), "{input:?}");
        assert_eq!(r.matches_model, Some(true), "{input:?}: {r:#?}");
        assert!(r.snapshot.outbox.is_empty());
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_normalised_payload_is_stored_as_postgresql_prints_it_and_the_model_agrees(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let input = r#"{"b": 1, "a": [1.50, 1.0e2, -0], "a": "dup"}"#;
    let r = lab.attempt(&sb, &with_payload(input)).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::Committed));
    assert_eq!(r.matches_model, Some(true), "{r:#?}");
    assert_eq!(r.snapshot.outbox.len(), 1);
    assert_eq!(r.snapshot.outbox[0].payload, r#"{"a": "dup", "b": 1}"#);
    assert_eq!(
        lab_text(&lab, input).await.as_deref(),
        Some(r.snapshot.outbox[0].payload.as_str())
    );
}
