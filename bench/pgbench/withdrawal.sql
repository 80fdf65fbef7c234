-- The bare withdrawal: the gateway's unit of work for one SBP payout, statement for
-- statement: the operation, then the conditional balance update (available -= amount,
-- held += amount where both stay non-negative) with its hold's ledger entry recording the
-- balance it left, as one statement, in one transaction.
-- The operation's id is time-ordered like the gateway's (bench_uuid7, setup.sql) and comes
-- back from its INSERT (\gset) for the ledger entry.
-- Variables: nmerchants (-D); merchants are 00000000-0000-4000-8000-0000000000NN, each
-- with a balance row in RUB.
\set m random(0, :nmerchants - 1)
\set amount random(100, 9999)
\set neg -1 * :amount
\set user random(1, 100000)
BEGIN;
INSERT INTO operations (id, merchant_id, direction, method, status, amount, currency, user_id, merchant_operation_id, callback_url, success_url, fail_url, processing_url, requisites, user_data, action, error_code, error_message, route_id, expires_at, provider_state, due_at, created_at, updated_at, fingerprint, fingerprint_key) VALUES (bench_uuid7(), '00000000-0000-4000-8000-' || lpad(:m::text, 12, '0'), 'withdrawal', 'sbp', 3, :amount, 'RUB', 'user-' || :user, 'pgbench-w-' || bench_uuid7(), 'http://127.0.0.1:18099/callback', NULL, NULL, NULL, '{"accountName":"Ivan Petrov","bankName":"Bank A","phone":"+79001234567"}', NULL, NULL, NULL, NULL, 8, NULL, '{"sandbox":{"outcome":"approve"}}', (extract(epoch from clock_timestamp()) * 1000)::bigint + 3600000, (extract(epoch from clock_timestamp()) * 1000)::bigint, (extract(epoch from clock_timestamp()) * 1000)::bigint, md5(random()::text) || md5(random()::text), 1) RETURNING id \gset
WITH b AS (UPDATE balances SET available = available + :neg, held = held + :amount, entry_at = GREATEST(entry_at, (extract(epoch from clock_timestamp()) * 1000)::bigint) WHERE merchant_id = '00000000-0000-4000-8000-' || lpad(:m::text, 12, '0') AND currency = 'RUB' AND available + :neg >= 0 AND held + :amount >= 0 RETURNING available, held, entry_at) INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, operation_id, created_at, available_after, held_after) SELECT '00000000-0000-4000-8000-' || lpad(:m::text, 12, '0'), 'RUB', 'withdrawal_hold', :neg, :amount, :id, b.entry_at, b.available, b.held FROM b;
COMMIT;
