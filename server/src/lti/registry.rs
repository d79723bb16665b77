//! The platforms registered with the playground (`PLAYGROUND_LTI_CONFIG`): a TOML file of
//! `[[registration]]` tables, checked whole before the server starts.
//!
//! ```toml
//! [[registration]]
//! issuer = "https://lms.example.org"
//! client_id = "playground"
//! deployment_ids = ["1"]
//! auth_login_url = "https://lms.example.org/mod/lti/auth.php"
//! token_url = "https://lms.example.org/mod/lti/token.php"
//! jwks_url = "https://lms.example.org/mod/lti/certs.php"
//! ```

use serde::Deserialize;

/// One platform (or one tool registration in it): who it is and where its endpoints are.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registration {
    pub issuer: String,
    pub client_id: String,
    pub deployment_ids: Vec<String>,
    /// The platform's OIDC authorisation endpoint (where login initiation redirects).
    pub auth_login_url: String,
    /// The platform's OAuth 2 token endpoint (access tokens for score passback).
    pub token_url: String,
    /// The platform's public key set (verifies its id_tokens).
    pub jwks_url: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    registration: Vec<Registration>,
}

/// What is wrong with a registration file.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("not a registration file: {0}")]
    Syntax(String),
    #[error("no [[registration]] in the file")]
    Empty,
    #[error("registration {index}: {field} is empty")]
    EmptyField { index: usize, field: &'static str },
    #[error(
        "registration {index}: {field} must be an https URL (http only for localhost), got {value:?}"
    )]
    NotUrl {
        index: usize,
        field: &'static str,
        value: String,
    },
    #[error(
        "registration {index}: issuer {issuer:?} with client_id {client_id:?} is registered twice"
    )]
    Duplicate {
        index: usize,
        issuer: String,
        client_id: String,
    },
}

/// The registrations, checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Registry {
    registrations: Vec<Registration>,
}

impl Registry {
    pub fn parse(source: &str) -> Result<Registry, RegistryError> {
        let file: File =
            toml::from_str(source).map_err(|e| RegistryError::Syntax(e.message().to_owned()))?;
        if file.registration.is_empty() {
            return Err(RegistryError::Empty);
        }
        for (i, r) in file.registration.iter().enumerate() {
            let index = i + 1;
            let texts = [
                ("issuer", &r.issuer),
                ("client_id", &r.client_id),
                ("auth_login_url", &r.auth_login_url),
                ("token_url", &r.token_url),
                ("jwks_url", &r.jwks_url),
            ];
            for (field, value) in texts {
                if value.trim().is_empty() {
                    return Err(RegistryError::EmptyField { index, field });
                }
            }
            if r.deployment_ids.is_empty() || r.deployment_ids.iter().any(|d| d.trim().is_empty()) {
                return Err(RegistryError::EmptyField {
                    index,
                    field: "deployment_ids",
                });
            }
            let urls = [
                ("issuer", &r.issuer),
                ("auth_login_url", &r.auth_login_url),
                ("token_url", &r.token_url),
                ("jwks_url", &r.jwks_url),
            ];
            for (field, value) in urls {
                if !is_platform_url(value) {
                    return Err(RegistryError::NotUrl {
                        index,
                        field,
                        value: value.clone(),
                    });
                }
            }
            if file.registration[..i]
                .iter()
                .any(|o| o.issuer == r.issuer && o.client_id == r.client_id)
            {
                return Err(RegistryError::Duplicate {
                    index,
                    issuer: r.issuer.clone(),
                    client_id: r.client_id.clone(),
                });
            }
        }
        Ok(Registry {
            registrations: file.registration,
        })
    }

    /// The registration for a login initiation: by issuer and client id; without a client
    /// id only when the issuer has exactly one registration.
    pub fn find(&self, issuer: &str, client_id: Option<&str>) -> Option<&Registration> {
        let mut of_issuer = self.registrations.iter().filter(|r| r.issuer == issuer);
        match client_id {
            Some(id) => of_issuer.find(|r| r.client_id == id),
            None => {
                let first = of_issuer.next()?;
                of_issuer.next().is_none().then_some(first)
            }
        }
    }
}

/// An absolute https URL; plain http only on the loopback (a platform on the same machine).
fn is_platform_url(url: &str) -> bool {
    let Some(origin) = app::backend::request::origin_of(url) else {
        return false;
    };
    if origin.starts_with("https://") {
        return true;
    }
    let host = origin.trim_start_matches("http://");
    let host = host
        .rsplit_once(':')
        .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host, |(h, _)| h);
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[[registration]]
issuer = "https://lms.example.org"
client_id = "playground"
deployment_ids = ["1", "2"]
auth_login_url = "https://lms.example.org/auth"
token_url = "https://lms.example.org/token"
jwks_url = "https://lms.example.org/jwks"

[[registration]]
issuer = "http://127.0.0.1:9001"
client_id = "a"
deployment_ids = ["d"]
auth_login_url = "http://127.0.0.1:9001/auth"
token_url = "http://127.0.0.1:9001/token"
jwks_url = "http://localhost:9001/jwks"

[[registration]]
issuer = "http://127.0.0.1:9001"
client_id = "b"
deployment_ids = ["d"]
auth_login_url = "http://127.0.0.1:9001/auth"
token_url = "http://127.0.0.1:9001/token"
jwks_url = "http://127.0.0.1:9001/jwks"
"#;

    #[test]
    fn a_good_file_is_read_and_found_by_issuer_and_client_id() {
        let registry = Registry::parse(GOOD).unwrap();
        let lms = registry.find("https://lms.example.org", None).unwrap();
        assert_eq!(lms.deployment_ids, ["1", "2"]);
        assert_eq!(
            registry.find("https://lms.example.org", Some("playground")),
            Some(lms)
        );
        assert_eq!(
            registry.find("https://lms.example.org", Some("other")),
            None
        );
        // Two registrations of one issuer: the client id must say which.
        assert_eq!(registry.find("http://127.0.0.1:9001", None), None);
        assert_eq!(
            registry
                .find("http://127.0.0.1:9001", Some("b"))
                .map(|r| r.client_id.as_str()),
            Some("b")
        );
        assert_eq!(registry.find("https://elsewhere.example.org", None), None);
    }

    #[test]
    fn mistakes_are_named() {
        let one = |extra: &str, replace: (&str, &str)| {
            let first = GOOD.split("\n\n[[registration]]").next().unwrap();
            Registry::parse(&format!("{}{extra}", first.replace(replace.0, replace.1)))
        };
        assert!(matches!(
            Registry::parse("registration = 3"),
            Err(RegistryError::Syntax(_))
        ));
        assert_eq!(Registry::parse(""), Err(RegistryError::Empty));
        assert!(matches!(
            one("\ncolor = \"red\"\n", ("", "")),
            Err(RegistryError::Syntax(_))
        ));
        assert_eq!(
            one("", ("client_id = \"playground\"", "client_id = \" \"")).unwrap_err(),
            RegistryError::EmptyField {
                index: 1,
                field: "client_id"
            }
        );
        assert_eq!(
            one("", ("[\"1\", \"2\"]", "[]")).unwrap_err(),
            RegistryError::EmptyField {
                index: 1,
                field: "deployment_ids"
            }
        );
        assert!(matches!(
            one(
                "",
                (
                    "https://lms.example.org/jwks",
                    "http://lms.example.org/jwks"
                )
            ),
            Err(RegistryError::NotUrl {
                field: "jwks_url",
                ..
            })
        ));
        assert!(matches!(
            one("", ("https://lms.example.org/auth", "javascript:alert(1)")),
            Err(RegistryError::NotUrl {
                field: "auth_login_url",
                ..
            })
        ));
        let first = GOOD.split("\n\n[[registration]]").next().unwrap();
        assert!(matches!(
            Registry::parse(&format!("{first}\n{first}")),
            Err(RegistryError::Duplicate { index: 2, .. })
        ));
    }
}
