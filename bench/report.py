#!/usr/bin/env python3
"""Turns the benchmark's raw outputs into JSON lines, and the lines into the table.

    report.py pgbench NAME SUMMARY.txt LOG...         -> one JSON line
    report.py wrk BACKEND KIND WRK.txt PEAK_RSS_KB [CONNECTIONS] -> one JSON line
    report.py callbacks RECEIVER.json START_MS PEAK_RSS_KB DELIVERED EXPECTED -> one JSON line
    report.py table RESULTS.jsonl CORES UPTIME         -> the markdown table and the targets
"""

import json
import re
import sys

TARGETS = {
    "ratio": 0.6,
    "p99_ms": 15.0,
    "sqlite_deposits": 5000.0,
    "callbacks": 3000.0,
    "rss_mb": 150.0,
    # With the primary acquirer down and its circuit open, payouts served by the secondary
    # take at most this much longer at p50 than with the primary healthy, and at most this
    # many times as long at p99: a few milliseconds, never the primary's 5 s timeout.
    "failover_added_p50_ms": 5.0,
    "failover_p99_ratio": 2.0,
}


def percentile(sorted_values, p):
    if not sorted_values:
        return 0.0
    k = min(len(sorted_values) - 1, max(0, int(round(p / 100.0 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]


def pgbench(name, summary, logs):
    text = open(summary, encoding="utf-8").read()
    tps = float(re.search(r"tps = ([0-9.]+) \(without initial", text).group(1))
    failed = re.search(r"number of failed transactions: (\d+)", text)
    latencies = []
    for path in logs:
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[2].isdigit():
                    latencies.append(int(parts[2]))
    latencies.sort()
    print(json.dumps({
        "kind": "pgbench", "name": name, "rate": tps,
        "p50_ms": percentile(latencies, 50) / 1000.0,
        "p99_ms": percentile(latencies, 99) / 1000.0,
        "errors": int(failed.group(1)) if failed else 0,
        "transactions": len(latencies),
    }))


def wrk(backend, kind, path, rss_kb, connections="?"):
    text = open(path, encoding="utf-8").read()
    line = next(l for l in text.splitlines() if l.startswith("WRK_JSON "))
    w = json.loads(line[len("WRK_JSON "):])
    errors = sum(w[k] for k in ("err_connect", "err_read", "err_write", "err_status", "err_timeout"))
    print(json.dumps({
        "kind": "gateway", "backend": backend, "name": kind, "rate": w["rps"],
        "p50_ms": w["p50_us"] / 1000.0, "p99_ms": w["p99_us"] / 1000.0,
        "errors": errors, "requests": w["requests"], "exhausted": w["exhausted"],
        "rss_mb": int(rss_kb) / 1024.0, "connections": connections,
    }))


def callbacks(receiver, start_ms, rss_kb, delivered, expected):
    r = json.loads(open(receiver, encoding="utf-8").read().strip().splitlines()[-1])
    since_start = (r["last_unix_ms"] - int(start_ms)) / 1000.0 if r["finished"] else 0.0
    print(json.dumps({
        "kind": "callbacks", "name": "callbacks", "rate": r["rate"] if r["finished"] else 0.0,
        "rate_from_start": int(expected) / since_start if since_start > 0 else 0.0,
        "unique": r["unique"], "posts": r["posts"], "delivered": int(delivered),
        "errors": int(expected) - int(delivered), "rss_mb": int(rss_kb) / 1024.0,
        "seconds": r["first_to_last_s"],
    }))


def table(results, cores, uptime):
    rows = [json.loads(l) for l in open(results, encoding="utf-8") if l.strip()]
    bare = {r["name"]: r for r in rows if r["kind"] == "pgbench"}
    out = []
    out.append(f"Benchmark on {cores} cores; load: {uptime.strip()}")
    out.append("")
    out.append("| run | requests/s | p50 ms | p99 ms | errors | gateway peak RSS MB | gateway / bare |")
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    checks = []
    for r in rows:
        if r["kind"] == "pgbench":
            label = {"deposit": "bare PostgreSQL: deposit insert (pgbench, tps)",
                     "withdrawal": "bare PostgreSQL: withdrawal transaction (pgbench, tps)"}[r["name"]]
            out.append(f"| {label} | {r['rate']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} "
                       f"| {r['errors']} | - | - |")
        elif r["kind"] == "gateway" and r["backend"] == "acquirer":
            label = {"payout-healthy": "payouts to acquirer-sim, primary healthy",
                     "payout-primary-down": "payouts to acquirer-sim, primary down, circuit open "
                                            "(served by the secondary)"}[r["name"]]
            label += f", {r.get('connections', '?')} connections"
            out.append(f"| gateway on PostgreSQL: {label} ({r['requests']} in all) "
                       f"| {r['rate']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} "
                       f"| {r['errors']} | {r['rss_mb']:.0f} | - |")
            checks.append((f"acquirer {r['name']}: 0 errors", r["errors"] == 0,
                           str(r["errors"])))
        elif r["kind"] == "gateway":
            b = "PostgreSQL" if r["backend"] == "postgres" else "SQLite"
            ratio = "-"
            if r["backend"] == "postgres" and r["name"] in bare:
                value = r["rate"] / bare[r["name"]]["rate"]
                ratio = f"{value:.2f}"
                checks.append((f"PostgreSQL {r['name']}s/s >= {TARGETS['ratio']} x bare",
                               value >= TARGETS["ratio"], f"{value:.2f} x"))
                checks.append((f"PostgreSQL {r['name']}s p99 <= {TARGETS['p99_ms']:.0f} ms",
                               r["p99_ms"] <= TARGETS["p99_ms"], f"{r['p99_ms']:.2f} ms"))
                checks.append((f"PostgreSQL {r['name']}s: 0 errors", r["errors"] == 0,
                               str(r["errors"])))
            if r["backend"] == "sqlite" and r["name"] == "deposit":
                checks.append((f"SQLite deposits/s >= {TARGETS['sqlite_deposits']:.0f}",
                               r["rate"] >= TARGETS["sqlite_deposits"], f"{r['rate']:.0f}/s"))
            note = " (ran out of pre-signed requests!)" if r.get("exhausted") else ""
            out.append(f"| gateway on {b}: {r['name']}s ({r['requests']} in all){note} "
                       f"| {r['rate']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} "
                       f"| {r['errors']} | {r['rss_mb']:.0f} | {ratio} |")
        elif r["kind"] == "callbacks":
            out.append(f"| callbacks delivered (PostgreSQL, {r['delivered']} of "
                       f"{r['delivered'] + r['errors']}, first to last) | {r['rate']:.0f} | - | - "
                       f"| {r['errors']} | {r['rss_mb']:.0f} | - |")
            checks.append((f"callbacks delivered/s >= {TARGETS['callbacks']:.0f}",
                           r["rate"] >= TARGETS["callbacks"],
                           f"{r['rate']:.0f}/s ({r['rate_from_start']:.0f}/s counting start-up)"))
    acquirer = {r["name"]: r for r in rows if r["kind"] == "gateway" and r["backend"] == "acquirer"}
    if "payout-healthy" in acquirer and "payout-primary-down" in acquirer:
        down, healthy = acquirer["payout-primary-down"], acquirer["payout-healthy"]
        added = down["p50_ms"] - healthy["p50_ms"]
        limit = TARGETS["failover_added_p50_ms"]
        checks.append((f"primary down, circuit open: added p50 <= {limit:.0f} ms",
                       added <= limit, f"{added:+.2f} ms"))
        ratio = down["p99_ms"] / healthy["p99_ms"] if healthy["p99_ms"] else 0.0
        limit = TARGETS["failover_p99_ratio"]
        checks.append((f"primary down, circuit open: p99 <= {limit:.0f} x healthy p99 "
                       f"(the primary's timeout is 5000 ms)", ratio <= limit,
                       f"{ratio:.2f} x ({down['p99_ms']:.1f} vs {healthy['p99_ms']:.1f} ms)"))
    peak = max((r.get("rss_mb", 0.0) for r in rows), default=0.0)
    checks.append((f"gateway peak RSS <= {TARGETS['rss_mb']:.0f} MB", peak <= TARGETS["rss_mb"],
                   f"{peak:.0f} MB"))
    out.append("")
    out.append("| target | met | measured |")
    out.append("|---|---|---|")
    for name, ok, measured in checks:
        out.append(f"| {name} | {'yes' if ok else 'NO'} | {measured} |")
    print("\n".join(out))


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "pgbench":
        pgbench(args[0], args[1], args[2:])
    elif mode == "wrk":
        wrk(*args)
    elif mode == "callbacks":
        callbacks(*args)
    elif mode == "table":
        table(*args)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
