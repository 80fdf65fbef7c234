# Routine commands. `just --list` shows them.

pg_url := "postgres://postgres@127.0.0.1:5432/test"

# Serve the demo on the embedded SQLite database.
run:
    cargo run --release -p app -- serve --demo

# Every test; PostgreSQL ones too when GATEWAY_TEST_DATABASE_URL is set.
test:
    cargo test --workspace

# Every test against the local PostgreSQL as well.
test-pg:
    GATEWAY_TEST_DATABASE_URL={{pg_url}} cargo test --workspace

# Lints as CI runs them.
lint:
    cargo clippy --workspace --all-targets -- -D warnings

# Format the code.
fmt:
    cargo fmt --all

# What CI runs.
ci:
    bash .ci/run

# The benchmark: bare PostgreSQL vs the gateway, SQLite, callbacks (docs/performance.md).
bench:
    bash bench/run.sh

# The operator console on 1,000,000 operations in PostgreSQL: overview and search timings (docs/console.md).
bench-console:
    bash bench/console.sh

# Schemathesis on docs/openapi.yaml, signed, on SQLite and PostgreSQL (or: just fuzz-api sqlite|postgres).
fuzz-api backend="all":
    bash scripts/fuzz-api.sh {{backend}}

# The demo against acquirer-sim, a simulated bank: card deposits and payouts go to it (README.md).
demo-acquirer:
    bash scripts/demo-acquirer.sh
