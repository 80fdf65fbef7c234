#!/usr/bin/env bash
# The gateway's benchmark (`just bench` or `bash bench/run.sh`); docs/performance.md explains it.
#
# Phases, in this order (BENCH_PHASES picks some; each can run alone):
#   fsync      the disk's fdatasync rate (pg_test_fsync -s BENCH_FSYNC_SECS, or dd as a
#              fallback), shown in the table's header so runs on different machines compare;
#   pgbench    the bare one-transaction-per-request baselines (deposit insert, withdrawal
#              transaction), closed loop, BENCH_PGBENCH_CLIENTS clients;
#   batch      the bare batched baselines: BENCH_BATCH_ROWS deposits per INSERT, and one
#              statement taking BENCH_BATCH_ROWS payouts' holds of one merchant (rows/s);
#   postgres   `gateway serve` on PostgreSQL at saturation: wrk, BENCH_CONNECTIONS
#              connections, pre-signed distinct requests (deposits, then withdrawals);
#   rate       open loop at BENCH_RATE_PERCENT (50) % of the postgres phase's saturation rate:
#              the gateway with bench_load (fresh requests), then the bare transaction with
#              `pgbench -R` at the same rate; it needs the saturation rates, so it runs the
#              postgres phase's saturation runs itself when `postgres` is not selected;
#   fees       the postgres phase's saturation runs on one gateway with a 1 % tariff on every
#              merchant's deposits and withdrawals and without, alternated, BENCH_FEE_ROUNDS (3)
#              times, BENCH_FEE_REQUESTS (200000) fresh requests of each kind a run;
#   sqlite     the postgres phase's saturation runs on the embedded SQLite database;
#   cluster    the same on a pg_auto_failover cluster on this machine (scripts/ha-cluster.sh:
#              a synchronous standby, TLS), beside the single server;
#   callbacks  the delivery of BENCH_CALLBACKS callbacks to a local receiver;
#   acquirer   payouts and card payins routed to one acquirer-sim: saturation with wrk at
#              BENCH_CONNECTIONS, then at BENCH_RATE_PERCENT % of it, with bench_load, the
#              gateway path and the same calls sent to the simulator directly, alternated,
#              BENCH_ACQUIRER_ROUNDS (3) times each;
#   failover   payouts routed to two acquirer-sim processes, the primary healthy, then down
#              with its circuit open, at BENCH_FAILOVER_CONNECTIONS (8) connections.
# Then one table (also written to $OUT/table.md) with every target, each a ratio of figures
# of this same run.
#
# Knobs (environment): BENCH_PHASES ("fsync pgbench batch postgres rate fees sqlite cluster
# callbacks acquirer failover"), BENCH_DURATION (s, 15), BENCH_CONNECTIONS (64), BENCH_PGBENCH_CLIENTS
# (16), BENCH_MERCHANTS (16), BENCH_REQUESTS (pre-signed requests per saturation run,
# 450000), BENCH_ACQUIRER_REQUESTS (the same for the acquirer phase, 150000), BENCH_BATCH_ROWS
# (32), BENCH_RATE_PERCENT (50), BENCH_ACQUIRER_WARM_UP (s sent before each open-loop run of
# the acquirer phase, not measured, 2), BENCH_FSYNC_SECS (2), BENCH_FSYNC_DIR (where the fsync test
# writes: $OUT; put it on PostgreSQL's WAL disk if that is another one), BENCH_CALLBACKS
# (10000), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432), BENCH_DB_PREFIX (bench_: every
# database this script drops and creates is named with it), BENCH_PORT (18080),
# BENCH_RECEIVER_PORT (18099), BENCH_SIM_PORT (18101: the simulators use it and the next two
# ports, their control APIs the same plus 10), BENCH_WRK_THREADS (2), BENCH_LOAD_THREADS (2),
# BENCH_FAILOVER_CONNECTIONS (8), BENCH_HA_DIR and BENCH_HA_PORT (the cluster's folder and
# first port: $TMPDIR/gateway-bench-ha, 6100), BENCH_GATEWAY (a gateway binary to measure instead of the
# one built here, for A/B runs of two builds), BENCH_OUT (bench/out/DATE), RUST_LOG (warn).
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
PHASES=" ${BENCH_PHASES:-fsync pgbench batch postgres rate fees sqlite cluster callbacks acquirer failover} "
SIM_PORT=${BENCH_SIM_PORT:-18101}
DB_PREFIX=${BENCH_DB_PREFIX:-bench_}
[[ "$DB_PREFIX" =~ ^[a-z_][a-z0-9_]*$ ]] || { echo "bench: BENCH_DB_PREFIX must be [a-z0-9_]" >&2; exit 1; }
ACQ_REQUESTS=${BENCH_ACQUIRER_REQUESTS:-150000}
ACQ_WARM_UP=${BENCH_ACQUIRER_WARM_UP:-2}
ACQ_ROUNDS=${BENCH_ACQUIRER_ROUNDS:-3}
[[ "$ACQ_ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_ACQUIRER_ROUNDS must be a positive number" >&2; exit 1; }
BATCH_ROWS=${BENCH_BATCH_ROWS:-32}
RATE_PERCENT=${BENCH_RATE_PERCENT:-50}
FSYNC_SECS=${BENCH_FSYNC_SECS:-2}
LOAD_THREADS=${BENCH_LOAD_THREADS:-2}
# Connections of the failover phase: below saturation, so its latencies show the path a
# payout takes (skipping the primary or not) rather than queueing.
FAILOVER_CONNECTIONS=${BENCH_FAILOVER_CONNECTIONS:-8}
export RUST_LOG=${RUST_LOG:-warn}
OUT=${BENCH_OUT:-$ROOT/bench/out/$(date +%Y%m%d-%H%M%S)}
FSYNC_DIR=${BENCH_FSYNC_DIR:-$OUT}
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

say "building the gateway, the simulator, the callback receiver and the load generator (release)"
cargo build --release -q -p app --bin gateway --example bench_receiver --example bench_load
cargo build --release -q -p acquirer-sim
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
GATEWAY=${BENCH_GATEWAY:-$TARGET_DIR/release/gateway}
SIMULATOR=$TARGET_DIR/release/acquirer-sim
RECEIVER=$TARGET_DIR/release/examples/bench_receiver
LOADGEN=$TARGET_DIR/release/examples/bench_load
[ -x "$GATEWAY" ] && [ -x "$RECEIVER" ] && [ -x "$SIMULATOR" ] && [ -x "$LOADGEN" ] ||
  die "built binaries not found under $TARGET_DIR/release"

# The harness's own writes (the signed request files, hundreds of MB, and the logs) sit in
# the page cache until the kernel writes them back, 30 s later, in one burst of a few
# hundred MB that queues every fsync behind it. Landing inside a measured run, that burst
# stalled every commit for 200 to 600 ms. Written back before each run, it measures the
# gateway (and pgbench) instead.
flush_page_cache() { sync; }
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

# --- 2. the disk, and bare PostgreSQL: pgbench -------------------------------------------

phase() { [[ "$PHASES" == *" $1 "* ]]; }

say "uptime before: $(uptime)"
if phase fsync; then
  say "fsync rate: pg_test_fsync -s $FSYNC_SECS in $FSYNC_DIR"
  mkdir -p "$FSYNC_DIR"
  FSYNC_FILE="$FSYNC_DIR/bench_fsync.tmp"
  PG_TEST_FSYNC=$(command -v pg_test_fsync || ls /usr/lib/postgresql/*/bin/pg_test_fsync 2>/dev/null | tail -1 || true)
  FSYNC_OPS= FSYNC_TOOL=
  if [ -n "$PG_TEST_FSYNC" ] && [ -x "$PG_TEST_FSYNC" ]; then
    "$PG_TEST_FSYNC" -s "$FSYNC_SECS" -f "$FSYNC_FILE" >"$OUT/fsync.txt" 2>&1 || true
    # The fdatasync line of "Compare file sync methods using one 8kB write".
    FSYNC_OPS=$(awk '/one 8kB write/ {s = 1} s && $1 == "fdatasync" {print $2; exit}' "$OUT/fsync.txt")
    FSYNC_TOOL="pg_test_fsync -s $FSYNC_SECS"
  fi
  if [ -z "$FSYNC_OPS" ] || [ "$FSYNC_OPS" = n/a ]; then
    # Fallback: 8 kB writes each followed by fdatasync (dd's oflag=dsync), for FSYNC_SECS.
    say "pg_test_fsync unavailable; dd oflag=dsync instead"
    n=0 start=$(date +%s%N)
    while [ $(( $(date +%s%N) - start )) -lt $((FSYNC_SECS * 1000000000)) ]; do
      dd if=/dev/zero of="$FSYNC_FILE" bs=8k count=200 oflag=dsync conv=notrunc 2>/dev/null
      n=$((n + 200))
    done
    FSYNC_OPS=$(python3 -c "import sys; print(f'{$n / (($(date +%s%N) - $start) / 1e9):.1f}')")
    FSYNC_TOOL="dd bs=8k oflag=dsync"
  fi
  rm -f "$FSYNC_FILE"
  WAL_SYNC=$(psql "$PG_URL/postgres" -qAtc "SHOW wal_sync_method" 2>/dev/null || echo "?")
  python3 bench/report.py fsync "$FSYNC_TOOL" "$FSYNC_OPS" "$WAL_SYNC" >>"$RESULTS"
fi

PGB_DB=${DB_PREFIX}pgbench
PGB_READY=
pgbench_db() { # the bare runs' database, made once per run
  [ -n "$PGB_READY" ] && return 0
  fresh_db "$PGB_DB"
  psql "$PG_URL/$PGB_DB" -v ON_ERROR_STOP=1 -q -v nmerchants="$MERCHANTS" -f bench/pgbench/setup.sql
  PGB_READY=1
}

pgbench_run() { # pgbench_run NAME SCRIPT ROWS_PER_TRANSACTION [PGBENCH_ARGS...]
  local name=$1 script=$2 rows=$3 log="$OUT/pgbench-$1"
  shift 3
  pgbench_db
  psql "$PG_URL/$PGB_DB" -qc "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null
  flush_page_cache
  say "pgbench $name: $PGBENCH_CLIENTS clients, ${DURATION}s $*"
  (cd "$OUT" && pgbench -n -M prepared -c "$PGBENCH_CLIENTS" -j 2 -T "$DURATION" \
    -D nmerchants="$MERCHANTS" -D batch="$rows" -f "$ROOT/$script" -l \
    --log-prefix="pgblog-$name" "$@" "$PG_URL/$PGB_DB") >"$log.txt" 2>&1 ||
    { cat "$log.txt" >&2; die "pgbench $name failed"; }
}
pgbench_report() { # pgbench_report NAME MODE ROWS_OR_RATE [NAME_IN_THE_TABLE]
  python3 bench/report.py "$2" "${4:-$1}" "$3" "$OUT/pgbench-$1.txt" "$OUT"/pgblog-"$1".* >>"$RESULTS"
  rm -f "$OUT"/pgblog-"$1".*
}
pgbench_verify() {
  GATEWAY_DATABASE_URL="$PG_URL/$PGB_DB" "$GATEWAY" ledger verify >/dev/null 2>&1 ||
    die "ledger verify failed on the pgbench database"
}

if phase pgbench; then
  pgbench_run deposit bench/pgbench/deposit.sql 1 && pgbench_report deposit pgbench 1
  pgbench_run withdrawal bench/pgbench/withdrawal.sql 1 && pgbench_report withdrawal pgbench 1
  pgbench_verify
fi

if phase batch; then
  pgbench_run deposit-batch bench/pgbench/deposit_batch.sql "$BATCH_ROWS" &&
    pgbench_report deposit-batch pgbench "$BATCH_ROWS"
  pgbench_run withdrawal-batch bench/pgbench/withdrawal_batch.sql "$BATCH_ROWS" &&
    pgbench_report withdrawal-batch pgbench "$BATCH_ROWS"
  pgbench_verify
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
# Killed or interrupted: exit, so that the EXIT trap stops what the script started.
trap 'exit 143' TERM
trap 'exit 130' INT

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

fresh_stats() { # before each measured run on PostgreSQL, as before each pgbench run: fresh
  # statistics and a checkpoint, so no run starts with the previous one's checkpoint debt.
  # Statistics only once the gateway has written a thousand operations: PostgreSQL plans a
  # table never vacuumed or analyzed as if it had at least 10 pages, but one analyzed while
  # (nearly) empty as that small, and the pool's connections keep the plans they make then
  # (sequential scans, the cheapest on a page or two) as it grows, until its next ANALYZE.
  if [ "$1" != sqlite ]; then
    local written stats_url=${STATS_URL:-$PG_URL/$GW_DB}
    written=$(psql -X "$stats_url" -qAtc \
      "SELECT count(*) >= 1000 FROM (SELECT 1 FROM operations LIMIT 1000) AS o")
    case $written in
    t) psql -X "$stats_url" -qc "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null ;;
    f) psql -X "$stats_url" -qc "CHECKPOINT" >/dev/null ;;
    *) die "cannot count the operations of $GW_DB: $written" ;;
    esac
  fi
  flush_page_cache
}

wrk_run() { # wrk_run BACKEND KIND FILE PATH (LOAD_ROUND set: the round, in the log's name)
  local backend=$1 kind=$2 file=$3 path=$4 log="$OUT/wrk-$1-$2${LOAD_ROUND:+-$LOAD_ROUND}.txt"
  fresh_stats "$backend"
  say "gateway on $backend, ${kind}s: $CONNECTIONS connections, ${DURATION}s"
  wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s bench/signed.lua "$BASE" \
    -- "$file" "$path" "$WRK_THREADS" >"$log" 2>&1 || { cat "$log" >&2; die "wrk failed"; }
  python3 bench/report.py wrk "$backend" "$kind" "$log" "$(peak_rss_kb)" "$CONNECTIONS" \
    ${LOAD_ROUND:+"$LOAD_ROUND"} >>"$RESULTS"
}

# The rate at RATE_PERCENT % of this run's saturation rate of BACKEND and KIND (wrk).
half_rate() { # half_rate BACKEND KIND
  python3 - "$RESULTS" "$1" "$2" "$RATE_PERCENT" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sat = [r["rate"] for r in rows if r["kind"] == "gateway" and r["backend"] == sys.argv[2]
       and r["name"] == sys.argv[3]]
if not sat:
    sys.exit(f"no saturation run of {sys.argv[2]} {sys.argv[3]} in this run")
print(max(1, int(sat[-1] * float(sys.argv[4]) / 100)))
EOF
}

LOAD_ROUND= # set: the round of a run that is made several times, in its log's name and its line
load_run() { # load_run BACKEND KIND TARGET FILE URL PATH RATE [bench_load ARGS...]
  local backend=$1 kind=$2 target=$3 file=$4 url=$5 path=$6 rate=$7 rss=0
  local log="$OUT/load-$1-$2-$3${LOAD_ROUND:+-$LOAD_ROUND}.json"
  shift 7
  fresh_stats "$backend"
  say "$target ($backend), ${kind}s: open loop at $rate/s, $CONNECTIONS connections, ${DURATION}s"
  "$LOADGEN" --url "$url" --path "$path" --file "$file" --rate "$rate" --duration "$DURATION" \
    --connections "$CONNECTIONS" --threads "$LOAD_THREADS" --timeline "${log%.json}.timeline" \
    "$@" >"$log" 2>"$log.err" ||
    { cat "$log.err" >&2; die "bench_load failed"; }
  [ "$target" = gateway ] && rss=$(peak_rss_kb)
  python3 bench/report.py load "$backend" "$kind" "$target" "$log" "$rss" ${LOAD_ROUND:+"$LOAD_ROUND"} >>"$RESULTS"
  rm -f "$file"
}

# The rate phase on the running PostgreSQL gateway: deposits and withdrawals at RATE_PERCENT %
# of their saturation rates, open loop; the rates are kept for pgbench -R afterwards.
RATES=
rate_runs() { # rate_runs MERCHANTS_FILE
  local kind rate count seed=10
  for kind in deposit withdrawal; do
    rate=$(half_rate postgres "$kind")
    count=$((rate * DURATION + 100))
    say "signing $count ${kind}s for the open-loop run at $rate/s"
    gen "$kind" "$1" "$OUT/rate-$kind-postgres.tsv" "$count" $((seed++))
    load_run postgres "$kind" gateway "$OUT/rate-$kind-postgres.tsv" "$BASE" "/api/v1/${kind}s" \
      "$rate" --warm-path /healthz
    RATES="$RATES $kind:$rate"
  done
}

# The bare transactions at the same rates, open loop (pgbench -R: latency from each
# transaction's scheduled start), with the gateway stopped.
bare_rate_runs() {
  local pair kind rate
  for pair in $RATES; do
    kind=${pair%%:*} rate=${pair##*:}
    pgbench_run "$kind-rate" "bench/pgbench/$kind.sql" 1 -R "$rate"
    pgbench_report "$kind-rate" pgbench-rate "$rate" "$kind"
  done
  pgbench_verify
}

warm_up() { # warm_up NAME PATH: 2 s of $OUT/warmup-NAME.tsv, before the measured runs
  wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d2s -s bench/signed.lua "$BASE" \
    -- "$OUT/warmup-$1.tsv" "$2" "$WRK_THREADS" >"$OUT/wrk-$1-warmup.txt" 2>&1
}

gateway_phase() { # gateway_phase BACKEND DATABASE_URL
  local backend=$1 url=$2 merchants="$OUT/merchants-$1.json"
  make_merchants "$url" "$merchants"
  say "signing $REQUESTS deposits and $REQUESTS withdrawals for $backend"
  local gens=
  gen deposit "$merchants" "$OUT/deposits-$backend.tsv" "$REQUESTS" 1 &
  gens="$gens $!"
  gen withdrawal "$merchants" "$OUT/withdrawals-$backend.tsv" "$REQUESTS" 2 &
  gens="$gens $!"
  gen deposit "$merchants" "$OUT/warmup-$backend.tsv" 20000 3 &
  gens="$gens $!"
  wait $gens
  # Payouts settle after an hour: the phases measure creation, as the bare transactions do.
  start_gateway "$url" "$OUT/gateway-$backend.log" GATEWAY_SANDBOX_SETTLE_MS=3600000
  warm_up "$backend" /api/v1/deposits
  wrk_run "$backend" deposit "$OUT/deposits-$backend.tsv" /api/v1/deposits
  wrk_run "$backend" withdrawal "$OUT/withdrawals-$backend.tsv" /api/v1/withdrawals
  rm -f "$OUT"/*-"$backend".tsv
  if [ "$backend" = postgres ] && phase rate; then
    rate_runs "$merchants"
  fi
  stop_gateway
  GATEWAY_DATABASE_URL=$url "$GATEWAY" ledger verify >>"$OUT/gateway-$backend.log" 2>&1 ||
    die "ledger verify failed after the $backend run"
}

# The rate phase needs this run's saturation rates: it makes the postgres phase's runs too.
if phase postgres || phase rate; then
  GW_DB=${DB_PREFIX}gateway
  fresh_db "$GW_DB"
  gateway_phase postgres "$PG_URL/$GW_DB"
  if phase rate; then
    bare_rate_runs
  fi
fi

# --- 4b. fees: the same gateway with and without tariffs ----------------------------------
#
# One database and one running gateway; every merchant gets a 1 % tariff on card deposits
# and SBP withdrawals (what the generated requests use), or none, in turn: BENCH_FEE_ROUNDS
# (3) rounds of deposits then withdrawals without, then with, each on fresh requests. A
# tariff change reaches the running gateway within its cache TTL (2 s), waited for before
# each run. The table compares the medians of the rounds.
FEE_ROUNDS=${BENCH_FEE_ROUNDS:-3}
FEE_REQUESTS=${BENCH_FEE_REQUESTS:-200000}
tariffs() { # tariffs set|remove MERCHANTS_FILE DATABASE_URL
  local how=$1 file=$2 url=$3 id pair
  python3 -c 'import json,sys; [print(m["merchantId"]) for m in json.load(open(sys.argv[1]))]' "$file" |
    while read -r id; do
      for pair in "deposit card" "withdrawal sbp"; do
        set -- $pair
        if [ "$how" = set ]; then
          GATEWAY_DATABASE_URL=$url "$GATEWAY" tariff set --merchant "$id" --direction "$1" \
            --method "$2" --currency RUB --percent 1 >/dev/null 2>&1 || die "tariff set failed"
        else
          GATEWAY_DATABASE_URL=$url "$GATEWAY" tariff remove --merchant "$id" --direction "$1" \
            --method "$2" --currency RUB >/dev/null 2>&1 || die "tariff remove failed"
        fi
      done
    done
}
if phase fees; then
  GW_DB=${DB_PREFIX}fees
  fresh_db "$GW_DB"
  FEE_URL="$PG_URL/$GW_DB"
  make_merchants "$FEE_URL" "$OUT/merchants-fees.json"
  gen deposit "$OUT/merchants-fees.json" "$OUT/warmup-fees.tsv" 20000 20
  start_gateway "$FEE_URL" "$OUT/gateway-fees.log" GATEWAY_SANDBOX_SETTLE_MS=3600000
  warm_up fees /api/v1/deposits
  for round in $(seq 1 "$FEE_ROUNDS"); do
    for variant in without with; do
      if [ "$variant" = with ]; then tariffs set "$OUT/merchants-fees.json" "$FEE_URL"; fi
      sleep 3
      say "fees round $round, $variant a tariff: signing $FEE_REQUESTS of each kind"
      seed=$((100 + round * 10))
      [ "$variant" = with ] && seed=$((seed + 5))
      gen deposit "$OUT/merchants-fees.json" "$OUT/deposits-fees.tsv" "$FEE_REQUESTS" "$seed" &
      g1=$!
      gen withdrawal "$OUT/merchants-fees.json" "$OUT/withdrawals-fees.tsv" "$FEE_REQUESTS" "$((seed + 1))" &
      g2=$!
      wait $g1 $g2
      LOAD_ROUND=$round
      wrk_run "fees-$variant" deposit "$OUT/deposits-fees.tsv" /api/v1/deposits
      wrk_run "fees-$variant" withdrawal "$OUT/withdrawals-fees.tsv" /api/v1/withdrawals
      LOAD_ROUND=
      rm -f "$OUT/deposits-fees.tsv" "$OUT/withdrawals-fees.tsv"
      if [ "$variant" = with ]; then tariffs remove "$OUT/merchants-fees.json" "$FEE_URL"; fi
    done
  done
  stop_gateway
  charged=$(psql -X "$FEE_URL" -qAtc "SELECT count(*) FROM operations WHERE fee > 0")
  say "operations that paid a fee: $charged"
  [ "$charged" -gt 0 ] || die "the fees phase charged no fee"
  GATEWAY_DATABASE_URL=$FEE_URL "$GATEWAY" ledger verify >>"$OUT/gateway-fees.log" 2>&1 ||
    die "ledger verify failed after the fees run"
fi

if phase sqlite; then
SQLITE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/gateway-bench-sqlite.XXXXXX")
SQLITE_URL="sqlite://$SQLITE_DIR/gateway.db"
GATEWAY_DATABASE_URL=$SQLITE_URL "$GATEWAY" migrate >/dev/null 2>&1
gateway_phase sqlite "$SQLITE_URL"
rm -rf "$SQLITE_DIR"
fi

# --- 4c. the failover cluster: a synchronous standby, TLS -------------------------------
#
# The postgres phase's saturation runs on a pg_auto_failover cluster on this machine
# (scripts/ha-cluster.sh: a monitor, a primary and a synchronous secondary, TLS with
# verify-full), its own folder and ports (BENCH_HA_DIR, BENCH_HA_PORT), so every commit
# waits for the standby's flush as well. The table sets it beside the single server.
if phase cluster; then
  export HA_DIR=${BENCH_HA_DIR:-${TMPDIR:-/tmp}/gateway-bench-ha} HA_PORT=${BENCH_HA_PORT:-6100}
  bash scripts/ha-cluster.sh install
  HA_URL=$(bash scripts/ha-cluster.sh start)
  HA_ADMIN=${HA_URL/\/gw\?//postgres?}
  GW_DB=${DB_PREFIX}cluster
  psql "$HA_ADMIN" -v ON_ERROR_STOP=1 -qAt -c "DROP DATABASE IF EXISTS $GW_DB WITH (FORCE)" \
    -c "CREATE DATABASE $GW_DB" >/dev/null
  CLUSTER_URL=${HA_URL/\/gw\?//$GW_DB?}
  GATEWAY_DATABASE_URL=$CLUSTER_URL "$GATEWAY" migrate >/dev/null 2>&1
  STATS_URL=$CLUSTER_URL gateway_phase cluster "$CLUSTER_URL"
  bash scripts/ha-cluster.sh stop
fi

# --- 5. callbacks -----------------------------------------------------------------------

if phase callbacks; then
CB_DB=${DB_PREFIX}callbacks
fresh_db "$CB_DB"
make_merchants "$PG_URL/$CB_DB" "$OUT/merchants-callbacks.json"
say "queueing $CALLBACKS final statuses with callbacks (no gateway running)"
psql "$PG_URL/$CB_DB" -v ON_ERROR_STOP=1 -q -v n="$CALLBACKS" -v url="$CALLBACK_URL" \
  -f bench/callbacks.sql
# As before every measured phase: fresh statistics and a checkpoint. Without statistics the
# planner picks a bitmap scan and a sort of every pending row for each claim, until
# autovacuum's first analyze of the freshly loaded outbox.
psql "$PG_URL/$CB_DB" -qc "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null
flush_page_cache
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

SIM_KEY=bench-sim-api-key-0123456789
SIM_SECRET=bench-sim-webhook-secret-0123456789
export BENCH_SIM_KEY=$SIM_KEY # bench_load --mode acquirer reads the simulator's key from it
start_sim() { # start_sim NAME API_PORT CONTROL_PORT [DATABASE_URL: add it there as a provider]
  # Payouts settle after an hour: the phase measures creation, as the others do.
  if curl -s -o /dev/null "http://127.0.0.1:$2/" || curl -s -o /dev/null "http://127.0.0.1:$3/"; then
    die "something already listens on 127.0.0.1:$2 or :$3 (set BENCH_SIM_PORT)"
  fi
  "$SIMULATOR" --bind "127.0.0.1:$2" --control-bind "127.0.0.1:$3" --api-key "$SIM_KEY" \
    --webhook-secret "$SIM_SECRET" --settle-ms 3600000 >>"$OUT/sim-$1.log" 2>&1 &
  SIM_PIDS="$SIM_PIDS $!"
  for _ in $(seq 1 100); do
    curl -fs "http://127.0.0.1:$3/_sim/stats" >/dev/null 2>&1 && break
    sleep 0.1
  done
  curl -fs "http://127.0.0.1:$3/_sim/stats" >/dev/null || die "acquirer-sim $1 did not start"
  [ -z "${4:-}" ] || add_provider "$1" "$2" "$4"
}
add_provider() { # add_provider NAME API_PORT DATABASE_URL: the simulator on API_PORT as NAME
  SIM_KEY=$SIM_KEY SIM_SECRET=$SIM_SECRET GATEWAY_DATABASE_URL=$3 "$GATEWAY" provider add \
    --name "$1" --kind acquirer --url "http://127.0.0.1:$2" \
    --api-key-env SIM_KEY --webhook-secret-env SIM_SECRET >/dev/null
}
stop_sims() {
  local pid
  for pid in $SIM_PIDS; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  SIM_PIDS=
}

# --- 6. the acquirer path --------------------------------------------------------------

if phase acquirer; then
: >"$OUT/acquirer-seq-scans.txt" # acquirer_db_done appends each stage's
AQ_DB=${DB_PREFIX}acquirer
AQ_URL="$PG_URL/$AQ_DB"
AQ_SIM_PORT=$((SIM_PORT + 2))
DECLINED=0
# The gateway on a fresh bench_acquirer database, with the simulator as provider `bank`, SBP
# payouts and card deposits routed to it (above the sandbox's routes), and fresh merchants.
# Quiet reads start 5 minutes (the most allowed) after an operation's last change, not 1.
# Each stage below (the saturation runs, the payouts' rounds, the payins' rounds) gets its
# own database and takes less than those 5 minutes: the reconciler's first reads of a stage's
# operations, as many a second as they were created, would otherwise fall into a later
# run, which would measure those reads as well as its own payments (change 16; with one
# database, the saturation runs' reads stalled a round's runs 5 minutes later by 270 to
# 345 ms).
acquirer_gateway() { # acquirer_gateway LOG
  [ -n "$GATEWAY_PID" ] && acquirer_db_done
  AQ_STAGE=$(basename "$1" .log) # the stage starting, named as its gateway's log
  # A fresh simulator too: notifications the gateway shed under saturation (503, past the
  # notifications it handles at once) are sent again at 1 s, 5 s, 30 s, 2 min and later;
  # into the next stage's database they would be unknown (404) and sent again and again.
  stop_sims
  start_sim bank "$AQ_SIM_PORT" $((AQ_SIM_PORT + 10))
  fresh_db "$AQ_DB"
  add_provider bank "$AQ_SIM_PORT" "$AQ_URL"
  GATEWAY_DATABASE_URL=$AQ_URL "$GATEWAY" route add --direction withdrawal --method sbp \
    --provider bank --priority 300 >/dev/null
  GATEWAY_DATABASE_URL=$AQ_URL "$GATEWAY" route add --direction deposit --method card \
    --provider bank --priority 300 >/dev/null
  make_merchants "$AQ_URL" "$OUT/merchants-acquirer.json"
  start_gateway "$AQ_URL" "$1" GATEWAY_PUBLIC_URL="$BASE" GATEWAY_RECONCILE_AFTER=5m
  GW_DB=$AQ_DB
}
# Before a stage's database is dropped: its declined operations (an operation the gateway
# declined, say because the acquirer refused it, is an error too) and its ledger.
acquirer_db_done() {
  local declined
  stop_gateway
  # On its own line: a failure inside $((...)) would not stop the script.
  declined=$(psql "$AQ_URL" -qAtc "SELECT count(*) FROM operations WHERE status = 2")
  DECLINED=$((DECLINED + declined))
  # Rows read by sequential scans of the growing tables (see fresh_stats): near 0 when the
  # plans found them by their indexes, but for fresh_stats's own count of up to 1,000
  # operations before each run. Read once the gateway's server processes have exited, so
  # their counts are in.
  for _ in $(seq 1 50); do
    [ "$(psql -X "$AQ_URL" -qAtc "SELECT count(*) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()")" = 0 ] && break
    sleep 0.1
  done
  {
    echo "== $AQ_STAGE"
    psql -X "$AQ_URL" -qAtc "SELECT relname, seq_scan, seq_tup_read FROM pg_stat_user_tables
      WHERE relname IN ('operations', 'provider_attempts', 'operation_events', 'ledger')
      ORDER BY relname"
  } >>"$OUT/acquirer-seq-scans.txt"
  GATEWAY_DATABASE_URL=$AQ_URL "$GATEWAY" ledger verify >>"$OUT/gateway-acquirer.log" 2>&1 ||
    die "ledger verify failed after the acquirer runs (see $OUT/gateway-acquirer.log)"
}

acquirer_gateway "$OUT/gateway-acquirer-saturation.log"
say "signing $ACQ_REQUESTS payouts and $ACQ_REQUESTS card deposits for the acquirer path"
GENS=
gen withdrawal "$OUT/merchants-acquirer.json" "$OUT/payouts-acquirer.tsv" "$ACQ_REQUESTS" 21 &
GENS="$GENS $!"
gen deposit "$OUT/merchants-acquirer.json" "$OUT/payins-acquirer.tsv" "$ACQ_REQUESTS" 22 &
GENS="$GENS $!"
gen deposit "$OUT/merchants-acquirer.json" "$OUT/warmup-acquirer.tsv" 5000 23 &
GENS="$GENS $!"
wait $GENS # not the simulator, which runs on
warm_up acquirer /api/v1/deposits
wrk_run acquirer-path payout "$OUT/payouts-acquirer.tsv" /api/v1/withdrawals
wrk_run acquirer-path payin "$OUT/payins-acquirer.tsv" /api/v1/deposits
# The notifications answered, and shed (503), through the saturation runs.
curl -fs "$BASE/metrics" | grep '^http_requests_total.*notifications' \
  >"$OUT/acquirer-saturation-notifications.txt" || true
rm -f "$OUT"/*-acquirer.tsv
# The direct runs' payments notify this sink, which answers 200 at once: the simulator sends
# each notification once, as it does through the gateway. Sent to the idle gateway instead,
# they were answered 404 (no provider of that name) and the simulator retried them at 1 s,
# 5 s, 30 s and 2 min, into the next run through the gateway.
"$RECEIVER" --bind "127.0.0.1:$RECEIVER_PORT" --expect 1000000000 --timeout-secs 3600 \
  >/dev/null 2>"$OUT/sink-acquirer.log" &
RECEIVER_PID=$!
for _ in $(seq 1 50); do
  curl -s -o /dev/null -X POST "http://127.0.0.1:$RECEIVER_PORT/" && break
  kill -0 "$RECEIVER_PID" 2>/dev/null || die "the notification sink did not start (is 127.0.0.1:$RECEIVER_PORT taken?)"
  sleep 0.1
done
# Rounds of the two runs, alternated (gateway, simulator, gateway, ...): the target takes the
# median round, so one stall in one run (this kind of VM stalls every process for 10 to 40 ms
# now and then, idle or not) does not decide the line; all the rounds are shown in the table.
# Each run's requests are signed before its round, so the gateway idles while they are; the
# runs' own warm-up (--warm-up) covers that.
seed=24
for kind in payout payin; do
  rate=$(half_rate acquirer-path "$kind")
  count=$((rate * (DURATION + ACQ_WARM_UP) + 100))
  gateway_kind=$([ "$kind" = payout ] && echo withdrawal || echo deposit)
  acquirer_gateway "$OUT/gateway-acquirer-$kind.log"
  for LOAD_ROUND in $(seq 1 "$ACQ_ROUNDS"); do
    say "round $LOAD_ROUND of $ACQ_ROUNDS: signing $count ${kind}s, for the gateway and for the simulator, at $rate/s"
    gen "$gateway_kind" "$OUT/merchants-acquirer.json" "$OUT/rate-$kind-gateway.tsv" "$count" $((seed++))
    python3 bench/gen_requests.py --kind "sim-$kind" --count "$count" --seed $((seed++)) \
      --run-id "$RUN_ID-sim-$seed" --callback-url "$CALLBACK_URL" \
      --public-url "http://127.0.0.1:$RECEIVER_PORT" >"$OUT/rate-$kind-simulator.tsv"
    load_run acquirer-path "$kind" gateway "$OUT/rate-$kind-gateway.tsv" "$BASE" \
      "/api/v1/${gateway_kind}s" "$rate" --warm-path /healthz --warm-up "$ACQ_WARM_UP"
    load_run acquirer-path "$kind" simulator "$OUT/rate-$kind-simulator.tsv" \
      "http://127.0.0.1:$AQ_SIM_PORT" /v1/payments "$rate" --mode acquirer --warm-path / \
      --warm-up "$ACQ_WARM_UP"
  done
done
LOAD_ROUND=
kill "$RECEIVER_PID" 2>/dev/null || true
wait "$RECEIVER_PID" 2>/dev/null || true
RECEIVER_PID=
acquirer_db_done
python3 bench/report.py declines "acquirer path" "$DECLINED" >>"$RESULTS"
stop_sims
fi

# --- 7. routing across two acquirers ---------------------------------------------------

if phase failover; then
FO_DB=${DB_PREFIX}failover
fresh_db "$FO_DB"
FO_URL="$PG_URL/$FO_DB"
start_sim primary "$SIM_PORT" $((SIM_PORT + 10)) "$FO_URL"
start_sim secondary $((SIM_PORT + 1)) $((SIM_PORT + 11)) "$FO_URL"
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
start_gateway "$FO_URL" "$OUT/gateway-failover.log" GATEWAY_PUBLIC_URL="$BASE" \
  GATEWAY_RECONCILE_AFTER=5m # as in the acquirer phase
warm_up failover /api/v1/withdrawals
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
stop_sims
GATEWAY_DATABASE_URL=$FO_URL "$GATEWAY" ledger verify >>"$OUT/gateway-failover.log" 2>&1 ||
  die "ledger verify failed after the failover run"
rm -f "$OUT"/*-failover.tsv "$OUT"/payouts-*.tsv
fi

# --- 8. the table -----------------------------------------------------------------------

say "uptime after: $(uptime)"
python3 bench/report.py table "$RESULTS" "$(nproc)" "$(uptime)" | tee "$OUT/table.md"
