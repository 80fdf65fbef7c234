-- Back to entries without the balance they left. The times made monotonic stay as they are.
ALTER TABLE ledger DROP CONSTRAINT ledger_records_balance;
DROP INDEX ledger_fee_income;
DROP INDEX ledger_merchant_time;
ALTER TABLE ledger DROP COLUMN available_after, DROP COLUMN held_after;
ALTER TABLE balances DROP COLUMN entry_at;
