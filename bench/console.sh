#!/usr/bin/env bash
# The console on a large table (`just bench-console`; docs/console.md shows the results).
#
# Creates a fresh PostgreSQL database, fills it with BENCH_CONSOLE_ROWS operations (1,000,000)
# spread over 30 days and 20 merchants, with the overview's counters built as the gateway
# keeps them, then signs in to the console and times, over BENCH_CONSOLE_REPEAT (20)
# requests each: the overview, the first page of operations, a filtered page (a merchant,
# processing, card), the next page of that filter (by its cursor), an exact search by
# merchantOperationId and a date-range page. Prints one table of p50 / max in ms.
#
# Knobs: BENCH_PG_URL (postgres://postgres@127.0.0.1:5432), BENCH_CONSOLE_PORT (18180).
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${BENCH_CONSOLE_ROWS:-1000000}
REPEAT=${BENCH_CONSOLE_REPEAT:-20}
PG_URL=${BENCH_PG_URL:-postgres://postgres@127.0.0.1:5432}
PORT=${BENCH_CONSOLE_PORT:-18180}
DB=console_bench_$(date +%s)
URL="$PG_URL/$DB"
GATEWAY=target/release/gateway
WORK=$(mktemp -d)
export RUST_LOG=${RUST_LOG:-warn}

cargo build --release -q -p app
psql -q "$PG_URL/postgres" -c "CREATE DATABASE $DB" >/dev/null
cleanup() {
  [[ -n "${SERVER:-}" ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
  psql -q "$PG_URL/postgres" -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

export GATEWAY_DATABASE_URL=$URL
$GATEWAY migrate >/dev/null
merchants=()
for i in $(seq 1 20); do
  merchants+=("$($GATEWAY merchant create --name "bench-$i" --json | sed -n 's/.*"merchantId": "\([^"]*\)".*/\1/p')")
done
list=$(printf "'%s'," "${merchants[@]}")
list="ARRAY[${list%,}]"

echo "seeding $ROWS operations..." >&2
start=$(date +%s)
psql -q -v ON_ERROR_STOP=1 "$URL" >/dev/null <<SQL
\set now_ms $(date +%s%3N)
INSERT INTO operations (id, merchant_id, direction, method, status, amount, currency, user_id,
                        merchant_operation_id, fingerprint, fingerprint_key, error_code,
                        error_message, route_id, created_at, updated_at, provider)
SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-8'
         || substr(h, 18, 3) || '-' || substr(h, 21, 12),
       ($list)[1 + i % 20], 'deposit',
       (ARRAY['card', 'sbp', 'sbp_qr', 'bank_a_pay'])[1 + i % 4],
       CASE WHEN i % 10 < 7 THEN 1 WHEN i % 10 < 9 THEN 2 ELSE 3 END,
       10000 + (i::bigint * 7919) % 990000, 'RUB', 'user-' || (i % 5000), 'order-' || i, h || h, 1,
       CASE WHEN i % 10 IN (7, 8) THEN 'CardDeclined' END,
       CASE WHEN i % 10 IN (7, 8) THEN 'The card was declined.' END,
       1, :now_ms - (i::bigint * 2592000000 / $ROWS), :now_ms - (i::bigint * 2592000000 / $ROWS), 'sandbox'
FROM (SELECT i, md5(i::text || 'console-bench') AS h FROM generate_series(1, $ROWS) AS i) AS s;
INSERT INTO operation_counts (minute, direction, method, status, currency, slot, count, amount)
SELECT created_at / 60000, direction, method, status, currency, 0, COUNT(*), SUM(amount)
FROM operations GROUP BY 1, 2, 3, 4, 5;
VACUUM ANALYZE;
SQL
echo "seeded in $(( $(date +%s) - start )) s" >&2

password="console bench password"
printf '%s\n' "$password" | $GATEWAY operator create --name bench --role viewer --password-stdin >/dev/null
GATEWAY_ADMIN=on GATEWAY_BIND=127.0.0.1:$PORT GATEWAY_SANDBOX=true $GATEWAY serve >"$WORK/serve.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done

base="http://127.0.0.1:$PORT/admin"
jar="$WORK/cookies"
csrf=$(curl -s -c "$jar" -b "$jar" "$base/login" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -1)
code=$(curl -s -o /dev/null -w '%{http_code}' -c "$jar" -b "$jar" \
  --data-urlencode "name=bench" --data-urlencode "password=$password" --data-urlencode "csrf=$csrf" "$base/login")
[[ "$code" == 303 ]] || { echo "sign-in failed: HTTP $code" >&2; cat "$WORK/serve.log" >&2; exit 1; }

# p50 and max of $REPEAT GETs of $1 (after one warm-up), in ms; fails on a non-200.
timed() {
  local url=$1 times=()
  curl -s -o /dev/null -b "$jar" "$url"
  for _ in $(seq 1 "$REPEAT"); do
    read -r code secs < <(curl -s -o /dev/null -b "$jar" -w '%{http_code} %{time_total}\n' "$url")
    [[ "$code" == 200 ]] || { echo "GET $url: HTTP $code" >&2; exit 1; }
    times+=("$secs")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 * 1000 } END { printf "%.1f | %.1f", a[int((NR + 1) / 2)], a[NR] }'
}

# Operation i belongs to merchant i % 20, has method i % 4 and status by i % 10: merchant 9's
# operations are all processing sbp deposits (50,000 of them).
merchant=${merchants[9]}
filtered="$base/operations?merchant=$merchant&status=3&method=sbp"
next=$(curl -s -b "$jar" "$filtered" | sed -n 's/.*rel="next" href="\([^"]*\)".*/\1/p' | head -1 | sed 's/&amp;/\&/g')
[[ -n "$next" ]] || { echo "the filtered page has no next page" >&2; exit 1; }
from=$(date -u -d '10 days ago' +%Y-%m-%d)
to=$(date -u -d '9 days ago' +%Y-%m-%d)

echo
echo "Console on PostgreSQL, $ROWS operations ($REPEAT requests each; ms)"
echo
echo "| page | p50 | max |"
echo "|---|---|---|"
echo "| overview | $(timed "$base") |"
echo "| operations, first page | $(timed "$base/operations") |"
echo "| merchant + processing + sbp | $(timed "$filtered") |"
echo "| the same, next page (cursor) | $(timed "http://127.0.0.1:$PORT$next") |"
echo "| exact search by merchantOperationId | $(timed "$base/operations?q=order-500000") |"
echo "| one day of operations | $(timed "$base/operations?from=$from&to=$to") |"
