//! Failures every port shares: a storage failure, a provider failure, and a way to show an error's whole chain.

/// The cause of a failure, kept as a source so logs show the whole chain (see
/// [`crate::service`]'s error policy).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A storage failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be reached or is overloaded; the request is safe to retry.
    #[error("storage unavailable")]
    Unavailable(#[source] BoxError),
    /// Anything else: a bug or corrupt data.
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

/// A provider failure: it could not be reached or answered nonsense. Nothing was started.
#[derive(Debug, thiserror::Error)]
#[error("provider failure")]
pub struct ProviderError(#[source] pub BoxError);

/// Shows an error with every source after it (`outer: inner: innermost`), for log lines.
pub struct Chain<'a>(pub &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(error) = source {
            write!(f, ": {error}")?;
            source = error.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_shows_every_source_once() {
        let inner: BoxError = "database is locked".into();
        let error = StoreError::Unavailable(inner);
        assert_eq!(
            Chain(&error).to_string(),
            "storage unavailable: database is locked"
        );
    }
}
