//! The gateway application: configuration, CLI commands, wiring and background workers.

pub mod application;
pub mod cli;
pub mod commands;
pub mod config;
pub mod demo;
mod processes;
pub mod protocols;
mod signals;
pub mod system;
pub mod telemetry;
