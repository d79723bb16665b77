//! The error of a setting that is present but unusable, shared by the configuration and the
//! settings that parse themselves (the frame ancestors).

/// A setting that is present but unusable.
#[derive(Debug, thiserror::Error)]
#[error("{name} must be {expected}, got {value:?}")]
pub struct ConfigError {
    name: &'static str,
    expected: &'static str,
    value: String,
}

impl ConfigError {
    pub fn new(name: &'static str, expected: &'static str, value: &str) -> Self {
        ConfigError {
            name,
            expected,
            value: value.to_owned(),
        }
    }
}
