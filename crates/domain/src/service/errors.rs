//! The errors of the use cases, and the error policy of the whole gateway.
//!
//! * **Expected outcomes are variants, not strings.** Each use case has its own enum
//!   (`CreateError`, `StepError`, ...) whose variants are the answers the API gives
//!   (`Forbidden`, `DuplicateOperation`, `InvalidState`, ...). The HTTP adapter maps each
//!   variant to its status and `errorCode` in one place; the CLI maps them to exit codes.
//! * **Invalid input is data.** [`ValidationErrors`] lists every bad field with its message,
//!   written for the merchant; it is never a failure of the gateway.
//! * **Retryable failures keep their cause.** `Unavailable` (the database or a provider
//!   cannot be reached) carries the underlying error as its `#[source]` ([`BoxError`]), so a
//!   log line shows the whole chain while the client sees only `503 ServiceUnavailable`.
//! * **Bugs are `anyhow::Error`** (`Unknown`, `StoreError::Other`): logged once at the edge
//!   with a correlation id, answered `500` with nothing internal.
//! * Ports return their own typed errors ([`StoreError`], [`ProviderError`],
//!   [`crate::ports::InsertError`], [`FinishError`]); no port or adapter error is a bare
//!   `String`.

use crate::operation::Operation;
use crate::ports::{BoxError, FinishError, ProviderError, StoreError};
use crate::ValidationErrors;

/// Why a deposit or withdrawal was not created. Nothing was created in any case.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    #[error("the merchant has no access to this payment method")]
    Forbidden,
    #[error("merchantOperationId was already used with a different request")]
    DuplicateOperation,
    #[error("no route found for this payment")]
    NoRouteFound,
    #[error("insufficient balance")]
    InsufficientBalance,
    /// A deposit whose fee would be at least its amount: nothing was created.
    #[error("the fee would be at least the amount")]
    AmountTooSmall,
    #[error("temporarily unavailable")]
    Unavailable(#[source] BoxError),
    #[error(transparent)]
    Unknown(#[from] anyhow::Error),
}

/// Why an input or confirmation step was refused.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error("operation not found")]
    NotFound,
    #[error("the operation is not waiting for this step")]
    InvalidState,
    #[error("wrong confirmation code")]
    InvalidCode,
    #[error("{0}")]
    Invalid(ValidationErrors),
    #[error("temporarily unavailable")]
    Unavailable(#[source] BoxError),
    #[error(transparent)]
    Unknown(#[from] anyhow::Error),
}

/// Why an operation could not be completed.
#[derive(Debug, thiserror::Error)]
pub enum CompleteError {
    #[error("operation not found")]
    NotFound,
    #[error("the operation is already final")]
    InvalidState,
    #[error("temporarily unavailable")]
    Unavailable(#[source] BoxError),
    #[error(transparent)]
    Unknown(#[from] anyhow::Error),
}

/// Why a read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("not found")]
    NotFound,
    #[error("temporarily unavailable")]
    Unavailable(#[source] BoxError),
    #[error(transparent)]
    Unknown(#[from] anyhow::Error),
}

/// Why a refund was not created. Nothing was created in any case.
#[derive(Debug, thiserror::Error)]
pub enum RefundError {
    /// No such deposit of this merchant.
    #[error("operation not found")]
    NotFound,
    /// A field breaks its rule once the deposit is known: the amount's fraction digits are
    /// its currency's.
    #[error("{0}")]
    Invalid(ValidationErrors),
    #[error("merchantRefundId was already used with a different request")]
    DuplicateRefund,
    /// Only an approved deposit can be refunded.
    #[error("only an approved deposit can be refunded")]
    InvalidState,
    #[error("the refunds would exceed the deposit's amount")]
    ExceedsAmount,
    #[error("insufficient balance")]
    InsufficientBalance,
    #[error("temporarily unavailable")]
    Unavailable(#[source] BoxError),
    #[error(transparent)]
    Unknown(#[from] anyhow::Error),
}

impl From<CompleteError> for RefundError {
    fn from(error: CompleteError) -> Self {
        match error {
            CompleteError::Unavailable(why) => RefundError::Unavailable(why),
            CompleteError::Unknown(e) => RefundError::Unknown(e),
            CompleteError::NotFound | CompleteError::InvalidState => RefundError::Unknown(
                anyhow::anyhow!("a new refund could not be written: {error}"),
            ),
        }
    }
}

/// What a merchant's appeal answers besides the dispute.
#[derive(Debug, thiserror::Error)]
pub enum DisputeError {
    #[error("operation not found")]
    NotFound,
    #[error("{0}")]
    Invalid(ValidationErrors),
    /// The deposit is not in the status the appeal's reason is about, is older than 30 days,
    /// or has an open appeal.
    #[error("the deposit cannot be appealed now")]
    InvalidState,
    #[error("temporarily unavailable")]
    Unavailable(#[source] BoxError),
    #[error(transparent)]
    Unknown(#[from] anyhow::Error),
}

impl From<CompleteError> for DisputeError {
    fn from(error: CompleteError) -> Self {
        match error {
            CompleteError::Unavailable(why) => DisputeError::Unavailable(why),
            CompleteError::Unknown(e) => DisputeError::Unknown(e),
            CompleteError::NotFound | CompleteError::InvalidState => DisputeError::Unknown(
                anyhow::anyhow!("a chargeback's change could not be written: {error}"),
            ),
        }
    }
}

/// What an operator's decision on an appeal answers besides the dispute.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    #[error("no such dispute")]
    NotFound,
    #[error("the dispute is not an open appeal")]
    NotOpenAppeal,
    #[error("{0}")]
    Invalid(ValidationErrors),
    #[error("the deposit's fee on this amount would be at least the amount")]
    AmountTooSmall,
    #[error("insufficient balance")]
    InsufficientBalance,
    #[error("temporarily unavailable")]
    Unavailable(#[source] BoxError),
    #[error(transparent)]
    Unknown(#[from] anyhow::Error),
}

/// Why a hosted-page step did nothing.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    #[error("operation not found")]
    NotFound,
    /// Final, expired (now declined), or not a deposit this page serves; carries its current state.
    #[error("the operation is not waiting for the user")]
    NotWaiting(Box<Operation>),
    /// The card form had errors; nothing changed.
    #[error("{0}")]
    Invalid(ValidationErrors),
    #[error("temporarily unavailable")]
    Unavailable(#[source] BoxError),
    #[error(transparent)]
    Unknown(#[from] anyhow::Error),
}

/// Why an acquirer's notification was not applied.
#[derive(Debug, thiserror::Error)]
pub enum NotificationError {
    /// No attempt of this reference at this provider, or another acquirer id: the acquirer
    /// retries.
    #[error("no such payment at this provider")]
    NotFound,
    #[error("temporarily unavailable")]
    Unavailable(#[source] BoxError),
    #[error(transparent)]
    Unknown(#[from] anyhow::Error),
}

impl From<CompleteError> for NotificationError {
    fn from(error: CompleteError) -> Self {
        match error {
            CompleteError::NotFound => NotificationError::NotFound,
            // A final operation only records what it is told; nothing to refuse.
            CompleteError::InvalidState => {
                NotificationError::Unknown(anyhow::anyhow!("a final operation refused a status"))
            }
            CompleteError::Unavailable(why) => NotificationError::Unavailable(why),
            CompleteError::Unknown(e) => NotificationError::Unknown(e),
        }
    }
}

macro_rules! from_store_and_provider {
    ($($error:ident),*) => {$(
        impl From<StoreError> for $error {
            fn from(error: StoreError) -> Self {
                match error {
                    StoreError::Unavailable(why) => $error::Unavailable(why),
                    StoreError::Other(e) => $error::Unknown(e),
                }
            }
        }

        impl From<ProviderError> for $error {
            fn from(error: ProviderError) -> Self {
                $error::Unavailable(Box::new(error))
            }
        }
    )*};
}

from_store_and_provider!(
    CreateError,
    StepError,
    CompleteError,
    ReadError,
    NotificationError,
    RefundError,
    DisputeError,
    DecideError
);

macro_rules! from_read {
    ($($error:ident),*) => {$(
        impl From<ReadError> for $error {
            fn from(error: ReadError) -> Self {
                match error {
                    ReadError::NotFound => $error::NotFound,
                    ReadError::Unavailable(why) => $error::Unavailable(why),
                    ReadError::Unknown(e) => $error::Unknown(e),
                }
            }
        }
    )*};
}

from_read!(
    RefundError,
    CompleteError,
    CheckoutError,
    DisputeError,
    DecideError
);

impl From<FinishError> for CompleteError {
    fn from(error: FinishError) -> Self {
        match error {
            FinishError::NotProcessing => CompleteError::InvalidState,
            FinishError::InsufficientBalance => {
                CompleteError::Unknown(anyhow::anyhow!("a completion found the balance too low"))
            }
            FinishError::Store(e) => e.into(),
        }
    }
}

impl From<CompleteError> for StepError {
    fn from(error: CompleteError) -> Self {
        match error {
            CompleteError::NotFound => StepError::NotFound,
            CompleteError::InvalidState => StepError::InvalidState,
            CompleteError::Unavailable(why) => StepError::Unavailable(why),
            CompleteError::Unknown(e) => StepError::Unknown(e),
        }
    }
}
