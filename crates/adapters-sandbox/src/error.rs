//! What goes wrong inside the sandbox, as the source of the domain's `ProviderError`.

use domain::ports::ProviderError;
use domain::Direction;

use crate::QrError;

/// A sandbox failure; none of them moves money.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The payout plan stored with the operation cannot be read back.
    #[error("sandbox payout state {0}")]
    GarbledState(&'static str),
    #[error("sandbox QR code")]
    Qr(#[source] QrError),
    #[error("route {0} gives a deposit the payout flow")]
    PayoutFlowForDeposit(i64),
    #[error("sandbox was asked to handle a {given:?} as a {expected:?}")]
    WrongDirection {
        given: Direction,
        expected: Direction,
    },
}

impl From<SandboxError> for ProviderError {
    fn from(error: SandboxError) -> Self {
        ProviderError(Box::new(error))
    }
}
