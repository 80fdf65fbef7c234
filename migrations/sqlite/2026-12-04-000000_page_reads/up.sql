-- The last page read of each acquirer deposit's payment. `/pay/{id}` and `/pay/{id}/return`
-- read a processing deposit from its acquirer at most once per operation per 2 s, across
-- every gateway process on the database: each read is claimed here first, with one
-- conditional write (an upsert that changes the row only when its last read is old enough;
-- whoever changed a row won the read).
--
-- One row per deposit whose page ever read its acquirer. No foreign key: a claim is made just
-- after its operation was read, and operations are never deleted.
CREATE TABLE page_reads (
    operation_id TEXT PRIMARY KEY NOT NULL,
    -- When the last read was claimed, in milliseconds since the epoch.
    read_at      BIGINT NOT NULL
);
