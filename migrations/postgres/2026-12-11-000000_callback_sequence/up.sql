-- Callbacks numbered per operation, and read by their merchants.
--
-- `sequence` is a callback's number among its operation's: the operation's own callback, its
-- refunds' and its disputes' share one count, 1, 2, ... in the order they were queued. The
-- count is kept on the operation's row (`callback_sequence`, the last number drawn), drawn by
-- the statement that queues the callback: the row's lock orders two callbacks of one deposit
-- queued at once, and no index on the outbox is needed to find the last number. Callbacks
-- queued before this change are numbered in the order they were created.
ALTER TABLE operations ADD COLUMN callback_sequence BIGINT NOT NULL DEFAULT 0;
ALTER TABLE callback_outbox ADD COLUMN sequence BIGINT NOT NULL DEFAULT 0;

UPDATE callback_outbox c SET sequence = r.n
FROM (SELECT id, row_number() OVER (PARTITION BY operation_id ORDER BY created_at, id) AS n
      FROM callback_outbox) r
WHERE r.id = c.id;

UPDATE operations o SET callback_sequence = c.n
FROM (SELECT operation_id, COUNT(*) AS n FROM callback_outbox GROUP BY operation_id) c
WHERE c.operation_id = o.id;

-- A merchant's callbacks in one direction, newest first (`GET /api/v1/callbacks`): one row
-- per callback, written by the statement that queues it and never changed. Not an index on
-- the outbox: a delivery's update of an outbox row is not HOT (it takes the row out of
-- `callback_outbox_due`), so it writes an entry into every index of the outbox, and one more
-- index there cost a tenth of the delivery rate.
CREATE TABLE merchant_callbacks (
    merchant_id TEXT NOT NULL,
    -- Copied from the outbox row in the statement that writes both, which checks it.
    direction   TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    callback_id TEXT NOT NULL,
    PRIMARY KEY (merchant_id, direction, created_at, callback_id)
);
INSERT INTO merchant_callbacks (merchant_id, direction, created_at, callback_id)
    SELECT merchant_id, direction, created_at, id FROM callback_outbox;

-- A merchant's replay of its failed callbacks since a time (`POST /api/v1/callbacks/replay`)
-- finds them without reading other merchants' failures. Only a failing delivery writes here.
CREATE INDEX callback_outbox_failed_merchant ON callback_outbox (merchant_id, created_at)
    WHERE state = 'failed';
