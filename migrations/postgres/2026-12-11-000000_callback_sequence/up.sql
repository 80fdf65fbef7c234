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

-- A merchant's callbacks in one direction, newest first (`GET /api/v1/callbacks`). Its
-- columns never change, so a delivery's update of the row stays free to be HOT.
CREATE INDEX callback_outbox_merchant ON callback_outbox (merchant_id, direction, created_at, id);
