-- Balance transactions and statements: every merchant entry of the ledger carries the balance
-- it left (`available_after`, `held_after`), so a page of a merchant's movements at any depth,
-- and the opening and closing balance of any day, is read from one entry instead of summed
-- from the start. The operator's fee account has no balance row: its `fee_income` entries
-- keep both NULL.
--
-- A merchant's entries are also dated in the order they were applied: an entry's
-- `created_at` is never before the previous entry of the same balance (`balances.entry_at`,
-- the newest entry's time, is raised to it in the statement that moves the balance), so the
-- entries of a day in `created_at` order are the same as in `id` order, and a day's closing
-- balance is its last entry's.
ALTER TABLE balances ADD COLUMN entry_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ledger ADD COLUMN available_after BIGINT, ADD COLUMN held_after BIGINT;

-- The entries written before this migration get the running sums of their balance in id
-- order, and a time no earlier than the entry before them.
ALTER TABLE ledger DISABLE TRIGGER ledger_append_only;
UPDATE ledger l
SET available_after = s.available_after, held_after = s.held_after, created_at = s.created_at
FROM (
    SELECT id,
           CAST(SUM(available_delta) OVER w AS BIGINT) AS available_after,
           CAST(SUM(held_delta) OVER w AS BIGINT) AS held_after,
           MAX(created_at) OVER w AS created_at
    FROM ledger
    WHERE kind <> 'fee_income'
    WINDOW w AS (PARTITION BY merchant_id, currency ORDER BY id)
) AS s
WHERE l.id = s.id;
ALTER TABLE ledger ENABLE TRIGGER ledger_append_only;
UPDATE balances b
SET entry_at = newest.created_at
FROM (
    SELECT merchant_id, currency, MAX(created_at) AS created_at
    FROM ledger WHERE kind <> 'fee_income'
    GROUP BY merchant_id, currency
) AS newest
WHERE b.merchant_id = newest.merchant_id AND b.currency = newest.currency;

-- Every merchant entry records its balance from now on; the fee account's never. A process
-- of an earlier version still running would write entries without it: they are refused
-- (stop every process before migrating, see docs/operations.md).
ALTER TABLE ledger ADD CONSTRAINT ledger_records_balance
    CHECK ((kind = 'fee_income') = (available_after IS NULL)
        AND (available_after IS NULL) = (held_after IS NULL));

-- A merchant's movements in time order (balance transactions, statements), and the fee
-- account's.
CREATE INDEX ledger_merchant_time ON ledger (merchant_id, currency, created_at, id)
    WHERE kind <> 'fee_income';
CREATE INDEX ledger_fee_income ON ledger (currency, created_at) WHERE kind = 'fee_income';
