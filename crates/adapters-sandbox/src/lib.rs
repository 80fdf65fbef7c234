//! The sandbox payment provider: a test-mode bank with scripted outcomes and QR codes.
//!
//! [`SandboxProvider`] implements the domain's `PaymentProvider` port with the fixed rules of
//! the sandbox in docs/api.md. The pure helpers ([`card_outcome`], [`sbp_banks`], [`qr_png_data_uri`],
//! the URL builders and the test-card constants) are for the hosted pages.

mod actions;
mod checkout;
mod error;
mod plan;
mod provider;
mod qr;
mod rules;

pub use actions::{pay_url, qr_target_url};
pub use error::SandboxError;
pub use provider::{SandboxConfig, SandboxProvider, DEFAULT_SETTLE_AFTER};
pub use qr::{qr_png, qr_png_data_uri, PngQr, QrError};
pub use rules::{
    card_outcome, declined_at_creation, payout_outcome, sbp_bank_name, sbp_banks, CARD_APPROVE,
    CARD_DECLINED, CARD_INSUFFICIENT_FUNDS, CONFIRMATION_CODE, PHONE_RECIPIENT_NOT_FOUND,
    PROVIDER_NAME, RECEIVING_BANK_NAME, RECEIVING_CARD_NUMBER, RECEIVING_HOLDER_NAME,
};
