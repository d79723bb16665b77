//! A reference for PostgreSQL's `text::jsonb` cast: whether it accepts a payload, and the text
//! PostgreSQL prints for the stored value.
//!
//! The reference model uses this to predict the `invalid_payload` outcome and the exact
//! `payload` column of a new outbox row without asking the database. It follows PostgreSQL 15:
//! RFC 8259 grammar; `\u0000` and unpaired surrogates refused; numbers kept as `numeric`
//! (PostgreSQL's own numeric limits); object keys de-duplicated (last
//! wins) and ordered by length, then bytes; output with `", "` and `": "` separators.

use std::fmt::Write as _;

/// Why PostgreSQL would refuse a payload.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JsonbError {
    #[error("the payload is not valid JSON at byte {0}")]
    Syntax(usize),
    #[error("the payload contains a character PostgreSQL cannot store in jsonb")]
    Unstorable,
    #[error("a number in the payload is outside PostgreSQL's numeric range")]
    NumberRange,
    /// The cast would succeed, but its text would be longer than the caller's limit (a number
    /// like `1e131071` is 8 bytes of input and 131 072 characters of output).
    #[error("the payload's jsonb text would be longer than {0} bytes")]
    TooLarge(usize),
}

/// PostgreSQL's output text for `input::jsonb`, or why the cast fails.
pub fn to_jsonb_text(input: &str) -> Result<String, JsonbError> {
    to_jsonb_text_within(input, usize::MAX)
}

/// [`to_jsonb_text`], refusing with [`JsonbError::TooLarge`] as soon as the text would pass
/// `limit` bytes, so that an amplifying payload never costs more memory than the limit.
pub fn to_jsonb_text_within(input: &str, limit: usize) -> Result<String, JsonbError> {
    if input.contains('\0') {
        // PostgreSQL refuses a NUL byte in any text value before the cast is attempted.
        return Err(JsonbError::Unstorable);
    }
    let mut parser = Parser {
        bytes: input.as_bytes(),
        pos: 0,
        limit,
        numbers_left: limit,
    };
    let text = parser.parse_document()?;
    if text.len() > limit {
        return Err(JsonbError::TooLarge(limit));
    }
    Ok(text)
}

/// Whether `input::jsonb` succeeds.
pub fn accepts(input: &str) -> bool {
    to_jsonb_text(input).is_ok()
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    limit: usize,
    /// What the numbers rendered so far may still add: only numbers grow much in output.
    numbers_left: usize,
}

/// An open container while parsing. Parsing is iterative and values are rendered as soon as
/// they close, so deep nesting never recurses (on our stack or in a tree's drop).
enum Frame {
    /// The rendered text so far, starting with `[`.
    Array(String),
    /// The pairs so far (key, rendered value) and the key awaiting its value.
    Object(Vec<(String, String)>, Option<String>),
}

impl Parser<'_> {
    fn syntax(&self) -> JsonbError {
        JsonbError::Syntax(self.pos)
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn expect(&mut self, b: u8) -> Result<(), JsonbError> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.syntax())
        }
    }

    fn parse_document(&mut self) -> Result<String, JsonbError> {
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            // Parse one value (or open a container).
            self.skip_ws();
            let mut value = match self.peek() {
                Some(b'[') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        "[]".to_owned()
                    } else {
                        stack.push(Frame::Array("[".to_owned()));
                        continue;
                    }
                }
                Some(b'{') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        "{}".to_owned()
                    } else {
                        let key = self.parse_key()?;
                        stack.push(Frame::Object(Vec::new(), Some(key)));
                        continue;
                    }
                }
                _ => self.parse_scalar()?,
            };
            // Attach the value to its container; close containers as they end.
            loop {
                let Some(top) = stack.last_mut() else {
                    self.skip_ws();
                    return if self.pos == self.bytes.len() {
                        Ok(value)
                    } else {
                        Err(self.syntax())
                    };
                };
                self.skip_ws();
                match top {
                    Frame::Array(text) => {
                        text.push_str(&value);
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                text.push_str(", ");
                                break;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                text.push(']');
                                value = std::mem::take(text);
                                stack.pop();
                            }
                            _ => return Err(self.syntax()),
                        }
                    }
                    Frame::Object(pairs, key) => {
                        let k = key.take().ok_or(JsonbError::Syntax(self.pos))?;
                        pairs.push((k, value));
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                let next = self.parse_key()?;
                                if let Some(Frame::Object(_, key)) = stack.last_mut() {
                                    *key = Some(next);
                                }
                                break;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                value = render_object(std::mem::take(pairs));
                                stack.pop();
                            }
                            _ => return Err(self.syntax()),
                        }
                    }
                }
            }
        }
    }

    fn parse_key(&mut self) -> Result<String, JsonbError> {
        if self.peek() != Some(b'"') {
            return Err(self.syntax());
        }
        let key = self.parse_string()?;
        self.skip_ws();
        self.expect(b':')?;
        Ok(key)
    }

    fn parse_scalar(&mut self) -> Result<String, JsonbError> {
        match self.peek() {
            Some(b'"') => {
                let mut out = String::new();
                write_string(&self.parse_string()?, &mut out);
                Ok(out)
            }
            Some(b'-' | b'0'..=b'9') => self.parse_number(),
            Some(b'a'..=b'z' | b'A'..=b'Z') => {
                // PostgreSQL reads a whole word and then compares it.
                let start = self.pos;
                while let Some(b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_') = self.peek() {
                    self.pos += 1;
                }
                match &self.bytes[start..self.pos] {
                    b"true" => Ok("true".to_owned()),
                    b"false" => Ok("false".to_owned()),
                    b"null" => Ok("null".to_owned()),
                    _ => Err(JsonbError::Syntax(start)),
                }
            }
            _ => Err(self.syntax()),
        }
    }

    fn parse_hex4(&mut self) -> Result<u32, JsonbError> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .ok_or(JsonbError::Syntax(self.pos))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.syntax())?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(self.syntax());
        }
        let code = u32::from_str_radix(text, 16).map_err(|_| self.syntax())?;
        self.pos += 4;
        Ok(code)
    }

    fn parse_string(&mut self) -> Result<String, JsonbError> {
        self.expect(b'"')?;
        let mut out = String::new();
        loop {
            let rest = &self.bytes[self.pos..];
            // Copy the run up to the next quote, backslash or control character at once.
            let run = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .ok_or(JsonbError::Syntax(self.bytes.len()))?;
            let chunk = std::str::from_utf8(&rest[..run]).map_err(|_| self.syntax())?;
            out.push_str(chunk);
            self.pos += run;
            match self.bytes[self.pos] {
                b'"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => {
                    self.pos += 1;
                    let esc = self.peek().ok_or(JsonbError::Syntax(self.pos))?;
                    self.pos += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => out.push(self.parse_unicode_escape()?),
                        _ => return Err(JsonbError::Syntax(self.pos - 1)),
                    }
                }
                _ => return Err(self.syntax()),
            }
        }
    }

    fn parse_unicode_escape(&mut self) -> Result<char, JsonbError> {
        let first = self.parse_hex4()?;
        if first == 0 {
            return Err(JsonbError::Unstorable);
        }
        if (0xDC00..=0xDFFF).contains(&first) {
            return Err(self.syntax());
        }
        if (0xD800..=0xDBFF).contains(&first) {
            if self.bytes.get(self.pos..self.pos + 2) != Some(b"\\u") {
                return Err(self.syntax());
            }
            self.pos += 2;
            let second = self.parse_hex4()?;
            if !(0xDC00..=0xDFFF).contains(&second) {
                return Err(self.syntax());
            }
            let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
            return char::from_u32(code).ok_or(self.syntax());
        }
        char::from_u32(first).ok_or(self.syntax())
    }

    /// Parses a JSON number and returns `numeric`'s output text for it.
    fn parse_number(&mut self) -> Result<String, JsonbError> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let int_start = self.pos;
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = self.peek() {
                    self.pos += 1;
                }
            }
            _ => return Err(self.syntax()),
        }
        let int_digits = &self.bytes[int_start..self.pos];
        let mut frac_digits: &[u8] = &[];
        if self.peek() == Some(b'.') {
            self.pos += 1;
            let start = self.pos;
            while let Some(b'0'..=b'9') = self.peek() {
                self.pos += 1;
            }
            if self.pos == start {
                return Err(self.syntax());
            }
            frac_digits = &self.bytes[start..self.pos];
        }
        let mut exponent: i64 = 0;
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            let exp_negative = match self.peek() {
                Some(b'+') => {
                    self.pos += 1;
                    false
                }
                Some(b'-') => {
                    self.pos += 1;
                    true
                }
                _ => false,
            };
            let start = self.pos;
            while let Some(b'0'..=b'9') = self.peek() {
                self.pos += 1;
            }
            if self.pos == start {
                return Err(self.syntax());
            }
            for &d in &self.bytes[start..self.pos] {
                exponent = exponent
                    .saturating_mul(10)
                    .saturating_add(i64::from(d - b'0'));
            }
            if exp_negative {
                exponent = -exponent;
            }
        }
        // A number glued to a letter ("1x") is one bad token for PostgreSQL's lexer.
        if let Some(b'a'..=b'z' | b'A'..=b'Z' | b'_') = self.peek() {
            return Err(self.syntax());
        }
        let text = numeric_text(
            negative,
            int_digits,
            frac_digits,
            exponent,
            self.numbers_left,
        )
        .map_err(|e| match e {
            JsonbError::TooLarge(_) => JsonbError::TooLarge(self.limit),
            other => other,
        })?;
        self.numbers_left -= text.len();
        Ok(text)
    }
}

/// `numeric_out(numeric_in(text))` for a syntactically valid JSON number.
///
/// PostgreSQL 15's limits, measured on the server: |exponent| below 2^30 - 1, a display scale
/// (fraction digits after the exponent) of at most 16383, and at most 131072 digits before
/// the decimal point for a non-zero value.
fn numeric_text(
    negative: bool,
    int_digits: &[u8],
    frac_digits: &[u8],
    exponent: i64,
    max_len: usize,
) -> Result<String, JsonbError> {
    const MAX_EXPONENT: i64 = (i32::MAX / 2) as i64;
    const MAX_DSCALE: i64 = 0x3FFF;
    const MAX_INT_DIGITS: i64 = 131_072;
    if exponent >= MAX_EXPONENT || exponent <= -MAX_EXPONENT {
        return Err(JsonbError::NumberRange);
    }
    let dscale = (frac_digits.len() as i64 - exponent).max(0);
    if dscale > MAX_DSCALE {
        return Err(JsonbError::NumberRange);
    }
    // All digits, and where the decimal point falls within them after the exponent.
    let digits: Vec<u8> = int_digits.iter().chain(frac_digits).copied().collect();
    let point = int_digits.len() as i64 + exponent;
    let digit_at = |i: i64| -> u8 {
        if i >= 0 && (i as usize) < digits.len() {
            digits[i as usize]
        } else {
            b'0'
        }
    };
    let first = digits.iter().position(|&d| d != b'0');
    let int_len = first.map_or(0, |first| point - first as i64);
    if int_len > MAX_INT_DIGITS {
        return Err(JsonbError::NumberRange);
    }
    // The output's length, known before a byte of it is written.
    let sign = usize::from(negative && first.is_some());
    let len = sign + int_len.max(1) as usize + if dscale > 0 { 1 + dscale as usize } else { 0 };
    if len > max_len {
        return Err(JsonbError::TooLarge(max_len));
    }
    let mut text = String::with_capacity(len);
    match first {
        None => text.push('0'),
        Some(first) => {
            if negative {
                text.push('-');
            }
            if int_len > 0 {
                for i in first as i64..point {
                    text.push(char::from(digit_at(i)));
                }
            } else {
                text.push('0');
            }
        }
    }
    if dscale > 0 {
        text.push('.');
        for i in point..point + dscale {
            text.push(char::from(digit_at(i)));
        }
    }
    Ok(text)
}

/// jsonb keeps the last of duplicate keys and orders keys by length, then bytes.
fn render_object(pairs: Vec<(String, String)>) -> String {
    let mut kept: Vec<&(String, String)> = Vec::with_capacity(pairs.len());
    for (i, pair) in pairs.iter().enumerate() {
        if !pairs[i + 1..].iter().any(|(k, _)| *k == pair.0) {
            kept.push(pair);
        }
    }
    kept.sort_by(|a, b| {
        a.0.len()
            .cmp(&b.0.len())
            .then_with(|| a.0.as_bytes().cmp(b.0.as_bytes()))
    });
    let mut out = String::from("{");
    for (i, (k, v)) in kept.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_string(k, &mut out);
        out.push_str(": ");
        out.push_str(v);
    }
    out.push('}');
    out
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::names;

    #[test]
    fn the_lesson_payload_is_stored_with_keys_reordered() {
        assert_eq!(
            to_jsonb_text(names::PAYLOAD).unwrap(),
            r#"{"event_id": "event-ticket-900", "ticket_id": "ticket-42", "to_status": "resolved", "changed_at": "2026-10-03T08:00:00Z", "from_status": "open"}"#
        );
    }

    #[test]
    fn an_amplifying_payload_is_refused_before_its_text_is_built() {
        // 8 191 bytes of input that PostgreSQL would print as 119 million characters.
        let numbers = vec!["1e131071"; 910].join(",");
        let payload = format!("[{numbers}]");
        assert!(payload.len() < 8192);
        assert_eq!(
            to_jsonb_text_within(&payload, 16 * 1024),
            Err(JsonbError::TooLarge(16 * 1024))
        );
        // One such number alone is over the limit too; a modest one is not.
        assert!(matches!(
            to_jsonb_text_within("1e131071", 16 * 1024),
            Err(JsonbError::TooLarge(_))
        ));
        assert_eq!(to_jsonb_text_within("1e3", 16).as_deref(), Ok("1000"));
        assert_eq!(
            to_jsonb_text_within("[1e10, 1e10]", 16),
            Err(JsonbError::TooLarge(16))
        );
        // Out of numeric's range stays PostgreSQL's refusal (an outcome), not a size.
        assert_eq!(
            to_jsonb_text_within("1e131072", 16 * 1024),
            Err(JsonbError::NumberRange)
        );
    }

    #[test]
    fn numbers_follow_numeric_display_scale() {
        let cases = [
            ("1", "1"),
            ("-0", "0"),
            ("-0.0", "0.0"),
            ("1.50", "1.50"),
            ("1e2", "100"),
            ("1.5e1", "15"),
            ("1.55e1", "15.5"),
            ("15e-1", "1.5"),
            ("1.230e1", "12.30"),
            ("1.23e-2", "0.0123"),
            ("-12.5E+1", "-125"),
            ("0.000", "0.000"),
        ];
        for (input, expected) in cases {
            assert_eq!(to_jsonb_text(input).unwrap(), expected, "{input}");
        }
    }

    #[test]
    fn refuses_what_postgresql_refuses() {
        for bad in [
            "",
            "{",
            "{\"a\":1,}",
            "[1,]",
            "01",
            "1.",
            ".5",
            "+1",
            "NaN",
            "tru",
            "truex",
            "\"\\u0000\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"a\nb\"",
            "\"\\x\"",
            "1e131072",
            "0e-16384",
            "0e1073741823",
            "{} {}",
            "not json",
            "{'a': 1}",
        ] {
            assert!(!accepts(bad), "{bad:?} should be refused");
        }
    }

    #[test]
    fn duplicate_keys_keep_the_last_and_strings_are_escaped_like_postgresql() {
        assert_eq!(
            to_jsonb_text(r#"{"bb":1,"a":2,"bb":3,"c":"x\u00e9\/\u001f"}"#).unwrap(),
            "{\"a\": 2, \"c\": \"x\u{e9}/\\u001f\", \"bb\": 3}"
        );
    }

    #[test]
    fn surrogate_pairs_combine() {
        assert_eq!(to_jsonb_text(r#""\ud83d\ude00""#).unwrap(), "\"\u{1F600}\"");
    }

    #[test]
    fn nesting_as_deep_as_a_payload_allows_is_fine() {
        let depth = crate::input::Payload::MAX_BYTES / 2;
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(accepts(&deep));
    }
}
