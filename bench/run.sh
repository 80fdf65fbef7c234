#!/usr/bin/env bash
# The gateway's benchmark (`just bench` or `bash bench/run.sh`); docs/performance.md explains it.
#
# In one run on this machine:
#   1. starts PostgreSQL if needed and creates fresh databases;
#   2. runs the bare transactions with pgbench (deposit insert, withdrawal transaction);
#   3. drives `gateway serve` on PostgreSQL over HTTP with pre-signed requests (wrk);
#   4. does the same on the embedded SQLite database;
#   5. times the delivery of 10,000 callbacks to a local receiver;
#   6. drives payouts routed to two acquirer-sim processes on PostgreSQL, first with the
#      primary healthy, then with it down and its circuit open (served by the secondary),
#      at BENCH_FAILOVER_CONNECTIONS (8) connections;
#   7. prints one table (also written to $OUT/table.md).
#
# Knobs (environment): BENCH_DURATION (s, 15), BENCH_CONNECTIONS (64), BENCH_PGBENCH_CLIENTS
# (16), BENCH_MERCHANTS (16), BENCH_REQUESTS (pre-signed requests per phase, 450000),
# BENCH_CALLBACKS (10000), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432), BENCH_PORT
# (18080), BENCH_RECEIVER_PORT (18099), BENCH_OUT (bench/out/DATE), RUST_LOG (warn).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

DURATION=${BENCH_DURATION:-15}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
PGBENCH_CLIENTS=${BENCH_PGBENCH_CLIENTS:-16}
MERCHANTS=${BENCH_MERCHANTS:-16}
REQUESTS=${BENCH_REQUESTS:-450000}
CALLBACKS=${BENCH_CALLBACKS:-10000}
PG_URL=${BENCH_PG_URL:-postgres://postgres@127.0.0.1:5432}
PORT=${BENCH_PORT:-18080}
RECEIVER_PORT=${BENCH_RECEIVER_PORT:-18099}
WRK_THREADS=${BENCH_WRK_THREADS:-2}
PHASES=" ${BENCH_PHASES:-pgbench postgres sqlite callbacks failover} "
SIM_PORT=${BENCH_SIM_PORT:-18101}
# Connections of the failover phase: below saturation, so its latencies show the path a
# payout takes (skipping the primary or not) rather than queueing.
FAILOVER_CONNECTIONS=${BENCH_FAILOVER_CONNECTIONS:-8}
export RUST_LOG=${RUST_LOG:-warn}
OUT=${BENCH_OUT:-$ROOT/bench/out/$(date +%Y%m%d-%H%M%S)}
RUN_ID=$(date +%s)
BASE="http://127.0.0.1:$PORT"
CALLBACK_URL="http://127.0.0.1:$RECEIVER_PORT/callback"
mkdir -p "$OUT"
RESULTS="$OUT/results.jsonl"
: >"$RESULTS"

say() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

# --- 0. tools ---------------------------------------------------------------------------

need() { # need COMMAND DEBIAN_PACKAGE
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing $2 (for $1)"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
  fi
  command -v "$1" >/dev/null 2>&1 || die "$1 is missing: install the Debian package $2 (apt-get install $2)"
}
need wrk wrk
need pgbench postgresql-client
need psql postgresql-client
need python3 python3
need curl curl
need cargo cargo

# --- 1. PostgreSQL and the binaries -----------------------------------------------------

PG_HOSTPORT=${PG_URL#*@}
PG_HOST=${PG_HOSTPORT%%:*}
PG_PORT=${PG_HOSTPORT##*:}
if ! pg_isready -h "$PG_HOST" -p "$PG_PORT" -q 2>/dev/null; then
  say "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  for _ in $(seq 1 30); do pg_isready -h "$PG_HOST" -p "$PG_PORT" -q && break; sleep 1; done
  pg_isready -h "$PG_HOST" -p "$PG_PORT" -q || die "PostgreSQL does not answer at $PG_HOST:$PG_PORT"
fi

say "building the gateway and the callback receiver (release)"
cargo build --release -q -p app --bin gateway --example bench_receiver
cargo build --release -q -p acquirer-sim
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
GATEWAY=$TARGET_DIR/release/gateway
SIMULATOR=$TARGET_DIR/release/acquirer-sim
RECEIVER=$TARGET_DIR/release/examples/bench_receiver
[ -x "$GATEWAY" ] && [ -x "$RECEIVER" ] && [ -x "$SIMULATOR" ] ||
  die "built binaries not found under $TARGET_DIR/release"

psql_admin() { psql "$PG_URL/postgres" -v ON_ERROR_STOP=1 -qAt "$@"; }
fresh_db() { # fresh_db NAME: drops and creates it, runs the gateway's migrations
  psql_admin -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1" >/dev/null
  GATEWAY_DATABASE_URL="$PG_URL/$1" "$GATEWAY" migrate >/dev/null 2>&1
}

# Merchants created as an operator would, with a balance large enough for every withdrawal.
make_merchants() { # make_merchants DATABASE_URL FILE
  local url=$1 file=$2 i
  {
    echo '['
    for i in $(seq 1 "$MERCHANTS"); do
      [ "$i" -gt 1 ] && echo ','
      GATEWAY_DATABASE_URL=$url "$GATEWAY" merchant create --name "bench-$i" --json 2>/dev/null
    done
    echo ']'
  } >"$file"
  python3 -c 'import json,sys; [print(m["merchantId"]) for m in json.load(open(sys.argv[1]))]' "$file" |
    while read -r id; do
      GATEWAY_DATABASE_URL=$url "$GATEWAY" balance credit --merchant "$id" --amount 100000000.00 >/dev/null 2>&1
    done
}

# --- 2. bare PostgreSQL: pgbench --------------------------------------------------------

phase() { [[ "$PHASES" == *" $1 "* ]]; }

say "uptime before: $(uptime)"
if phase pgbench; then
PGB_DB=bench_pgbench
fresh_db $PGB_DB
psql "$PG_URL/$PGB_DB" -v ON_ERROR_STOP=1 -q -v nmerchants="$MERCHANTS" -f bench/pgbench/setup.sql

pgbench_run() { # pgbench_run NAME SCRIPT
  local name=$1 script=$2 log="$OUT/pgbench-$1"
  psql "$PG_URL/$PGB_DB" -qc "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null
  say "pgbench $name: $PGBENCH_CLIENTS clients, ${DURATION}s"
  (cd "$OUT" && pgbench -n -M prepared -c "$PGBENCH_CLIENTS" -j 2 -T "$DURATION" \
    -D nmerchants="$MERCHANTS" -f "$ROOT/$script" -l --log-prefix="pgblog-$name" \
    "$PG_URL/$PGB_DB") >"$log.txt" 2>&1 || { cat "$log.txt" >&2; die "pgbench $name failed"; }
  python3 bench/report.py pgbench "$name" "$log.txt" "$OUT"/pgblog-"$name".* >>"$RESULTS"
  rm -f "$OUT"/pgblog-"$name".*
}
pgbench_run deposit bench/pgbench/deposit.sql
pgbench_run withdrawal bench/pgbench/withdrawal.sql
GATEWAY_DATABASE_URL="$PG_URL/$PGB_DB" "$GATEWAY" ledger verify >/dev/null 2>&1 ||
  die "ledger verify failed on the pgbench database"
fi

# --- 3./4. the gateway over HTTP --------------------------------------------------------

GATEWAY_PID=
stop_gateway() {
  if [ -n "$GATEWAY_PID" ] && kill -0 "$GATEWAY_PID" 2>/dev/null; then
    kill -TERM "$GATEWAY_PID" 2>/dev/null || true
    wait "$GATEWAY_PID" 2>/dev/null || true
  fi
  GATEWAY_PID=
}
RECEIVER_PID=
SIM_PIDS=
cleanup() {
  stop_gateway
  [ -n "$RECEIVER_PID" ] && kill "$RECEIVER_PID" 2>/dev/null || true
  [ -n "$SIM_PIDS" ] && kill $SIM_PIDS 2>/dev/null || true
}
trap cleanup EXIT

start_gateway() { # start_gateway DATABASE_URL LOG [ENV=VALUE...]
  local url=$1 log=$2
  shift 2
  if curl -s -o /dev/null "$BASE/healthz"; then
    die "something already listens on 127.0.0.1:$PORT (set BENCH_PORT)"
  fi
  env GATEWAY_DATABASE_URL="$url" GATEWAY_BIND="127.0.0.1:$PORT" "$@" \
    "$GATEWAY" serve >"$log" 2>&1 &
  GATEWAY_PID=$!
  for _ in $(seq 1 100); do
    curl -fs "$BASE/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$GATEWAY_PID" 2>/dev/null || { cat "$log" >&2; die "the gateway did not start"; }
    sleep 0.1
  done
  die "the gateway did not become ready"
}
peak_rss_kb() { awk '/^VmHWM/ {print $2}' "/proc/$GATEWAY_PID/status"; }

gen() { # gen KIND MERCHANTS_FILE OUTPUT COUNT SEED
  python3 bench/gen_requests.py --kind "$1" --merchants "$2" --count "$4" --seed "$5" \
    --run-id "$RUN_ID-$5" --callback-url "$CALLBACK_URL" >"$3"
}

wrk_run() { # wrk_run BACKEND KIND FILE PATH
  local backend=$1 kind=$2 file=$3 path=$4 log="$OUT/wrk-$1-$2.txt"
  # As before each pgbench run: fresh statistics and a checkpoint, so no phase starts with
  # the previous phase's checkpoint debt.
  if [ "$backend" = postgres ]; then
    psql "$PG_URL/$GW_DB" -qc "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null
  fi
  say "gateway on $backend, ${kind}s: $CONNECTIONS connections, ${DURATION}s"
  wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s bench/signed.lua "$BASE" \
    -- "$file" "$path" "$WRK_THREADS" >"$log" 2>&1 || { cat "$log" >&2; die "wrk failed"; }
  python3 bench/report.py wrk "$backend" "$kind" "$log" "$(peak_rss_kb)" "$CONNECTIONS" >>"$RESULTS"
}

gateway_phase() { # gateway_phase BACKEND DATABASE_URL
  local backend=$1 url=$2 merchants="$OUT/merchants-$1.json"
  make_merchants "$url" "$merchants"
  say "signing $REQUESTS deposits and $REQUESTS withdrawals for $backend"
  gen deposit "$merchants" "$OUT/deposits-$backend.tsv" "$REQUESTS" 1 &
  gen withdrawal "$merchants" "$OUT/withdrawals-$backend.tsv" "$REQUESTS" 2 &
  gen deposit "$merchants" "$OUT/warmup-$backend.tsv" 20000 3 &
  wait
  # Payouts settle after an hour: the phases measure creation, as the bare transactions do.
  start_gateway "$url" "$OUT/gateway-$backend.log" GATEWAY_SANDBOX_SETTLE_MS=3600000
  wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d2s -s bench/signed.lua "$BASE" \
    -- "$OUT/warmup-$backend.tsv" /api/v1/deposits "$WRK_THREADS" >"$OUT/wrk-$backend-warmup.txt" 2>&1
  wrk_run "$backend" deposit "$OUT/deposits-$backend.tsv" /api/v1/deposits
  wrk_run "$backend" withdrawal "$OUT/withdrawals-$backend.tsv" /api/v1/withdrawals
  stop_gateway
  GATEWAY_DATABASE_URL=$url "$GATEWAY" ledger verify >>"$OUT/gateway-$backend.log" 2>&1 ||
    die "ledger verify failed after the $backend run"
  rm -f "$OUT"/*-"$backend".tsv
}

if phase postgres; then
  GW_DB=bench_gateway
  fresh_db $GW_DB
  gateway_phase postgres "$PG_URL/$GW_DB"
fi

if phase sqlite; then
SQLITE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/gateway-bench-sqlite.XXXXXX")
SQLITE_URL="sqlite://$SQLITE_DIR/gateway.db"
GATEWAY_DATABASE_URL=$SQLITE_URL "$GATEWAY" migrate >/dev/null 2>&1
gateway_phase sqlite "$SQLITE_URL"
rm -rf "$SQLITE_DIR"
fi

# --- 5. callbacks -----------------------------------------------------------------------

if phase callbacks; then
CB_DB=bench_callbacks
fresh_db $CB_DB
make_merchants "$PG_URL/$CB_DB" "$OUT/merchants-callbacks.json"
say "queueing $CALLBACKS final statuses with callbacks (no gateway running)"
psql "$PG_URL/$CB_DB" -v ON_ERROR_STOP=1 -q -v n="$CALLBACKS" -v url="$CALLBACK_URL" \
  -f bench/callbacks.sql
# As before every measured phase: fresh statistics and a checkpoint. Without statistics the
# planner picks a bitmap scan and a sort of every pending row for each claim, until
# autovacuum's first analyze of the freshly loaded outbox.
psql "$PG_URL/$CB_DB" -qc "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null
"$RECEIVER" --bind "127.0.0.1:$RECEIVER_PORT" --expect "$CALLBACKS" --timeout-secs 300 \
  >"$OUT/receiver.json" 2>"$OUT/receiver.log" &
RECEIVER_PID=$!
sleep 0.5
say "delivering $CALLBACKS callbacks"
START_MS=$(date +%s%3N)
start_gateway "$PG_URL/$CB_DB" "$OUT/gateway-callbacks.log" GATEWAY_CALLBACK_ALLOW_PRIVATE=true
wait "$RECEIVER_PID" || true
RECEIVER_PID=
CB_RSS=$(peak_rss_kb)
stop_gateway
DELIVERED=$(psql "$PG_URL/$CB_DB" -qAtc "SELECT count(*) FROM callback_outbox WHERE state = 'delivered'")
python3 bench/report.py callbacks "$OUT/receiver.json" "$START_MS" "$CB_RSS" "$DELIVERED" "$CALLBACKS" >>"$RESULTS"
fi

# --- 6. routing across two acquirers ---------------------------------------------------

if phase failover; then
FO_DB=bench_failover
fresh_db $FO_DB
FO_URL="$PG_URL/$FO_DB"
SIM_KEY=bench-sim-api-key-0123456789
SIM_SECRET=bench-sim-webhook-secret-0123456789
start_sim() { # start_sim NAME API_PORT CONTROL_PORT
  # Payouts settle after an hour: the phase measures creation, as the others do.
  "$SIMULATOR" --bind "127.0.0.1:$2" --control-bind "127.0.0.1:$3" --api-key "$SIM_KEY" \
    --webhook-secret "$SIM_SECRET" --settle-ms 3600000 >"$OUT/sim-$1.log" 2>&1 &
  SIM_PIDS="$SIM_PIDS $!"
  for _ in $(seq 1 100); do
    curl -fs "http://127.0.0.1:$3/_sim/stats" >/dev/null 2>&1 && break
    sleep 0.1
  done
  curl -fs "http://127.0.0.1:$3/_sim/stats" >/dev/null || die "acquirer-sim $1 did not start"
  SIM_KEY=$SIM_KEY SIM_SECRET=$SIM_SECRET GATEWAY_DATABASE_URL=$FO_URL "$GATEWAY" provider add \
    --name "$1" --kind acquirer --url "http://127.0.0.1:$2" \
    --api-key-env SIM_KEY --webhook-secret-env SIM_SECRET >/dev/null
}
start_sim primary "$SIM_PORT" $((SIM_PORT + 10))
start_sim secondary $((SIM_PORT + 1)) $((SIM_PORT + 11))
GATEWAY_DATABASE_URL=$FO_URL "$GATEWAY" route add --direction withdrawal --method sbp \
  --provider primary --priority 300 >/dev/null
GATEWAY_DATABASE_URL=$FO_URL "$GATEWAY" route add --direction withdrawal --method sbp \
  --provider secondary --priority 200 >/dev/null
make_merchants "$FO_URL" "$OUT/merchants-failover.json"
say "signing payouts for the two acquirer runs"
GENS=
gen withdrawal "$OUT/merchants-failover.json" "$OUT/payouts-healthy.tsv" "$REQUESTS" 4 &
GENS="$GENS $!"
gen withdrawal "$OUT/merchants-failover.json" "$OUT/payouts-down.tsv" "$REQUESTS" 5 &
GENS="$GENS $!"
gen withdrawal "$OUT/merchants-failover.json" "$OUT/warmup-failover.tsv" 20000 6 &
GENS="$GENS $!"
wait $GENS # not the simulators, which run on
start_gateway "$FO_URL" "$OUT/gateway-failover.log" GATEWAY_PUBLIC_URL="$BASE"
wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d2s -s bench/signed.lua "$BASE" \
  -- "$OUT/warmup-failover.tsv" /api/v1/withdrawals "$WRK_THREADS" >"$OUT/wrk-failover-warmup.txt" 2>&1
GW_DB=$FO_DB
SATURATING=$CONNECTIONS
CONNECTIONS=$FAILOVER_CONNECTIONS
wrk_run acquirer payout-healthy "$OUT/payouts-healthy.tsv" /api/v1/withdrawals
say "the primary goes down; a few payouts open its circuit"
curl -fs "http://127.0.0.1:$((SIM_PORT + 10))/_sim/faults" -H 'content-type: application/json' \
  -d '{"down": true}' >/dev/null
head -n 50 "$OUT/payouts-down.tsv" >"$OUT/opening-failover.tsv"
sed -i '1,50d' "$OUT/payouts-down.tsv"
wrk -t1 -c1 -d1s -s bench/signed.lua "$BASE" -- "$OUT/opening-failover.tsv" \
  /api/v1/withdrawals 1 >"$OUT/wrk-failover-opening.txt" 2>&1
curl -fs "$BASE/metrics" | grep -q 'gateway_provider_circuit_open{provider="primary"} 1' ||
  sleep 6 # the gauge is refreshed every 5 s; the circuit itself opened at the fifth failure
wrk_run acquirer payout-primary-down "$OUT/payouts-down.tsv" /api/v1/withdrawals
curl -fs "$BASE/metrics" | grep 'gateway_provider_circuit_open' >"$OUT/circuit-after.txt" || true
CONNECTIONS=$SATURATING
stop_gateway
kill $SIM_PIDS 2>/dev/null || true
SIM_PIDS=
GATEWAY_DATABASE_URL=$FO_URL "$GATEWAY" ledger verify >>"$OUT/gateway-failover.log" 2>&1 ||
  die "ledger verify failed after the failover run"
rm -f "$OUT"/*-failover.tsv "$OUT"/payouts-*.tsv
fi

# --- 7. the table -----------------------------------------------------------------------

say "uptime after: $(uptime)"
python3 bench/report.py table "$RESULTS" "$(nproc)" "$(uptime)" | tee "$OUT/table.md"
