-- Time-ordered ids, as the gateway gives operations (UUID version 7: 48 bits of Unix
-- milliseconds, then random bits), so the bare rows land in the indexes as the gateway's do.
CREATE FUNCTION bench_uuid7() RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT (lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
          || '7' || substr(md5(random()::text), 1, 3)
          || '8' || substr(md5(random()::text), 1, 15))::uuid::text
$$;
-- Merchants for the bare pgbench runs, on a database `gateway migrate` created:
-- :nmerchants merchants with every method and a large RUB balance (via a ledger entry, so
-- `gateway ledger verify` holds on this database too).
INSERT INTO merchants (id, name, enabled, created_at)
SELECT '00000000-0000-4000-8000-' || lpad(g::text, 12, '0'), 'pgbench-' || g, 1, 0
FROM generate_series(0, :nmerchants - 1) AS g;
-- Version 1 of each direction's secret, in clear (the pgbench scripts sign nothing).
INSERT INTO merchant_keys (merchant_id, direction, version, secret, created_at)
SELECT '00000000-0000-4000-8000-' || lpad(g::text, 12, '0'), 'deposit', 1,
       md5(g::text) || md5(g::text), 0
FROM generate_series(0, :nmerchants - 1) AS g
UNION ALL
SELECT '00000000-0000-4000-8000-' || lpad(g::text, 12, '0'), 'withdrawal', 1,
       md5((-g)::text) || md5((-g)::text), 0
FROM generate_series(0, :nmerchants - 1) AS g;
INSERT INTO merchant_methods (merchant_id, direction, method)
SELECT m.id, d.direction, d.method FROM merchants m,
  (VALUES ('deposit', 'card'), ('withdrawal', 'sbp')) AS d (direction, method);
INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, created_at,
    available_after, held_after)
SELECT id, 'RUB', 'manual_credit', 100000000000000, 0, 0, 100000000000000, 0 FROM merchants;
INSERT INTO balances (merchant_id, currency, available, held)
SELECT id, 'RUB', 100000000000000, 0 FROM merchants;
