use crate::ports::{FinishError, ProviderError, StoreError};
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
    #[error("temporarily unavailable: {0}")]
    Unavailable(String),
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
    #[error("temporarily unavailable: {0}")]
    Unavailable(String),
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
    #[error("temporarily unavailable: {0}")]
    Unavailable(String),
    #[error(transparent)]
    Unknown(#[from] anyhow::Error),
}

/// Why a read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("not found")]
    NotFound,
    #[error("temporarily unavailable: {0}")]
    Unavailable(String),
    #[error(transparent)]
    Unknown(#[from] anyhow::Error),
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
                $error::Unavailable(error.to_string())
            }
        }
    )*};
}

from_store_and_provider!(CreateError, StepError, CompleteError, ReadError);

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
