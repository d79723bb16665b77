//! The race as an action: two requests on two connections (see `pg::ticket_race`), judged and kept.

use crate::catalog::ActionKind;
use crate::input::Mistakes;
use crate::model;
use crate::report::{RaceReport, Report};

use super::super::budget::Needs;
use super::super::error::LabError;
use super::super::names::SchemaName;
use super::super::pending::Pending;
use super::super::runner::{Lab, Locked};
use super::super::ticket_race;

impl Lab {
    /// Two requests resolve ticket-42 at the same moment, on two connections.
    pub async fn race(
        &self,
        sandbox: &SchemaName,
        mistakes: &Mistakes,
    ) -> Result<Report, LabError> {
        // PostgreSQL says what both requests' payloads become as the lock is taken.
        let (a_spec, b_spec) = model::race_specs(mistakes);
        let payloads = [a_spec.payload.as_str(), b_spec.payload.as_str()];
        self.locked(sandbox, Needs::RACE, payloads, |locked| {
            self.race_locked(locked, sandbox, mistakes)
        })
        .await
    }

    async fn race_locked(
        &self,
        locked: Locked<2>,
        sandbox: &SchemaName,
        mistakes: &Mistakes,
    ) -> Result<Report, LabError> {
        let Locked {
            lock,
            before,
            stored_payloads: [stored_a, stored_b],
        } = locked;
        let expected = model::predict_race(
            &before,
            mistakes,
            [stored_a.as_deref(), stored_b.as_deref()],
        );
        let limit = self.config().backend_exit_timeout;
        let raced = ticket_race::run(self.pool(), sandbox, mistakes, limit).await?;
        let (a_spec, b_spec) = model::race_specs(mistakes);
        let race = RaceReport {
            a: raced.a,
            b: raced.b,
            a_event_id: a_spec.event_id.as_str().to_owned(),
            b_event_id: b_spec.event_id.as_str().to_owned(),
            lock_wait: raced.lock_wait,
        };
        self.finish(
            lock,
            sandbox,
            ActionKind::Race,
            Some(a_spec.settings()),
            before,
            raced.trace,
            Some(model::race_outcome(raced.a, raced.b)),
            expected,
            Pending::Clear,
            |r| r.race = Some(race),
        )
        .await
    }
}
