#!/usr/bin/env bash
# `just fuzz-api [sqlite|postgres|all]`: schemathesis against docs/openapi.yaml on a running
# `gateway serve --demo`, once on SQLite and once on PostgreSQL, every /api/v1 request signed by
# scripts/fuzz_api_hooks.py. Prints, per backend, the requests sent, the 5xx answers and the
# schema/conformance violations, and exits non-zero if there is any 5xx or violation.
#
# Network safety: the gateway POSTs callbacks to any callbackUrl a request carries, and
# schemathesis generates arbitrary URLs (public addresses included). So the gateway and
# schemathesis run inside a fresh network namespace (`unshare --net`) that has only loopback,
# and a mount namespace whose /etc/nsswitch.conf says `hosts: files` (and whose resolv.conf is
# empty), so no name look-up reaches a host daemon (DNS, mDNS, nscd) over a Unix socket:
# nothing they do can leave this machine. PostgreSQL is reached from inside over its Unix socket.
# The build, `pip install` and the creation and removal of the PostgreSQL database run outside.
#
# Environment (all optional):
#   GATEWAY_BIN          gateway binary to test; unset: `cargo build --release -p app` and use
#                        ${CARGO_TARGET_DIR:-target}/release/gateway
#   CARGO_TARGET_DIR     honoured by the build and to find the binary
#   FUZZ_SPEC            the OpenAPI document to test against (default docs/openapi.yaml; give the
#                        one that matches GATEWAY_BIN when that was built from another checkout)
#   FUZZ_MAX_EXAMPLES    schemathesis --max-examples per operation (default 200)
#   FUZZ_WORKERS         schemathesis --workers (default 1: with more, CPython 3.11's ast module
#                        can fail in hypothesis with "AST constructor recursion depth mismatch")
#   FUZZ_MAX_TIME        schemathesis --max-time per backend, seconds: after one pass of every
#                        phase, fuzzing and stateful cycles repeat until it is spent (default 300;
#                        0: a single pass, about a minute)
#   FUZZ_SEED            schemathesis --seed (default: random; the seed used is printed)
#   FUZZ_TIMEOUT         hard limit for one backend's schemathesis run, seconds (default 600)
#   FUZZ_OUT             where runs are kept (default ${CARGO_TARGET_DIR:-target}/fuzz-api)
#   FUZZ_VENV            the Python venv with schemathesis (default target/fuzz-venv)
#   SCHEMATHESIS_VERSION version pip installs into the venv (default 4.32.5)
#   FUZZ_PG_SOCKET_DIR   PostgreSQL's Unix socket directory (default /var/run/postgresql)
#   FUZZ_PG_USER         PostgreSQL user that may create databases (default postgres)
#   FUZZ_EXTRA_ARGS      more arguments for `schemathesis run`, split on spaces
#   FUZZ_EXCHANGES_FULL  1: keep every request and answer in full in exchanges.jsonl (default:
#                        only those answered 5xx or failed)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SELF="$ROOT/scripts/fuzz-api.sh"
SPEC="$(realpath "${FUZZ_SPEC:-$ROOT/docs/openapi.yaml}")"
PORT=8080 # inside the private namespace every port is free; 8080 is the schema's server

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'fuzz-api: %s\n' "$*" >&2; exit 2; }

# ---- inside the network namespace ----------------------------------------------------------------
# Called as: fuzz-api.sh __inner BACKEND DATABASE_URL OUTDIR (everything else from the environment).
inner() {
    local backend=$1 db_url=$2 out=$3
    ip link set lo up
    # Refuse to run unless loopback is the only way out.
    if ip -o link show | grep -v ': lo:' | grep -q .; then die "the namespace has an interface besides lo"; fi
    if [ -n "$(ip route show default)$(ip -6 route show default)" ]; then die "the namespace has a default route"; fi
    grep -qx 'hosts: files' /etc/nsswitch.conf || die "name look-ups inside may reach a daemon outside"

    export GATEWAY_DATABASE_URL="$db_url"
    # Card deposits get every flow, by amount, so /input and /confirm have deposits to act on. Most
    # drawn amounts are below 1.00 or the examples' 100.00; the default redirect route (priority
    # 100) keeps 1.00 to 99.99 and every other method.
    local flow range
    for flow in input_fields:0.01:0.99 confirmation:100.00:999.99 \
        requisites:1000.00:99999.99 instruction:100000.00:10000000.00; do
        IFS=: read -r flow range <<<"$flow"
        "$FUZZ_GATEWAY_BIN" route add --direction deposit --method card --flow "$flow" --priority 200 \
            --min "${range%%:*}" --max "${range#*:}" >>"$out/setup.log" 2>&1
    done

    GATEWAY_BIND="127.0.0.1:$PORT" "$FUZZ_GATEWAY_BIN" serve --demo >"$out/gateway.log" 2>&1 &
    local gw=$!
    # shellcheck disable=SC2064
    trap "kill $gw 2>/dev/null || true; wait $gw 2>/dev/null || true" EXIT

    local base="http://127.0.0.1:$PORT" i
    for i in $(seq 1 120); do
        if curl -fsS -o /dev/null "$base/readyz" 2>/dev/null; then break; fi
        kill -0 "$gw" 2>/dev/null || { cat "$out/gateway.log" >&2; die "the gateway exited at start"; }
        sleep 0.5
    done
    curl -fsS -o /dev/null "$base/readyz" || die "the gateway is not ready after 60 s"
    # Enough money that payouts keep passing the balance check all run long.
    "$FUZZ_GATEWAY_BIN" balance credit --merchant demo --amount 1000000000000.00 >>"$out/setup.log" 2>&1
    log "[$backend] gateway $(curl -s "$base/readyz") on $base (pid $gw)"

    local color=--no-color
    [ -t 1 ] && color=--force-color
    local seed=()
    [ -n "${FUZZ_SEED:-}" ] && seed=(--seed "$FUZZ_SEED")
    # With a time budget schemathesis repeats fuzzing and stateful cycles until it is spent.
    local budget=()
    [ "$FUZZ_MAX_TIME" != 0 ] && budget=(--max-time "$FUZZ_MAX_TIME")
    local extra=()
    # shellcheck disable=SC2206
    [ -n "${FUZZ_EXTRA_ARGS:-}" ] && extra=($FUZZ_EXTRA_ARGS)

    # Hypothesis keeps its example database in the working directory: keep it out of the repository.
    cd "$out"
    set +e
    SCHEMATHESIS_HOOKS=fuzz_api_hooks PYTHONPATH="$ROOT/scripts" \
        FUZZ_EXCHANGES="$out/exchanges.jsonl" FUZZ_FILTERED="$out/filtered.jsonl" \
        timeout --kill-after=30 "$FUZZ_TIMEOUT" \
        "$FUZZ_VENV/bin/schemathesis" --config-file "$out/schemathesis.toml" "$color" run "$SPEC" \
        --url "$base" \
        --phases examples,coverage,fuzzing,stateful \
        --mode all \
        --checks all \
        --exclude-checks object_level_authorization \
        --max-examples "$FUZZ_MAX_EXAMPLES" \
        --workers "$FUZZ_WORKERS" \
        --continue-on-failure \
        --request-timeout 10 \
        --generation-database none \
        --output-sanitize false \
        --report json,ndjson --report-dir "$out" \
        "${budget[@]}" "${seed[@]}" "${extra[@]}" 2>&1 | tee "$out/schemathesis.log"
    local rc=${PIPESTATUS[0]}
    set -e
    echo "$rc" >"$out/schemathesis.rc"

    if kill -0 "$gw" 2>/dev/null; then
        curl -fsS "$base/metrics" >"$out/metrics.txt" || true
    else
        echo "crashed" >"$out/gateway.crashed"
        log "[$backend] THE GATEWAY DIED during the run; see $out/gateway.log"
    fi
}

if [ "${1:-}" = "__inner" ]; then
    shift
    inner "$@"
    exit 0
fi

# ---- outside: set up, run each backend in its own namespace, summarise ----------------------------
backends=()
case "${1:-all}" in
    all | both) backends=(sqlite postgres) ;;
    sqlite | postgres) backends=("$1") ;;
    *) die "usage: fuzz-api.sh [sqlite|postgres|all]" ;;
esac

[ "$(id -u)" = 0 ] || die "needs root for 'unshare --net' (the private network namespace)"
for tool in unshare ip curl timeout python3; do
    command -v "$tool" >/dev/null || die "'$tool' is missing"
done

TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
if [ -n "${GATEWAY_BIN:-}" ]; then
    BIN="$GATEWAY_BIN"
else
    log "cargo build --release -p app (target dir $TARGET)"
    (cd "$ROOT" && cargo build --release -p app)
    BIN="$TARGET/release/gateway"
fi
[ -x "$BIN" ] || die "no gateway binary at $BIN"
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"

VENV="${FUZZ_VENV:-$ROOT/target/fuzz-venv}"
ST_VERSION="${SCHEMATHESIS_VERSION:-4.32.5}"
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('schemathesis') != '$ST_VERSION')" 2>/dev/null; then
    log "installing schemathesis $ST_VERSION into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$ST_VERSION"
fi

RUN_DIR="${FUZZ_OUT:-$TARGET/fuzz-api}/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$RUN_DIR"
RUN_DIR="$(cd "$RUN_DIR" && pwd)"

export FUZZ_GATEWAY_BIN="$BIN" FUZZ_VENV="$VENV"
export FUZZ_MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-200}" FUZZ_WORKERS="${FUZZ_WORKERS:-1}"
export FUZZ_MAX_TIME="${FUZZ_MAX_TIME:-300}" FUZZ_TIMEOUT="${FUZZ_TIMEOUT:-600}"
PG_SOCKET_DIR="${FUZZ_PG_SOCKET_DIR:-/var/run/postgresql}"
PG_USER="${FUZZ_PG_USER:-postgres}"

PG_DB=""
drop_pg_db() {
    if [ -n "$PG_DB" ]; then
        psql -h "$PG_SOCKET_DIR" -U "$PG_USER" -d postgres -q -v ON_ERROR_STOP=1 \
            -c "DROP DATABASE IF EXISTS \"$PG_DB\" WITH (FORCE)" >/dev/null || log "could not drop database $PG_DB"
        PG_DB=""
    fi
}
trap drop_pg_db EXIT

write_config() {
    # Statuses a schema-valid request may get without it being a bug, all documented in docs/api.md:
    # 404 (a well-formed but unknown operationId or merchantOperationId), 409 (InvalidState,
    # DuplicateOperation), 422 (NoRouteFound for a well-formed currency other than RUB or an amount
    # outside the routes, InsufficientBalance, InvalidCode). Not 401: every valid request is signed,
    # so a 401 on one means the signing is broken. Not 400: a valid request refused means the schema
    # is looser than the server.
    cat >"$1/schemathesis.toml" <<'EOF'
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "404", "409", "422"]

# Strings that break storage and text handling, drawn now and then for the free-text fields (where
# the schema allows them): NUL, other control characters, line and paragraph separators, bidi
# and zero-width characters, combining marks, astral-plane characters, SQL and format text.
[dictionaries.nasty-strings]
values = [
    "\u0000", "a\u0000b", "\u0001\u001f\u007f", "\r\n", "\u2028\u2029", "\u202e\u200b\ufeff",
    "e\u0301\u0301\u0301", "\U0001F600\U00010000", "\uffff", "'; --", "%s%n%x", "\\", "${x}",
]

[parameters]
"body.userId" = { dictionary = "nasty-strings", probability = 0.1 }
"body.requisites.cardholderName" = { dictionary = "nasty-strings", probability = 0.1 }
"body.requisites.accountName" = { dictionary = "nasty-strings", probability = 0.1 }
"body.requisites.bankName" = { dictionary = "nasty-strings", probability = 0.1 }
"body.code" = { dictionary = "nasty-strings", probability = 0.1 }

# The names /input takes come from the deposit's inputFields, which no schema can list: a
# schema-valid body with other names is 400 by design (docs/api.md 3.5).
[[operations]]
include-operation-id = "submitDepositInput"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "404", "409", "422"]
EOF
}

run_backend() {
    local backend=$1 out="$RUN_DIR/$1" db_url
    mkdir -p "$out"
    write_config "$out"
    case "$backend" in
        sqlite) db_url="sqlite://$out/gateway.db" ;;
        postgres)
            command -v psql >/dev/null || die "'psql' is missing (Debian: postgresql-client)"
            if ! pg_isready -q -h "$PG_SOCKET_DIR" 2>/dev/null; then
                log "starting PostgreSQL"
                pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
                for _ in $(seq 1 30); do pg_isready -q -h "$PG_SOCKET_DIR" && break; sleep 1; done
            fi
            PG_DB="fuzz_api_$(date +%s)_$$"
            psql -h "$PG_SOCKET_DIR" -U "$PG_USER" -d postgres -q -v ON_ERROR_STOP=1 \
                -c "CREATE DATABASE \"$PG_DB\"" >/dev/null
            # libpq: the query's host names the socket directory, reachable from inside the namespace.
            db_url="postgres://$PG_USER@localhost/$PG_DB?host=$PG_SOCKET_DIR"
            ;;
    esac
    log "[$backend] fuzzing in a private network namespace; output in $out"
    # A mount namespace too: name look-ups inside use files only (no DNS, no mDNS or nscd
    # over a host daemon's Unix socket, which a network namespace does not cut off).
    printf 'hosts: files\n' >"$out/nsswitch.conf"
    : >"$out/resolv.conf"
    unshare --net --mount -- bash -c '
        mount --bind "$1/nsswitch.conf" /etc/nsswitch.conf &&
        mount --bind "$1/resolv.conf" /etc/resolv.conf &&
        exec bash "$2" __inner "$3" "$4" "$1"' _ "$out" "$SELF" "$backend" "$db_url"
    [ "$backend" = postgres ] && drop_pg_db
    return 0
}

for backend in "${backends[@]}"; do
    run_backend "$backend"
done

# ---- the summary ----------------------------------------------------------------------------------
"$VENV/bin/python" - "$RUN_DIR" "${backends[@]}" <<'PY'
import collections, json, os, re, sys

run_dir, backends = sys.argv[1], sys.argv[2:]
bad = False
rows = []
for backend in backends:
    out = os.path.join(run_dir, backend)
    statuses = collections.Counter()
    errors = 0
    server_errors = collections.Counter()  # (method, path, status, body) of each 5xx
    exchanges = os.path.join(out, "exchanges.jsonl")
    if os.path.exists(exchanges):
        with open(exchanges, encoding="utf-8") as f:
            for line in f:
                e = json.loads(line)
                if e.get("status") is None:
                    errors += 1
                    continue
                statuses[e["status"]] += 1
                if e["status"] >= 500:
                    path = re.sub(r"/[0-9a-fA-F-]{36}(?=/|$|\?)", "/{id}", e["target"].split("?")[0])
                    body = re.sub(r"\b[0-9a-f]{32}\b", "<id>", e.get("responseBody", ""))[:200]
                    server_errors[(e["method"], path, e["status"], body)] += 1
    sent = sum(statuses.values()) + errors
    five = sum(n for s, n in statuses.items() if s >= 500)

    # The server's own count of 5xx answers, from /metrics at the end of the run.
    server_5xx = None
    metrics = os.path.join(out, "metrics.txt")
    if os.path.exists(metrics):
        server_5xx = 0
        for line in open(metrics, encoding="utf-8"):
            if line.startswith("http_requests_total{") and re.search(r'status="5\d\d"', line):
                server_5xx += int(float(line.rsplit(" ", 1)[1]))

    # schemathesis's JSON run report (--report json): failures grouped by kind, with counts.
    report = {}
    reports = sorted(p for p in os.listdir(out) if p.startswith("json-") and p.endswith(".json"))
    if reports:
        report = json.load(open(os.path.join(out, reports[-1]), encoding="utf-8"))
    failures = report.get("failures", [])
    # ST101/ST102 are not_a_server_error's failures (a 5xx); every other kind is a violation.
    violations = [g for g in failures if g.get("code") not in ("ST101", "ST102")]
    n_violations = sum(g.get("count", 1) for g in violations)
    filtered = collections.Counter()
    if os.path.exists(os.path.join(out, "filtered.jsonl")):
        for line in open(os.path.join(out, "filtered.jsonl"), encoding="utf-8"):
            filtered[json.loads(line)["reason"]] += 1
    errs = report.get("errors", [])
    rc = open(os.path.join(out, "schemathesis.rc")).read().strip() if os.path.exists(os.path.join(out, "schemathesis.rc")) else "?"
    crashed = os.path.exists(os.path.join(out, "gateway.crashed"))
    complete = report.get("complete", False)

    print(f"\n=== {backend} ({out}) ===")
    print(f"requests sent:            {sent}  (by status: {dict(sorted(statuses.items()))}; transport errors: {errors})")
    print(f"5xx answers:              {five}  (server's /metrics says {server_5xx if server_5xx is not None else 'n/a'})")
    for (method, path, status, body), n in server_errors.most_common(10):
        print(f"    {n:4} x {status} {method} {path}: {body}")
    print(f"schema/conformance violations: {n_violations} in {len(violations)} kinds")
    print("failures by kind (ST101/ST102 are the 5xx):")
    for g in failures:
        print(f"    {g.get('count', 1):4} x {g.get('code')} {g.get('title')}: {', '.join(g.get('operations', []))}")
    for reason, n in filtered.items():
        print(f"    not counted: {n} x {reason}")
    if errs:
        print(f"schemathesis errors:      " + "; ".join(f"{e['count']} x {e['title']}" for e in errs))
    print(f"schemathesis exit code:   {rc}; run complete: {complete}; test cases: {report.get('test_cases', {}).get('generated', '?')}")
    if crashed:
        print("THE GATEWAY DIED during the run (see gateway.log)")
    # What the gateway itself logged as errors (timestamps and spans stripped), for a quick look.
    logged = collections.Counter()
    gateway_log = os.path.join(out, "gateway.log")
    if os.path.exists(gateway_log):
        for line in open(gateway_log, encoding="utf-8", errors="replace"):
            if " ERROR " in line or "panicked" in line:
                message = re.sub(r"^\S+\s+", "", line.strip())
                logged[re.sub(r"\b[0-9a-f]{32}\b", "<id>", message)[:200]] += 1
    if logged:
        print(f"gateway ERROR log lines:  {sum(logged.values())}")
        for message, n in logged.most_common(5):
            print(f"    {n:4} x {message}")
    print(f"details: {out}/schemathesis.log (each failure with a curl command), 5xx exchanges in {out}/exchanges.jsonl")
    if five or n_violations or crashed or not complete or errs:
        bad = True
    rows.append((backend, sent, five, n_violations))

print("\nbackend    requests  5xx  violations")
for backend, sent, five, n in rows:
    print(f"{backend:<10} {sent:>8} {five:>4} {n:>11}")
sys.exit(1 if bad else 0)
PY
