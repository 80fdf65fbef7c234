//! Validated value types: once one exists, it is valid.

mod card;
mod card_data;
mod card_text;
mod contact;
mod currency;
mod error;
mod ids;
mod kept;
mod luhn;
mod method;
mod money;
mod text;
mod timestamp;

pub use card::{CardDetails, Pan, Phone, WithdrawalRequisites};
pub use card_data::{
    is_card_code_key, sanitize_payout_requisites, sanitize_requisites, sanitize_user_data,
    PAYOUT_NAME_KEYS,
};
pub use card_text::mask_card_numbers;
pub use contact::{Email, HttpUrl, UserData};
pub use currency::Currency;
pub use error::{FieldError, ValidationErrors, ValueError};
pub use ids::{
    DisputeId, MerchantId, MerchantOperationId, MerchantRefundId, OperationId, RefundId, UserId,
};
pub use kept::{Kept, KeptObject};
pub use luhn::{luhn_valid, mask_pan};
pub use method::{Direction, PaymentMethod, Status};
pub use money::{format_minor, Amount, AmountText};
pub use text::{bounded_text, is_refused_control, no_control_characters, CONTROL_CHARACTERS};
pub use timestamp::Timestamp;
