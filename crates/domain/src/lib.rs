//! The gateway's business core: validated values, the operation state machine,
//! balance and ledger rules, routes, the use cases and the ports adapters plug into.
//!
//! Nothing here performs I/O: storage, HTTP, the provider, time and ids all come
//! in through the traits of [`ports`].

pub mod acquirer;
pub mod attempt;
pub mod callback;
pub mod callback_log;
pub mod circuit;
pub mod console;
pub mod discrepancy;
pub mod dispute;
pub mod fee;
pub mod keyset;
pub mod ledger;
pub mod merchant;
mod names;
pub mod operation;
pub mod operator;
pub mod ports;
pub mod provider;
pub mod refund;
pub mod request;
pub mod route;
pub mod service;
pub mod signature;
pub mod statement;
pub mod story;
pub mod tariffs;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod transactions;
pub mod values;

pub use values::*;
