//! Reading a platform's answer without trusting its size.

/// Why an answer was not read.
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    #[error("the answer is larger than {0} bytes")]
    TooLarge(usize),
    #[error("reading the answer: {0}")]
    Read(#[from] reqwest::Error),
}

/// The body of `response`, refused as soon as it passes `max` bytes (whatever its
/// `Content-Length` claims).
pub async fn read_limited(
    mut response: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, LimitError> {
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(LimitError::TooLarge(max));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > max {
            return Err(LimitError::TooLarge(max));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
