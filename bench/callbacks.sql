-- The callback phase's starting point: :n approved card deposits, each with its callback
-- queued and due, exactly as `OperationStore::finish` leaves them (operation, ledger entry,
-- balance, outbox row with the contract's body), spread over the merchants `gateway merchant
-- create` made. Loaded while no gateway runs, so the delivery is timed from a standing start.
-- Variables: n, url.
CREATE TEMP TABLE m AS
SELECT id, (row_number() OVER (ORDER BY id) - 1)::int AS k, count(*) OVER ()::int AS total
FROM merchants;

CREATE TEMP TABLE t AS SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms;

INSERT INTO operations (id, merchant_id, direction, method, status, amount, currency, user_id,
    merchant_operation_id, callback_url, action, route_id, expires_at, created_at, updated_at,
    fingerprint, fingerprint_key)
SELECT gen_random_uuid()::text, m.id, 'deposit', 'card', 1, 10000 + g, 'RUB', 'user-' || g,
       'bench-callback-' || g, :'url', NULL, 1, NULL, t.now_ms - 1000, t.now_ms,
       md5(g::text) || md5((g + 1)::text), 1
FROM generate_series(1, :n) AS g
JOIN m ON m.k = g % m.total
CROSS JOIN t;

-- Each entry with the balance it left: the merchant's running sum.
INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, operation_id, created_at,
    available_after, held_after)
SELECT merchant_id, 'RUB', 'deposit_approved', amount, 0, id, updated_at,
       sum(amount) OVER (PARTITION BY merchant_id ORDER BY id ROWS UNBOUNDED PRECEDING), 0
FROM operations WHERE status = 1
ORDER BY merchant_id, id;

INSERT INTO balances (merchant_id, currency, available, held)
SELECT merchant_id, 'RUB', sum(amount), 0 FROM operations WHERE status = 1 GROUP BY merchant_id
ON CONFLICT (merchant_id, currency) DO UPDATE SET available = balances.available + excluded.available;

INSERT INTO callback_outbox (id, operation_id, merchant_id, direction, url, body, state,
    attempts, failures_in_run, next_attempt_at, created_at, updated_at)
SELECT id, id, merchant_id, 'deposit', callback_url,
       -- The body as the gateway writes it: compact, keys in serde_json's (sorted) order.
       '{"data":{"amount":"' || (amount / 100)::text || '.' || lpad((amount % 100)::text, 2, '0')
       || '","creditedAmount":"' || (amount / 100)::text || '.' || lpad((amount % 100)::text, 2, '0')
       || '","currency":"' || currency
       || '","fee":"0.00","merchantOperationId":' || to_json(merchant_operation_id)::text
       || ',"operationId":"' || id
       || '","paymentMethod":"' || method
       || '","sequence":1,"status":' || status
       || ',"type":"deposit","updatedAt":"'
       || to_char(to_timestamp(updated_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
       || '","userId":' || to_json(user_id)::text || '}}',
       'pending', 0, 0, updated_at, updated_at, updated_at
FROM operations WHERE status = 1;
