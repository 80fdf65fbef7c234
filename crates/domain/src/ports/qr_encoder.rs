//! The [`QrEncoder`] port.

use super::BoxError;

/// Draws QR codes.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait QrEncoder: Send + Sync {
    /// A `data:image/png;base64,...` URI of a QR code of `text`.
    fn data_uri(&self, text: &str) -> Result<String, BoxError>;
}
