//! Storage adapter: the domain's storage ports on diesel 2 with r2d2 pools, on embedded SQLite
//! and on PostgreSQL, with the ledger, idempotency and the callback outbox.
//!
//! [`Database`] is the one entry point. It implements
//! [`OperationStore`](domain::ports::OperationStore),
//! [`RefundStore`](domain::ports::RefundStore),
//! [`MerchantDirectory`](domain::ports::MerchantDirectory),
//! [`RouteTable`](domain::ports::RouteTable),
//! [`ProviderDirectory`](domain::ports::ProviderDirectory),
//! [`ProcessRegistry`](domain::ports::ProcessRegistry),
//! [`CallbackOutbox`](domain::ports::CallbackOutbox),
//! [`OperatorStore`](domain::ports::OperatorStore) (the storage of the operator's use cases in
//! `domain::operator`: merchants, routes, providers, manual balance moves, `ledger verify`,
//! and an operation's ledger entries and callbacks for `operation show`) and
//! [`ConsoleStore`](domain::ports::ConsoleStore) (the operator console's accounts, sessions,
//! audit log, operations search, events and overview counters).
//!
//! * URLs: `sqlite://PATH` (relative, e.g. `sqlite://gateway.db`), `sqlite:///ABSOLUTE/PATH`,
//!   `sqlite:PATH`, `postgres://...`, `postgresql://...`.
//! * Diesel is synchronous: every unit of work runs on a blocking thread (`spawn_blocking`)
//!   with one pooled connection and one transaction, retried a few times on SQLite busy and
//!   PostgreSQL serialization failures or deadlocks.
//! * Money: BIGINT minor units; a database CHECK keeps `available` and `held` non-negative, and
//!   every move is one conditional `UPDATE` (never read-decide-write) with its ledger entry.
//! * A final status is written `WHERE status = 3`, with its moves and its queued callback, in
//!   one transaction: it happens at most once however completions race.
//! * Idempotency: the operation row is inserted first under a unique index on
//!   (merchant, direction, merchantOperationId); the violation becomes `Duplicate`. Refunds
//!   likewise, on (merchant, merchantRefundId).
//! * Refunds: a new refund is checked and written with its hold under a lock on its deposit
//!   (`SELECT ... FOR UPDATE` on PostgreSQL; SQLite's one writer), so concurrent refunds of one
//!   deposit never exceed its amount. Its entries carry `refund_id` and, as `operation_id`,
//!   the deposit's id.
//! * The callback outbox is keyed by `id`: the operation's id for its own callback, the
//!   refund's id for a refund's, which sits beside its deposit's.
//! * SQLite runs in WAL mode with `BEGIN IMMEDIATE` write transactions, one writer at a time
//!   per process, which commits the writes queued meanwhile together, each in a savepoint of
//!   its own and each answered after the commit (see `sqlite_group`), and leaves WAL
//!   checkpoints to a thread of their own (see `checkpoint`); PostgreSQL runs read committed.
//! * Routes, merchants and providers are served from memory for up to 2 s (changes made
//!   through this handle show at once); a merchant with its secrets for at most
//!   [`SECRETS_TTL`] (1 s), and a rotation returns only after that long, so a rotation made
//!   by any process applies from the next request after it returned (see `directory`). The
//!   merchants of a claimed batch of callbacks are read with their secrets each time.
//! * PostgreSQL: callback attempt records are written together like the common creations
//!   (see `group`): one statement updates the outbox rows still leased by their recorder and
//!   logs their attempts and events; a failed group is written again row by row.
//! * Merchant secrets are versioned rows of `merchant_keys`, revoked ones kept. A rotation
//!   adds the next version and ends the older ones under a lock on the merchant's row
//!   (`SELECT ... FOR UPDATE` on PostgreSQL; SQLite's one writer), so concurrent rotations get
//!   distinct versions. A stored fingerprint carries the version of the secret that keyed it.
//! * With a master key ([`DbOptions::master_key`], `GATEWAY_MASTER_KEY`), merchant secrets and
//!   provider credentials are written AES-256-GCM encrypted (see `crypto`);
//!   [`Database::check_secrets`] stops a process whose key cannot read them, and
//!   [`Database::encrypt_secrets`] converts a database written without a key.
//! * Provider attempts are written with their operation and leased to the reconciler like
//!   callbacks (`FOR UPDATE SKIP LOCKED` on PostgreSQL, the one writer on SQLite).
//! * Serving processes report themselves and their circuit breakers to `gateway_processes`
//!   and `process_circuits`; each report forgets the processes silent for an hour.
//! * Every change to an operation (its creation, status, waiting step, provider attempts,
//!   discrepancies, refunds, callback deliveries) writes its event to `operation_events`,
//!   and creations and status changes their per-minute counters to `operation_counts`, in
//!   the change's own transaction (see `journal`); PostgreSQL's one-statement writes stay
//!   one statement. Counters are written last, after balances, on the connection's own slot
//!   (PostgreSQL) or one of eight drawn at random (SQLite).
//! * A claimed callback whose merchant is disabled is held (`callback_outbox.state = 'held'`)
//!   under a share lock on the merchant's row, re-reading `enabled`; enabling the merchant
//!   releases its held callbacks in the enable's own transaction (see `outbox::held`).
//! * A discrepancy is resolved once, guarded by `resolved_at IS NULL`, by an operator or by
//!   a manual ledger entry naming its operation in the entry's own transaction (see
//!   `discrepancies`).
//! * Migrations are linear: a database holds every embedded migration up to the newest it
//!   lists, and one that lists a migration this binary does not embed is refused (see
//!   [`Database::migrate`]). Work on stored rows that SQL cannot do (masking card numbers
//!   inside text) is recorded by its migration as a data step and done by `migrate` right
//!   after, in batches (see `steps`).
//!
//! Both backends share one query code path through diesel's `MultiConnection`; the few
//! statements that differ (`BEGIN IMMEDIATE`, `FOR UPDATE SKIP LOCKED`, reading a new row's
//! id) are written per backend.

mod admin;
mod binds;
mod cache;
mod chain;
mod checkpoint;
mod conn;
mod console;
mod crypto;
mod database;
mod directory;
mod discrepancies;
mod flows;
mod group;
mod jobs;
mod journal;
mod ledger_reads;
mod migrate;
mod outbox;
mod processes;
mod providers;
mod queue;
mod rows;
mod schema;
mod secrets;
mod sqlite_group;
mod sqlite_units;
mod steps;
mod store;
mod story;
mod target;
mod tariffs;
mod work;

pub use crypto::{MasterKey, MasterKeyError};
pub use database::{Backend, Database, DbOptions, SECRETS_TTL};
pub use providers::ProviderSignals;
pub use secrets::SecretsState;
