-- The bare deposit: what the gateway writes for one card deposit, as one INSERT into the
-- real operations table (migrated by `gateway migrate`), with a unique merchantOperationId.
-- Variables: nmerchants (-D); merchants are 00000000-0000-4000-8000-0000000000NN.
\set m random(0, :nmerchants - 1)
\set amount random(100, 999999)
\set user random(1, 100000)
INSERT INTO operations (id, merchant_id, direction, method, status, amount, currency, user_id, merchant_operation_id, callback_url, success_url, fail_url, processing_url, requisites, user_data, action, error_code, error_message, route_id, expires_at, provider_state, due_at, created_at, updated_at, fingerprint, fingerprint_key) VALUES (bench_uuid7(), '00000000-0000-4000-8000-' || lpad(:m::text, 12, '0'), 'deposit', 'card', 3, :amount, 'RUB', 'user-' || :user, 'pgbench-d-' || bench_uuid7(), 'http://127.0.0.1:18099/callback', NULL, NULL, NULL, NULL, NULL, '{"kind":"redirect","url":"http://127.0.0.1:18080/pay/00000000-0000-4000-8000-000000000000"}', NULL, NULL, 1, (extract(epoch from clock_timestamp()) * 1000)::bigint + 600000, NULL, NULL, (extract(epoch from clock_timestamp()) * 1000)::bigint, (extract(epoch from clock_timestamp()) * 1000)::bigint, md5(random()::text) || md5(random()::text), 1);
