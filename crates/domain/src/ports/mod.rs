//! The ports adapters implement, one file a port, below everything but the domain's values
//! and records: a port file imports no use case. Each method says what it must return on
//! failure.

mod acquirer;
mod callback_format;
mod callback_log;
mod callback_outbox;
mod clock;
mod console_store;
mod dispute_store;
mod errors;
mod hosted_checkout;
mod id_generator;
mod ledger_reader;
mod merchant_directory;
mod operation_store;
mod operator_store;
mod payment_provider;
mod process_registry;
mod provider_directory;
mod qr_encoder;
mod refund_store;
mod route_table;
mod tariff_store;

pub use acquirer::*;
pub use callback_format::*;
pub use callback_log::*;
pub use callback_outbox::*;
pub use clock::*;
pub use console_store::*;
pub use dispute_store::*;
pub use errors::*;
pub use hosted_checkout::*;
pub use id_generator::*;
pub use ledger_reader::*;
pub use merchant_directory::*;
pub use operation_store::*;
pub use operator_store::*;
pub use payment_provider::*;
pub use process_registry::*;
pub use provider_directory::*;
pub use qr_encoder::*;
pub use refund_store::*;
pub use route_table::*;
pub use tariff_store::*;
