#!/usr/bin/env bash
# `just demo-acquirer`: the gateway against acquirer-sim, a simulated bank, on this machine.
#
# Starts acquirer-sim in the background, adds it to the gateway as the acquirer provider `bank`
# and routes card deposits and card payouts to it (a second run finds the provider and the
# routes and keeps them, updating the provider's URL and credentials), then runs
# `gateway serve --demo` in the foreground. Ctrl-C stops the gateway, and the simulator with it.
# README.md ("Against a simulated bank") says what to try once it runs.
#
# Environment (all optional):
#   GATEWAY_DATABASE_URL  the gateway's database (default sqlite://gateway-acquirer.db, apart
#                         from the gateway.db of `just run`, whose card routes stay the sandbox's)
#   GATEWAY_BIND          the gateway's address (default 127.0.0.1:8080); acquirer-sim sends its
#                         notifications and the payer back there
#   SIM_BIND              acquirer-sim's Acquirer API and payment pages (default 127.0.0.1:9100)
#   SIM_CONTROL_BIND      acquirer-sim's control API, /_sim/... (default 127.0.0.1:9101)
#   SIM_SETTLE_MS         how long a simulated payout stays pending (default 2000)
#   PROVIDER              the provider's name in the gateway (default bank)
#   ACQ_KEY, ACQ_SECRET   the API key and webhook secret both sides share (public demo values by
#                         default); they reach both programs through the environment only
#   GATEWAY_BIN, SIM_BIN  binaries to use; when both are given nothing is built
#   CARGO_TARGET_DIR      honoured by the build, to find the binaries and for the logs
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

export GATEWAY_DATABASE_URL="${GATEWAY_DATABASE_URL:-sqlite://gateway-acquirer.db}"
export GATEWAY_BIND="${GATEWAY_BIND:-127.0.0.1:8080}"
SIM_BIND="${SIM_BIND:-127.0.0.1:9100}"
SIM_CONTROL_BIND="${SIM_CONTROL_BIND:-127.0.0.1:9101}"
SIM_SETTLE_MS="${SIM_SETTLE_MS:-2000}"
PROVIDER="${PROVIDER:-bank}"
export ACQ_KEY="${ACQ_KEY:-demo-acquirer-api-key}"
export ACQ_SECRET="${ACQ_SECRET:-demo-acquirer-webhook-secret}"

TARGET="${CARGO_TARGET_DIR:-target}"
case "$TARGET" in
    /*) ;;
    *) TARGET="$ROOT/$TARGET" ;;
esac
if [[ -z "${GATEWAY_BIN:-}" || -z "${SIM_BIN:-}" ]]; then
    echo "demo-acquirer: building gateway and acquirer-sim (release)" >&2
    cargo build --release -p app -p acquirer-sim
fi
GATEWAY="${GATEWAY_BIN:-$TARGET/release/gateway}"
SIM="${SIM_BIN:-$TARGET/release/acquirer-sim}"

LOGS="$TARGET/demo-acquirer"
mkdir -p "$LOGS"
SIM_OUT="$LOGS/sim.out"
SIM_LOG="$LOGS/sim.log"

SIM_PID=""
stop_sim() {
    if [[ -n "$SIM_PID" ]] && kill -0 "$SIM_PID" 2>/dev/null; then
        kill "$SIM_PID" 2>/dev/null || true
        wait "$SIM_PID" 2>/dev/null || true
    fi
}
trap stop_sim EXIT
# A script killed by SIGTERM runs its EXIT trap only if SIGTERM is trapped.
trap 'exit 143' TERM

# The simulator reads its credentials from its environment, not from its command line.
: >"$SIM_OUT"
ACQUIRER_SIM_API_KEY="$ACQ_KEY" ACQUIRER_SIM_WEBHOOK_SECRET="$ACQ_SECRET" \
    "$SIM" --bind "$SIM_BIND" --control-bind "$SIM_CONTROL_BIND" --settle-ms "$SIM_SETTLE_MS" \
    >"$SIM_OUT" 2>"$SIM_LOG" &
SIM_PID=$!

# It prints `acquirer-sim listening api=ADDR control=ADDR` once both listeners are bound.
for _ in $(seq 1 100); do
    grep -q '^acquirer-sim listening' "$SIM_OUT" && break
    if ! kill -0 "$SIM_PID" 2>/dev/null; then
        echo "demo-acquirer: acquirer-sim did not start (port taken?):" >&2
        cat "$SIM_LOG" >&2
        exit 1
    fi
    sleep 0.1
done
LISTENING="$(grep -m1 '^acquirer-sim listening' "$SIM_OUT" || true)"
if [[ -z "$LISTENING" ]]; then
    echo "demo-acquirer: acquirer-sim did not say it was listening within 10 s; its log: $SIM_LOG" >&2
    exit 1
fi
SIM_API="http://$(sed -n 's/.* api=\([^ ]*\).*/\1/p' <<<"$LISTENING")"
SIM_CONTROL="http://$(sed -n 's/.* control=\([^ ]*\).*/\1/p' <<<"$LISTENING")"

# The provider: added, or (exit 4: the name is taken) brought up to date and enabled.
if "$GATEWAY" provider add --name "$PROVIDER" --kind acquirer --url "$SIM_API" \
    --api-key-env ACQ_KEY --webhook-secret-env ACQ_SECRET; then
    :
else
    code=$?
    if [[ $code -ne 4 ]]; then
        exit "$code"
    fi
    echo "demo-acquirer: keeping provider $PROVIDER, with the simulator's URL and credentials"
    "$GATEWAY" provider update "$PROVIDER" --url "$SIM_API" \
        --api-key-env ACQ_KEY --webhook-secret-env ACQ_SECRET
    "$GATEWAY" provider enable "$PROVIDER"
fi

# A route to the provider, unless an enabled one exists (`route add` would add a second).
route_to_provider() {
    local direction=$1 method=$2 routes
    routes="$("$GATEWAY" route list)"
    # Columns: ID DIRECTION METHOD CUR MIN MAX PRIO PROVIDER FLOW LIFETIME ENABLED
    if awk -v d="$direction" -v m="$method" -v p="$PROVIDER" \
        'NR > 1 && $2 == d && $3 == m && $8 == p && $11 == "true" { found = 1 }
         END { exit !found }' <<<"$routes"; then
        echo "an enabled $direction $method route to $PROVIDER exists"
    else
        "$GATEWAY" route add --direction "$direction" --method "$method" \
            --provider "$PROVIDER" --priority 200
    fi
}
route_to_provider withdrawal card
route_to_provider deposit card

cat <<EOF

acquirer-sim runs: Acquirer API $SIM_API, control $SIM_CONTROL
  (its log: $SIM_LOG; payouts: curl -s $SIM_CONTROL/_sim/stats)
Card deposits and card payouts go to the provider $PROVIDER; the other methods stay with the sandbox.
Starting the gateway (database $GATEWAY_DATABASE_URL); Ctrl-C stops both.
EOF

"$GATEWAY" serve --demo
