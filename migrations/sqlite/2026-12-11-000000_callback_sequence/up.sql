-- Callbacks numbered per operation, and read by their merchants.
--
-- `sequence` is a callback's number among its operation's: the operation's own callback, its
-- refunds' and its disputes' share one count, 1, 2, ... in the order they were queued. The
-- count is kept on the operation's row (`callback_sequence`, the last number drawn), drawn in
-- the unit of work that queues the callback. Callbacks queued before this change are
-- numbered in the order they were created.
ALTER TABLE operations ADD COLUMN callback_sequence BIGINT NOT NULL DEFAULT 0;
ALTER TABLE callback_outbox ADD COLUMN sequence BIGINT NOT NULL DEFAULT 0;

UPDATE callback_outbox SET sequence = r.n
FROM (SELECT id, row_number() OVER (PARTITION BY operation_id ORDER BY created_at, id) AS n
      FROM callback_outbox) AS r
WHERE r.id = callback_outbox.id;

UPDATE operations SET callback_sequence = c.n
FROM (SELECT operation_id, COUNT(*) AS n FROM callback_outbox GROUP BY operation_id) AS c
WHERE c.operation_id = operations.id;

-- A merchant's callbacks in one direction, newest first (`GET /api/v1/callbacks`): one row
-- per callback, written with it and never changed (as on PostgreSQL, where an index on the
-- outbox would cost every delivery).
CREATE TABLE merchant_callbacks (
    merchant_id TEXT NOT NULL,
    direction   TEXT NOT NULL CHECK (direction IN ('deposit', 'withdrawal')),
    created_at  BIGINT NOT NULL,
    callback_id TEXT NOT NULL,
    PRIMARY KEY (merchant_id, direction, created_at, callback_id)
) WITHOUT ROWID;
INSERT INTO merchant_callbacks (merchant_id, direction, created_at, callback_id)
    SELECT merchant_id, direction, created_at, id FROM callback_outbox;

-- A merchant's replay of its failed callbacks since a time (`POST /api/v1/callbacks/replay`)
-- finds them without reading other merchants' failures. Only a failing delivery writes here.
CREATE INDEX callback_outbox_failed_merchant ON callback_outbox (merchant_id, created_at)
    WHERE state = 'failed';
