#!/usr/bin/env bash
# A PostgreSQL server that accepts TLS connections only, on one port of this machine, for
# the TLS test (crates/adapters-db/tests/db/tls.rs) and for trying sslmode by hand.
#
#   scripts/pg-tls.sh start   initdb (first time), certificates, start; prints the base URL
#   scripts/pg-tls.sh url     prints the base URL of a started server
#   scripts/pg-tls.sh stop    stops it (its folder stays; delete it to start afresh)
#
# The base URL names the certificate authority (`sslrootcert`); add `sslmode=require`,
# `verify-ca` or `verify-full` to it. The server certificate is for the host name
# `localhost` only, so `verify-full` to 127.0.0.1 is refused while `verify-ca` is not.
# Without TLS the server refuses every connection (pg_hba.conf has `hostssl` lines only).
#
# PG_TLS_PORT (5441) and PG_TLS_DIR (/tmp/gateway-pg-tls) choose where. As root, the server
# runs as the `postgres` user (initdb refuses root). Needs Debian's PostgreSQL server
# binaries (/usr/lib/postgresql/*/bin) and the openssl command.
set -euo pipefail

PORT="${PG_TLS_PORT:-5441}"
DIR="${PG_TLS_DIR:-/tmp/gateway-pg-tls}"
BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
[ -n "$BIN" ] || { echo "pg-tls: no PostgreSQL server binaries in /usr/lib/postgresql" >&2; exit 1; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

url() {
  echo "postgres://postgres@localhost:${PORT}/postgres?sslrootcert=${DIR}/ca.crt"
}

certificates() {
  local tls="$DIR/tls"
  mkdir -p "$tls"
  openssl req -new -x509 -days 3650 -nodes -newkey rsa:2048 -subj "/CN=gateway test CA" \
    -keyout "$tls/ca.key" -out "$DIR/ca.crt" 2>/dev/null
  openssl req -new -nodes -newkey rsa:2048 -subj "/CN=localhost" \
    -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
  printf 'subjectAltName = DNS:localhost\n' > "$tls/san.ext"
  openssl x509 -req -days 3650 -in "$tls/server.csr" -CA "$DIR/ca.crt" -CAkey "$tls/ca.key" \
    -CAcreateserial -extfile "$tls/san.ext" -out "$tls/server.crt" 2>/dev/null
  chmod 600 "$tls/server.key"
}

start() {
  if [ ! -f "$DIR/data/PG_VERSION" ]; then
    rm -rf "$DIR"
    mkdir -p "$DIR"
    certificates
    [ "$(id -u)" = 0 ] && chown -R postgres "$DIR"
    as_owner "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust >/dev/null
    cat >> "$DIR/data/postgresql.conf" <<EOF
port = $PORT
listen_addresses = 'localhost'
unix_socket_directories = '$DIR'
ssl = on
ssl_cert_file = '$DIR/tls/server.crt'
ssl_key_file = '$DIR/tls/server.key'
max_connections = 200
EOF
    # TLS or nothing over TCP; the socket (this script's own use) stays plain.
    cat > "$DIR/data/pg_hba.conf" <<EOF
local   all all                trust
hostssl all all 127.0.0.1/32   trust
hostssl all all ::1/128        trust
EOF
  fi
  if ! as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w start >/dev/null
  fi
  url
}

case "${1:-}" in
  start) start ;;
  url) url ;;
  stop) as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null 2>&1 || true ;;
  *) echo "usage: $0 start|url|stop" >&2; exit 2 ;;
esac
