//! Trace A of lesson 8.1: the status in the ticket database, the event straight to the
//! (simulated) Kafka, no outbox. Two commit points, nothing tying them together.

use sqlx::{Postgres, Transaction};

use crate::catalog::{CrashPoint, Mode, OutcomeId, Step, names::TICKET_ID};
use crate::input::AttemptSpec;
use crate::sql_trace::Actor;

use super::error::LabError;
use super::kafka_topic;
use super::pauses::{Go, Here, Pauses};
use super::sandbox_tx;
use super::ticket_statements::{GUARDED_UPDATE, Place, Stop, commit, statement};
use super::trace::Tracer;

/// The naive function after BEGIN: UPDATE, then COMMIT and publish in the mode's order.
pub async fn naive_steps<P: Pauses>(
    mut tx: Transaction<'_, Postgres>,
    place: Place<'_>,
    spec: &AttemptSpec,
    pauses: &mut P,
    trace: &mut Tracer,
) -> Result<Stop, LabError> {
    trace.enter(Step::Update);
    let updated = statement(&mut tx, false, place, GUARDED_UPDATE, &[TICKET_ID], trace)
        .await?
        .map_err(|e| LabError::in_sandbox(e, place.sandbox.as_str()))?;
    if updated != 1 {
        sandbox_tx::rollback(tx, Actor::Service, trace).await?;
        return Ok(Stop::Returned(OutcomeId::GuardRejected));
    }
    if pauses
        .at(
            Here::ticket(spec.mode, CrashPoint::AfterUpdate),
            Some(&mut *tx),
            trace,
        )
        .await?
        == Go::Die
    {
        std::mem::forget(tx);
        return Ok(Stop::Crash(OutcomeId::CrashedAfterUpdate));
    }
    let payload = spec.payload.as_str();
    if spec.mode == Mode::NaivePublishFirst {
        // The broker commits on its own: from here on the event exists whatever the
        // ticket transaction does.
        trace.enter(Step::Publish);
        kafka_topic::publish_and_consume(place.pool, place.sandbox, payload, trace).await?;
        if pauses
            .at(
                Here::ticket(spec.mode, CrashPoint::AfterPublish),
                Some(&mut *tx),
                trace,
            )
            .await?
            == Go::Die
        {
            std::mem::forget(tx);
            return Ok(Stop::Crash(OutcomeId::NaivePhantomEvent));
        }
        if let Some(stop) = commit(tx, trace).await? {
            return Ok(stop);
        }
        return Ok(
            match pauses
                .at(
                    Here::ticket(spec.mode, CrashPoint::AfterCommit),
                    None,
                    trace,
                )
                .await?
            {
                Go::Die => Stop::Crash(OutcomeId::NaivePublished),
                Go::On => Stop::Returned(OutcomeId::NaivePublished),
            },
        );
    }
    if let Some(stop) = commit(tx, trace).await? {
        return Ok(stop);
    }
    if pauses
        .at(
            Here::ticket(spec.mode, CrashPoint::AfterCommit),
            None,
            trace,
        )
        .await?
        == Go::Die
    {
        // The status is durable; the event existed only in this process's memory.
        return Ok(Stop::Crash(OutcomeId::NaiveEventLost));
    }
    trace.enter(Step::Publish);
    kafka_topic::publish_and_consume(place.pool, place.sandbox, payload, trace).await?;
    Ok(Stop::Returned(OutcomeId::NaivePublished))
}
