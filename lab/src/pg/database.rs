//! Getting a database ready: create it when missing, then run the migrations.

use std::str::FromStr;

use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection};

use super::error::LabError;

/// The migrations in `migrations/` at the workspace root: the lesson's template schema and
/// the sandbox registry.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// Parses `url`, creates its database if it does not exist yet, and runs the migrations.
pub async fn prepare(url: &str) -> Result<PgConnectOptions, LabError> {
    let options = PgConnectOptions::from_str(url).map_err(|e| LabError::Config(e.to_string()))?;
    let name = options
        .get_database()
        .ok_or_else(|| LabError::Config("DATABASE_URL names no database".into()))?
        .to_owned();
    create_if_missing(&options, &name).await?;
    let mut conn = options
        .clone()
        .connect()
        .await
        .map_err(LabError::from_sqlx)?;
    MIGRATOR.run(&mut conn).await?;
    conn.close().await.map_err(LabError::from_sqlx)?;
    Ok(options)
}

async fn create_if_missing(options: &PgConnectOptions, name: &str) -> Result<(), LabError> {
    if !valid_database_name(name) {
        return Err(LabError::Config(format!(
            "database name {name:?} must be letters, digits, '_' or '-' (at most 63)"
        )));
    }
    let mut admin = options
        .clone()
        .database("postgres")
        .connect()
        .await
        .map_err(LabError::from_sqlx)?;
    let exists: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
            .bind(name)
            .fetch_one(&mut admin)
            .await
            .map_err(LabError::from_sqlx)?;
    if !exists {
        // CREATE DATABASE takes no parameters; the name was checked against a strict pattern.
        let created = sqlx::query(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut admin)
            .await;
        match created {
            Ok(_) => tracing::info!(database = name, "created the database"),
            // Another server process created it at the same moment.
            Err(e) if super::error::sqlstate(&e).as_deref() == Some("42P04") => {}
            Err(e) => return Err(LabError::from_sqlx(e)),
        }
    }
    admin.close().await.map_err(LabError::from_sqlx)?;
    Ok(())
}

fn valid_database_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::valid_database_name;

    #[test]
    fn database_names_are_plain() {
        assert!(valid_database_name("outbox_playground"));
        assert!(valid_database_name("outbox-playground-2"));
        assert!(!valid_database_name("x\"; DROP DATABASE postgres; --"));
        assert!(!valid_database_name(""));
    }
}
