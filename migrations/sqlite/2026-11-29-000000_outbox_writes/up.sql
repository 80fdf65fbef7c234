-- As on PostgreSQL: the outbox is no longer indexed by `operation_id`. Only an operation's
-- timeline read that index, and it finds the same rows by their keys: the operation's own
-- id and its refunds' ids (`refunds_operation`). (PostgreSQL's change to the outbox's
-- fillfactor has no SQLite counterpart: SQLite updates a row where it is.)
DROP INDEX callback_outbox_operation;
