-- Back to eight slots: the counts of slots 8 to 63 are added to slot `slot % 8` of the same
-- counter, so every sum the overview reads stays what it was. Stop the gateways of the
-- version with 64 slots first: most of their connections would add to a slot the restored
-- constraint refuses. The table is locked first, so no count lands between the fold and the
-- delete.
LOCK TABLE operation_counts IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO operation_counts (minute, direction, method, status, currency, slot, count, amount)
    SELECT minute, direction, method, status, currency, slot % 8, SUM(count), SUM(amount)
    FROM operation_counts WHERE slot >= 8
    GROUP BY minute, direction, method, status, currency, slot % 8
    ON CONFLICT (minute, direction, method, status, currency, slot)
    DO UPDATE SET count = operation_counts.count + excluded.count,
                  amount = operation_counts.amount + excluded.amount;
DELETE FROM operation_counts WHERE slot >= 8;
ALTER TABLE operation_counts DROP CONSTRAINT operation_counts_slot_check;
ALTER TABLE operation_counts ADD CONSTRAINT operation_counts_slot_check
    CHECK (slot BETWEEN 0 AND 7);
