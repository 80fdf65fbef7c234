-- The delivery path's writes, made cheaper.
--
-- A claim of due callbacks sets only their leases (`lease_owner`, `lease_until`). With neither
-- column indexed and room left in each page, PostgreSQL writes that update in place (a HOT
-- update): no new entry in any of the outbox's indexes, and no dead one left in
-- `callback_outbox_due` for the next claim to step over. A process's leases, released at its
-- shutdown, are found among the pending rows (`callback_outbox_due`): only pending rows are
-- ever claimed.
DROP INDEX callback_outbox_leases;
ALTER TABLE callback_outbox SET (fillfactor = 70);

-- An attempt is logged only by the statement that records it, joined to the outbox row it
-- has just updated, and outbox rows are never deleted: the reference was checked once per
-- attempt for nothing (a query of its own per row, about a tenth of the server's time while
-- callbacks are delivered). As with `operation_events`, no foreign key on the hot path.
ALTER TABLE callback_attempts DROP CONSTRAINT callback_attempts_callback_id_fkey;
