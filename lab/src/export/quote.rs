//! Values and statements as psql will read them.
//!
//! psql lexes a script before PostgreSQL sees it: outside quoted literals a backslash starts a
//! meta-command (`\! rm -rf ~`) and `:name` is replaced by a variable. Inside a literal psql does
//! neither, so every value goes into one. Standard literals (`'it''s'`) keep backslashes as they
//! are once `standard_conforming_strings` is on, which each script sets first. A value that holds
//! a line break or another control character is written as an escape string (`E'a\nb'`), so
//! every literal stays on one line: a script's line structure (its step headers, its comments)
//! is then the script's own, whatever a learner typed.

use super::ExportError;

/// `value` as a literal that PostgreSQL reads back as exactly `value`.
pub fn literal(value: &str) -> Result<String, ExportError> {
    if value.contains('\0') {
        return Err(ExportError::NulByte);
    }
    if !value.chars().any(char::is_control) {
        return Ok(format!("'{}'", value.replace('\'', "''")));
    }
    let mut out = String::with_capacity(value.len() + 4);
    out.push_str("E'");
    for c in value.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('\'');
    Ok(out)
}

/// A text for psql's `\echo`: the script's own words, quoted so that psql prints them as
/// they are (no variable is interpolated inside quotes).
pub fn echo(text: &str) -> String {
    debug_assert!(
        !text.contains(['\n', '\\']),
        "echo texts are one plain line"
    );
    format!("\\echo '{}'", text.replace('\'', "''"))
}

/// The playground's statement with its bound parameters inlined as literals.
///
/// The statement text is the server's own, but it reaches the export through a stored report:
/// one that psql could read as anything but SQL is refused rather than written.
pub fn inline(sql: &str, params: &[String]) -> Result<String, ExportError> {
    if sql.contains(['\\', '\n', '\r', ';']) || has_psql_variable(sql) {
        return Err(ExportError::UnexpectedStatement(sql.to_owned()));
    }
    let mut out = String::with_capacity(sql.len() + 64);
    let mut used = vec![false; params.len()];
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        let index: usize = after[..digits]
            .parse()
            .map_err(|_| ExportError::UnexpectedStatement(sql.to_owned()))?;
        let value = index
            .checked_sub(1)
            .and_then(|i| params.get(i).map(|v| (i, v)))
            .ok_or_else(|| ExportError::Parameters(sql.to_owned()))?;
        used[value.0] = true;
        out.push_str(&literal(value.1)?);
        rest = &after[digits..];
    }
    out.push_str(rest);
    if used.iter().any(|u| !u) {
        return Err(ExportError::Parameters(sql.to_owned()));
    }
    Ok(out)
}

/// Whether psql would see `:name`, `:'name'` or `:"name"` outside quotes in `sql`. A cast
/// (`::jsonb`) is not a variable.
fn has_psql_variable(sql: &str) -> bool {
    let mut in_quote = false;
    let bytes = sql.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' => in_quote = !in_quote,
            b':' if !in_quote => {
                if bytes.get(i + 1) == Some(&b':') {
                    i += 2;
                    continue;
                }
                if bytes.get(i + 1).is_some_and(|b| {
                    b.is_ascii_alphabetic() || matches!(b, b'_' | b'\'' | b'"' | b'{')
                }) {
                    return true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_doubled_and_backslashes_kept_in_a_standard_literal() {
        assert_eq!(literal("it's a\\b").unwrap(), r"'it''s a\b'");
    }

    #[test]
    fn a_line_break_makes_an_escape_string_on_one_line() {
        let l = literal("a'\n\\! echo pwned\t:foo").unwrap();
        assert_eq!(l, r"E'a''\n\\! echo pwned\t:foo'");
        assert!(!l.contains('\n'));
    }

    #[test]
    fn a_nul_byte_cannot_be_written() {
        assert!(matches!(literal("a\0"), Err(ExportError::NulByte)));
    }

    #[test]
    fn parameters_are_inlined_and_casts_kept() {
        let sql = "INSERT INTO outbox (event_id, aggregate_id, payload, published_at) VALUES ($1, $2, $3::jsonb, NULL)";
        let params = ["e'1".to_owned(), "ticket-42".to_owned(), "{}".to_owned()];
        assert_eq!(
            inline(sql, &params).unwrap(),
            "INSERT INTO outbox (event_id, aggregate_id, payload, published_at) VALUES ('e''1', 'ticket-42', '{}'::jsonb, NULL)"
        );
    }

    #[test]
    fn a_statement_psql_would_read_otherwise_is_refused() {
        for sql in [
            "SELECT 1; \\! id",
            "SELECT :foo",
            "SELECT :'foo'",
            "SELECT 1\n",
        ] {
            assert!(inline(sql, &[]).is_err(), "{sql}");
        }
        assert!(inline("SELECT ':foo'::text", &[]).is_ok());
    }

    #[test]
    fn missing_or_unused_parameters_are_refused() {
        assert!(inline("SELECT $2", &["a".into()]).is_err());
        assert!(inline("SELECT 1", &["a".into()]).is_err());
    }
}
