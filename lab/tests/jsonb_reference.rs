//! The model's jsonb reference must agree with PostgreSQL itself, input by input.

use outbox_lab::catalog::names;
use outbox_lab::jsonb::to_jsonb_text;
use sqlx::PgPool;

const CORPUS: &[&str] = &[
    names::PAYLOAD,
    "{}",
    "[]",
    "  {\"b\" : [1, 2.50, -0, 1e2, 1.5E-3, 0.000], \"a\": null, \"ccc\": true}  ",
    "{\"k\": 1, \"k\": 2, \"kk\": {\"z\": [], \"y\": {}}}",
    "\"\\u00e9\\ud83d\\ude00 \\/ \\t \\u001f\"",
    "12345678901234567890.123456789",
    "-1.0e-5",
    "1E+3",
    "[[[[[[[[[[]]]]]]]]]]",
    "{\"event_id\":\"event-ticket-900\",\"ticket_id\":\"ticket-42\"}",
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
    "\"\\u0000\"",
    "\"\\ud800\"",
    "\"a\nb\"",
    "{'a': 1}",
    "{} {}",
    "1e1001",
    "1e131071",
    "1e131072",
    "0.001e131074",
    "0.001e131075",
    "0e140000",
    "0e1073741823",
    "1e-16383",
    "1e-16384",
    "0.5e-16382",
    "-0.00e-3",
    "not json",
    "{\"event_id\": oops",
];

#[sqlx::test(migrations = false)]
async fn the_reference_agrees_with_postgresql_on_every_input(pool: PgPool) {
    for &input in CORPUS {
        let real: Result<String, sqlx::Error> = sqlx::query_scalar("SELECT $1::jsonb::text")
            .bind(input)
            .fetch_one(&pool)
            .await;
        let predicted = to_jsonb_text(input);
        match (&real, &predicted) {
            (Ok(pg), Ok(model)) => assert_eq!(model, pg, "input {input:?}"),
            (Err(_), Err(_)) => {}
            _ => panic!("input {input:?}: PostgreSQL {real:?}, reference {predicted:?}"),
        }
    }
}
