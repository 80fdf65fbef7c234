-- Held callbacks: a callback that comes due while its merchant is disabled waits in state
-- `held` (no attempt made or counted, its due time kept) and goes back to `pending` when the
-- merchant is enabled again.
--
-- The state's domain (migration `hot_path`) takes one more value. The widened rule accepts
-- every value the narrower one did, so it is added NOT VALID: stored rows are not scanned
-- (which would hold a SHARE lock on the outbox, stopping claims and records, for the whole
-- scan); every row written from now on is checked.
ALTER DOMAIN callback_state DROP CONSTRAINT callback_state_check;
ALTER DOMAIN callback_state ADD CONSTRAINT callback_state_check
    CHECK (VALUE IN ('pending', 'delivered', 'failed', 'held')) NOT VALID;

-- Held callbacks by merchant: an enable releases its merchant's, and the worker's sweep
-- (held callbacks whose merchant is enabled) finds none in an empty index. Only held rows
-- are in it: queuing, claiming and recording a callback never write to it, and `merchant_id`,
-- never updated, keeps a claim's lease update in place (HOT), as before. Building it reads
-- the whole outbox while writes to it wait (the operations guide says to stop the gateways
-- for this upgrade); an index of no rows is quick to build, the read is the cost.
CREATE INDEX callback_outbox_held ON callback_outbox (merchant_id) WHERE state = 'held';
