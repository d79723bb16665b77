//! The comparison: the same attempt the outbox way and a wrong way, in two sandboxes that
//! belong to the learner's.

use crate::catalog::{CommitFate, Setup};
use crate::compare;
use crate::input::AttemptSpec;
use crate::prediction::Prediction;
use crate::report::{CompareReport, Report};

use super::super::budget::Needs;
use super::super::error::LabError;
use super::super::names::{SandboxToken, SchemaName};
use super::super::runner::Lab;
use super::super::sandbox;

impl Lab {
    /// Runs `spec` (a wrong way) and its outbox counterpart side by side, each in a sandbox of
    /// its own that belongs to the learner's `main` sandbox, from the same starting state.
    pub async fn compare(
        &self,
        main: &SchemaName,
        spec: &AttemptSpec,
    ) -> Result<CompareReport, LabError> {
        self.compare_predicted(main, spec, &Prediction::none(), None)
            .await
    }

    /// The comparison, with the learner's prediction judged on the outbox side.
    pub async fn compare_predicted(
        &self,
        main: &SchemaName,
        spec: &AttemptSpec,
        prediction: &Prediction,
        client: Option<&str>,
    ) -> Result<CompareReport, LabError> {
        self.locked_only(
            main,
            Needs::COMPARE,
            self.compare_locked(main, spec, prediction, client),
        )
        .await
    }

    async fn compare_locked(
        &self,
        main: &SchemaName,
        spec: &AttemptSpec,
        prediction: &Prediction,
        client: Option<&str>,
    ) -> Result<CompareReport, LabError> {
        let (left, right) = match sandbox::compare_pair(self.pool(), main).await? {
            Some(pair) => pair,
            None => {
                // New sandboxes, paid from the learner's address like their own.
                let claim = || self.claim_sandbox_for(SandboxToken::generate(), client);
                let (_, left) = claim().await?;
                let (_, right) = claim().await?;
                sandbox::set_compare_pair(self.pool(), main, &left, &right).await?;
                (left, right)
            }
        };
        // Both sides must meet the same network: a random fate is drawn once for both.
        let mut spec = spec.clone();
        if spec.commit_fate == CommitFate::Random {
            spec.commit_fate = if rand::random::<bool>() {
                CommitFate::Applied
            } else {
                CommitFate::NotApplied
            };
        }
        let spec = &spec;
        let setup = compare::setup_for(&spec.mistakes);
        // The sides run within this comparison's reservation (Needs::COMPARE).
        let sides = self.within_reservation();
        let outbox = sides
            .compare_side(&left, setup, &spec.outbox_counterpart(), prediction)
            .await?;
        let wrong = sides
            .compare_side(&right, setup, spec, &Prediction::none())
            .await?;
        let report = CompareReport {
            setup,
            difference: compare::difference(&outbox, &wrong),
            outbox,
            wrong,
        };
        sandbox::save_compare(self.pool(), main, &report).await?;
        Ok(report)
    }

    async fn compare_side(
        &self,
        sandbox: &SchemaName,
        setup: Setup,
        spec: &AttemptSpec,
        prediction: &Prediction,
    ) -> Result<Report, LabError> {
        self.reset(sandbox).await?;
        if let Some(earlier) = compare::setup_attempt(setup, spec) {
            self.attempt(sandbox, &earlier).await?;
        }
        if setup == Setup::ResolvedThenReopened {
            self.reopen(sandbox).await?;
        }
        self.attempt_predicted(sandbox, spec, prediction).await
    }

    /// The learner's last comparison, if any (and if it still reads).
    pub async fn last_compare(&self, main: &SchemaName) -> Result<Option<CompareReport>, LabError> {
        sandbox::last_compare(self.pool(), main).await
    }
}
