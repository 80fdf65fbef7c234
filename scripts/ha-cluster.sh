#!/usr/bin/env bash
# A pg_auto_failover cluster on this one machine, for the failover test and demos: a
# monitor, a primary and a synchronous secondary, each PostgreSQL on its own port and
# folder, TLS between all of them and to the gateway (certificates signed by a CA this
# script makes), and a database `gw`.
#
#   scripts/ha-cluster.sh install   Debian's pg-auto-failover-cli and postgresql-15-auto-failover
#   scripts/ha-cluster.sh start     create (first time) and start; prints the gateway's URL
#   scripts/ha-cluster.sh url       the gateway's URL (both nodes, read-write, verify-full)
#   scripts/ha-cluster.sh state     pg_autoctl show state
#   scripts/ha-cluster.sh primary   the port of the current primary
#   scripts/ha-cluster.sh failover  a planned failover (pg_autoctl perform failover)
#   scripts/ha-cluster.sh crash     kill -9 of the primary's keeper and postmaster; prints its name
#   scripts/ha-cluster.sh revive    starts the keeper of every node that has none running
#   scripts/ha-cluster.sh wait      waits until one primary and one secondary are up again
#   scripts/ha-cluster.sh stop      stops every node and the monitor
#   scripts/ha-cluster.sh destroy   stops and deletes the folder
#
# HA_DIR (/tmp/gateway-ha) and HA_PORT (6000: the monitor; the nodes 6001 and 6002) choose
# where. pg_autoctl refuses root: as root, everything runs as the `postgres` user.
set -euo pipefail

DIR="${HA_DIR:-/tmp/gateway-ha}"
BASE="${HA_PORT:-6000}"
MONITOR_PORT="$BASE"
NODE_PORTS=("$((BASE + 1))" "$((BASE + 2))")
PGBIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"

as_pg() {
  local env=(env "XDG_CONFIG_HOME=$DIR/config" "XDG_DATA_HOME=$DIR/share"
    "XDG_RUNTIME_DIR=$DIR/run" "PATH=$PGBIN:$PATH")
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "${env[@]}" "$@"; else "${env[@]}" "$@"; fi
}

url() {
  echo "postgres://postgres@localhost:${NODE_PORTS[0]},localhost:${NODE_PORTS[1]}/gw?target_session_attrs=read-write&sslmode=verify-full&sslrootcert=$DIR/tls/ca.crt&connect_timeout=2"
}

certificates() {
  local tls="$DIR/tls"
  mkdir -p "$tls"
  openssl req -new -x509 -days 3650 -nodes -newkey rsa:2048 -subj "/CN=gateway HA test CA" \
    -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null
  openssl req -new -nodes -newkey rsa:2048 -subj "/CN=localhost" \
    -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
  printf 'subjectAltName = DNS:localhost\n' > "$tls/san.ext"
  openssl x509 -req -days 3650 -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" \
    -CAcreateserial -extfile "$tls/san.ext" -out "$tls/server.crt" 2>/dev/null
  chmod 600 "$tls/server.key" "$tls/ca.key"
}

tls_options() {
  echo --ssl-ca-file "$DIR/tls/ca.crt" --server-cert "$DIR/tls/server.crt" \
    --server-key "$DIR/tls/server.key" --ssl-mode verify-full
}

# Runs `pg_autoctl run` for the node in folder $1 in the background, logging to $1.log.
run_node() {
  as_pg bash -c "nohup pg_autoctl run --pgdata '$1' >>'$1.log' 2>&1 &"
}

monitor_uri() {
  as_pg pg_autoctl show uri --pgdata "$DIR/monitor" --formation monitor
}

state() {
  as_pg pg_autoctl show state --pgdata "$DIR/monitor"
}

# Waits (up to $1 seconds) until the monitor reports one primary and one secondary.
wait_healthy() {
  local deadline=$((SECONDS + ${1:-120}))
  while [ "$SECONDS" -lt "$deadline" ]; do
    local shown
    shown="$(state 2>/dev/null || true)"
    if [ "$(grep -c '| *primary *| *primary' <<<"$shown")" = 1 ] &&
      [ "$(grep -c '| *secondary *| *secondary' <<<"$shown")" = 1 ]; then
      return 0
    fi
    sleep 1
  done
  echo "ha-cluster: not healthy after ${1:-120} s:" >&2
  state >&2 || true
  return 1
}

start() {
  command -v pg_autoctl >/dev/null || { echo "ha-cluster: no pg_autoctl; run: $0 install" >&2; exit 1; }
  if [ ! -d "$DIR/monitor" ]; then
    rm -rf "$DIR"
    mkdir -p "$DIR/config" "$DIR/share" "$DIR/run"
    certificates
    [ "$(id -u)" = 0 ] && chown -R postgres "$DIR"
    # shellcheck disable=SC2046
    as_pg pg_autoctl create monitor --pgdata "$DIR/monitor" --pgport "$MONITOR_PORT" \
      --hostname localhost --auth trust $(tls_options) >"$DIR/create.log" 2>&1
    run_node "$DIR/monitor"
    local i
    for i in 0 1; do
      # shellcheck disable=SC2046
      as_pg pg_autoctl create postgres --pgdata "$DIR/node$((i + 1))" --pgport "${NODE_PORTS[$i]}" \
        --hostname localhost --name "node$((i + 1))" --auth trust --dbname gw \
        --monitor "$(monitor_uri)" $(tls_options) >>"$DIR/create.log" 2>&1
      run_node "$DIR/node$((i + 1))"
      # The first node becomes the primary before the second one joins.
      [ "$i" = 0 ] && { until state 2>/dev/null | grep -q '| *primary *| *single\|| *single *| *single'; do sleep 1; done; }
    done
  else
    revive
  fi
  wait_healthy 180
  url
}

stop() {
  local node
  for node in node1 node2 monitor; do
    [ -d "$DIR/$node" ] && as_pg pg_autoctl stop --pgdata "$DIR/$node" >/dev/null 2>&1 || true
  done
  for _ in $(seq 1 30); do
    pgrep -f "pg_autoctl run --pgdata $DIR/" >/dev/null || break
    sleep 1
  done
  local keeper
  for keeper in $(pgrep -f "pg_autoctl run --pgdata $DIR/" || true); do
    # shellcheck disable=SC2046
    kill -9 "$keeper" $(pgrep -P "$keeper") 2>/dev/null || true
  done
  # A server whose keeper was killed is stopped here.
  for node in node1 node2 monitor; do
    [ -f "$DIR/$node/postmaster.pid" ] &&
      as_pg "$PGBIN/pg_ctl" -D "$DIR/$node" -m immediate -w stop >/dev/null 2>&1 || true
  done
}

primary_port() {
  state | awk -F'|' '$6 ~ /primary/ && $7 ~ /primary/ {split($3, hp, ":"); gsub(/ /, "", hp[2]); print hp[2]}'
}

# The node (node1 or node2) now primary.
primary_node() {
  state | awk -F'|' '$6 ~ /primary/ && $7 ~ /primary/ {gsub(/ /, "", $1); print $1}'
}

# kill -9 of the primary's pg_autoctl processes and of its postmaster (and so its backends):
# the server is gone without a shutdown, as when its machine dies.
crash() {
  local node
  node="$(primary_node)"
  [ -n "$node" ] || { echo "ha-cluster: no primary to crash" >&2; state >&2; exit 1; }
  local postmaster
  postmaster="$(head -n 1 "$DIR/$node/postmaster.pid" 2>/dev/null || true)"
  # The keeper and its children ("pg_autoctl: start/stop postgres", "node active"), which
  # would start the server again, then the postmaster.
  local keeper kids=""
  for keeper in $(pgrep -f "pg_autoctl run --pgdata $DIR/$node\b" || true); do
    kids="$kids $keeper $(pgrep -P "$keeper" | tr '\n' ' ')"
  done
  # shellcheck disable=SC2086
  [ -n "${kids// /}" ] && kill -9 $kids 2>/dev/null || true
  [ -n "$postmaster" ] && kill -9 "$postmaster" 2>/dev/null || true
  echo "$node"
}

# Whether the keeper of node $1 runs: its pidfile names a live process (not a zombie left by
# a kill -9, which pg_autoctl's own check would take for a running keeper).
keeper_running() {
  local file="$DIR/run/pg_autoctl$DIR/$1/pg_autoctl.pid" pid
  [ -f "$file" ] || return 1
  pid="$(head -n 1 "$file")"
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] && ! awk '{exit !($3 == "Z")}' "/proc/$pid/stat"
}

revive() {
  local node
  for node in monitor node1 node2; do
    if ! keeper_running "$node"; then
      # Its pidfiles are stale: the keeper they name is dead.
      rm -f "$DIR/run/pg_autoctl$DIR/$node/"*.pid
      run_node "$DIR/$node"
    fi
  done
}

case "${1:-}" in
  install)
    if ! command -v pg_autoctl >/dev/null; then
      (apt-get install -y -qq pg-auto-failover-cli postgresql-15-auto-failover >/dev/null 2>&1) ||
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
          pg-auto-failover-cli postgresql-15-auto-failover >/dev/null)
    fi
    ;;
  start) start ;;
  url) url ;;
  state) state ;;
  primary) primary_port ;;
  failover) as_pg pg_autoctl perform failover --pgdata "$DIR/monitor" ;;
  crash) crash ;;
  revive) revive ;;
  wait) wait_healthy "${2:-180}" ;;
  stop) stop ;;
  destroy) stop; rm -rf "$DIR" ;;
  *) echo "usage: $0 install|start|url|state|primary|failover|crash|revive|wait|stop|destroy" >&2; exit 2 ;;
esac
