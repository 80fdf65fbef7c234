//! End-to-end tests of the hosted pages and the sandbox endpoint: a real gateway on SQLite with
//! the sandbox provider, driven through form posts like a browser without JavaScript.

mod bank;
mod card;
mod helpers;
mod lifecycle;
mod logs;
mod sandbox;
mod server;
