//! The form fields each server function takes, read from its own argument type, so that a
//! request with a field it does not take can be refused by name (see the server's
//! `unknown_fields` layer). Reading them from the type keeps the list from drifting.

use std::fmt;

use leptos::server_fn::ServerFn;
use serde::de::{self, Deserialize, Deserializer, Visitor};

use crate::api::{
    Attempt, Autorun, Compare, Consume, Current, LastCompare, PredictFirst, Progress, PublishRace,
    Race, Reconcile, Reopen, Replay, Reset, Restart, Share, Snapshot, StartOver,
};

/// The fields of every server function, by its URL path.
fn table() -> Vec<(&'static str, &'static [&'static str])> {
    fn entry<T: ServerFn + for<'de> Deserialize<'de>>() -> (&'static str, &'static [&'static str]) {
        (T::PATH, fields_of::<T>())
    }
    vec![
        entry::<Current>(),
        entry::<Snapshot>(),
        entry::<Reset>(),
        entry::<Reopen>(),
        entry::<Attempt>(),
        entry::<Reconcile>(),
        entry::<Race>(),
        entry::<Compare>(),
        entry::<LastCompare>(),
        entry::<Autorun>(),
        entry::<Progress>(),
        entry::<StartOver>(),
        entry::<PredictFirst>(),
        entry::<Restart>(),
        entry::<PublishRace>(),
        entry::<Consume>(),
        entry::<Share>(),
        entry::<Replay>(),
        entry::<crate::quest_api::Quests>(),
        entry::<crate::quest_api::QuestHint>(),
        entry::<crate::quest_api::QuestAnswer>(),
        entry::<crate::quest_api::Author>(),
    ]
}

/// The fields the server function at `path` takes; `None` for a path that is none of ours.
pub fn known_fields(path: &str) -> Option<&'static [&'static str]> {
    table()
        .into_iter()
        .find(|(p, _)| *p == path)
        .map(|(_, fields)| fields)
}

/// Every path [`known_fields`] knows, for the test that no server function is missing.
pub fn known_paths() -> Vec<&'static str> {
    table().into_iter().map(|(p, _)| p).collect()
}

/// The field names serde's derived `Deserialize` asks a deserializer for: a struct hands them
/// to `deserialize_struct`, where this probe notes them and stops.
fn fields_of<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    let mut probe = Probe(None);
    // The probe always stops with an error once it has seen the struct's fields.
    let _ = T::deserialize(&mut probe);
    probe.0.unwrap_or(&[])
}

struct Probe(Option<&'static [&'static str]>);

#[derive(Debug)]
struct Seen;

impl fmt::Display for Seen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field names noted")
    }
}

impl std::error::Error for Seen {}

impl de::Error for Seen {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Seen
    }
}

impl<'de> Deserializer<'de> for &mut Probe {
    type Error = Seen;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Seen> {
        self.0 = Some(fields);
        Err(Seen)
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Seen> {
        Err(Seen)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_come_from_the_server_functions_arguments() {
        assert_eq!(
            known_fields(Attempt::PATH),
            Some(
                &[
                    "mode",
                    "mistakes",
                    "crash",
                    "commit_fate",
                    "event_id",
                    "payload",
                    "predict_ticket",
                    "predict_outbox",
                    "predict_kafka",
                    "predict_client"
                ][..]
            )
        );
        assert_eq!(known_fields(Reset::PATH), Some(&[][..]));
        assert_eq!(known_fields(Race::PATH), Some(&["mistakes"][..]));
        assert_eq!(known_fields("/api/nothing"), None);
    }
}
