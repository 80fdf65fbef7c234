-- As on PostgreSQL: a claim sets only the leases, so no index needs to follow them; a
-- process's leases, released at its shutdown, are found among the pending rows
-- (`callback_outbox_due`).
DROP INDEX callback_outbox_leases;
