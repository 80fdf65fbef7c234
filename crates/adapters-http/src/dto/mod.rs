//! DTOs at the edge: JSON request bodies read into domain values, domain values written as
//! JSON answers.

pub mod callback;
pub mod callback_log;
pub mod create;
pub mod dispute;
pub mod movement;
pub mod query;
pub mod refund;
pub mod steps;
pub mod transactions;
pub mod view;
