//! Callback adapter: the reqwest notifier and the outbox worker that delivers signed callbacks.
