#!/usr/bin/env python3
"""Turns the benchmark's raw outputs into JSON lines, and the lines into the table.

    report.py fsync TOOL OPS_PER_S WAL_SYNC_METHOD     -> one JSON line
    report.py pgbench NAME ROWS SUMMARY.txt LOG...      -> one JSON line (closed loop)
    report.py pgbench-rate NAME RATE SUMMARY.txt LOG... -> one JSON line (pgbench -R)
    report.py wrk BACKEND KIND WRK.txt PEAK_RSS_KB [CONNECTIONS] -> one JSON line
    report.py load BACKEND KIND TARGET LOAD.json PEAK_RSS_KB [ROUND] -> one JSON line (bench_load)
    report.py declines BACKEND COUNT                    -> one JSON line
    report.py callbacks RECEIVER.json START_MS PEAK_RSS_KB DELIVERED EXPECTED -> one JSON line
    report.py table RESULTS.jsonl CORES UPTIME          -> the markdown table and the targets

Every target is a ratio between figures of the same run (docs/performance.md), so runs on
different machines, or on a busy one, can be compared.
"""

import json
import math
import re
import statistics
import sys

TARGETS = {
    # PostgreSQL gateway at saturation against the bare one-transaction-per-request figure.
    "bare_ratio": 1.5,
    # At 50 % of its saturation rate, the gateway's p99 over the bare transaction's p99 at
    # the same rate (pgbench -R), in ms.
    "rate_added_p99_ms": 5.0,
    # Saturation at 64 connections: p99 at most this many times p50.
    "tail_ratio": 5.0,
    # SQLite's rate against the PostgreSQL gateway's, same kind, same run.
    "sqlite_ratio": 0.5,
    # The failover cluster's (synchronous standby, TLS) against the single server's.
    "cluster_ratio": 0.5,
    # The same gateway's rate with a tariff on every merchant against without (medians).
    "fees_ratio": 0.95,
    # Callbacks delivered per second against PostgreSQL deposits created per second.
    "callbacks_ratio": 1.0,
    # The acquirer path at 50 % of its saturation: added over the simulator's own latency.
    "acquirer_added_p50_ms": 2.0,
    "acquirer_added_p99_ms": 10.0,
    "rss_mb": 150.0,
    # With the primary acquirer down and its circuit open, payouts served by the secondary
    # take at most this much longer at p50 than with the primary healthy, and at most this
    # many times as long at p99: a few milliseconds, never the primary's 5 s timeout.
    "failover_added_p50_ms": 5.0,
    "failover_p99_ratio": 2.0,
}

KIND_PLURAL = {"deposit": "deposits", "withdrawal": "withdrawals", "payout": "payouts",
               "payin": "card payins"}


def percentile(sorted_values, p):
    """The smallest value with at least p % of the values at or below it."""
    if not sorted_values:
        return 0.0
    k = math.ceil(round(p / 100.0 * len(sorted_values), 9))
    return sorted_values[min(len(sorted_values), max(1, k)) - 1]


def pgbench_log(summary, logs):
    text = open(summary, encoding="utf-8").read()
    tps = float(re.search(r"tps = ([0-9.]+) \(without initial", text).group(1))
    failed = re.search(r"number of failed transactions: (\d+)", text)
    latencies = []
    for path in logs:
        with open(path, encoding="utf-8") as f:
            for line in f:
                # client, transaction, latency in us (with --rate: from the scheduled start),
                # script, epoch s, us [, schedule lag].
                parts = line.split()
                if len(parts) >= 3 and parts[2].isdigit():
                    latencies.append(int(parts[2]))
    latencies.sort()
    return {
        "tps": tps,
        "p50_ms": percentile(latencies, 50) / 1000.0,
        "p99_ms": percentile(latencies, 99) / 1000.0,
        "p999_ms": percentile(latencies, 99.9) / 1000.0,
        "max_ms": (latencies[-1] if latencies else 0) / 1000.0,
        "errors": int(failed.group(1)) if failed else 0,
        "transactions": len(latencies),
    }


def pgbench(name, rows, summary, logs):
    r = pgbench_log(summary, logs)
    rows = int(rows)
    r.update({"kind": "pgbench", "name": name, "rows": rows, "rate": r["tps"] * rows})
    print(json.dumps(r))


def pgbench_rate(name, rate, summary, logs):
    r = pgbench_log(summary, logs)
    r.update({"kind": "bare-rate", "name": name, "offered": float(rate), "rate": r["tps"]})
    print(json.dumps(r))


def fsync(tool, ops, method):
    print(json.dumps({"kind": "fsync", "tool": tool, "ops": float(ops),
                      "wal_sync_method": method}))


def wrk(backend, kind, path, rss_kb, connections="?", round_=None):
    text = open(path, encoding="utf-8").read()
    line = next(l for l in text.splitlines() if l.startswith("WRK_JSON "))
    w = json.loads(line[len("WRK_JSON "):])
    errors = sum(w[k] for k in ("err_connect", "err_read", "err_write", "err_status", "err_timeout"))
    print(json.dumps({
        "kind": "gateway", "backend": backend, "name": kind, "rate": w["rps"],
        "p50_ms": w["p50_us"] / 1000.0, "p90_ms": w["p90_us"] / 1000.0,
        "p99_ms": w["p99_us"] / 1000.0, "p999_ms": w.get("p999_us", 0) / 1000.0,
        "errors": errors, "requests": w["requests"], "exhausted": w["exhausted"],
        "rss_mb": int(rss_kb or 0) / 1024.0,
        "connections": int(connections) if str(connections).isdigit() else connections,
        **({"round": int(round_)} if round_ else {}),
    }))


def load(backend, kind, target, path, rss_kb, round_=None):
    w = json.loads(open(path, encoding="utf-8").read().strip().splitlines()[-1])
    print(json.dumps({
        "kind": "load", "backend": backend, "name": kind, "target": target,
        "round": int(round_) if round_ else None,
        "offered": w["offered_rate"], "rate": w["achieved_rate"], "requests": w["count"],
        "p50_ms": w["p50_ms"], "p90_ms": w["p90_ms"], "p99_ms": w["p99_ms"],
        "p999_ms": w["p999_ms"], "max_ms": w["max_ms"], "errors": w["errors"],
        "exhausted": w["exhausted"], "connections": w["connections"],
        "max_send_lag_ms": w["max_send_lag_ms"],
        "rss_mb": int(rss_kb or 0) / 1024.0 if target == "gateway" else 0.0,
    }))


def declines(backend, count):
    print(json.dumps({"kind": "declines", "backend": backend, "errors": int(count)}))


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


def acquirer_rounds(rows, kind):
    """The acquirer phase's (gateway, simulator) runs of `kind`, round by round; a run of the
    harness from before rounds has one, without a number."""
    runs = {}
    for r in rows:
        if r["kind"] == "load" and r["backend"] == "acquirer-path" and r["name"] == kind:
            runs.setdefault(r.get("round") or 0, {})[r["target"]] = r
    return [(pair["gateway"], pair["simulator"]) for _, pair in sorted(runs.items())
            if "gateway" in pair and "simulator" in pair]


def ms(value):
    return f"{value:.2f}" if value else "-"


def table(results, cores, uptime):
    rows = [json.loads(l) for l in open(results, encoding="utf-8") if l.strip()]
    bare = {r["name"]: r for r in rows if r["kind"] == "pgbench"}
    bare_rate = {r["name"]: r for r in rows if r["kind"] == "bare-rate"}
    sat = {(r["backend"], r["name"]): r for r in rows if r["kind"] == "gateway"}
    loads = {(r["backend"], r["name"], r["target"]): r for r in rows if r["kind"] == "load"}
    out, checks = [], []
    runs = []  # (label, errors) of every run

    def check(name, ok, measured):
        checks.append((name, "yes" if ok else "NO", measured))

    def missing(name, why):
        checks.append((name, "-", why))

    header = f"Benchmark on {cores} cores; load: {uptime.strip()}"
    for r in rows:
        if r["kind"] == "fsync":
            header += (f"; fsync: {r['ops']:.0f} fdatasync/s of 8 kB ({r['tool']}; PostgreSQL's "
                       f"wal_sync_method: {r['wal_sync_method']})")
    out += [header, ""]
    out.append("| run | requests/s | p50 ms | p99 ms | p99.9 ms | errors "
               "| gateway peak RSS MB | gateway / bare | gateway / batched |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")

    def line(label, r, rss="-", ratio="-", batched="-"):
        out.append(f"| {label} | {r['rate']:.0f} | {ms(r['p50_ms'])} | {ms(r['p99_ms'])} "
                   f"| {ms(r.get('p999_ms', 0))} | {r['errors']} | {rss} | {ratio} | {batched} |")
        runs.append((label, r["errors"]))

    for r in rows:
        kind = r["kind"]
        if kind == "pgbench":
            name = r["name"]
            if name.endswith("-batch"):
                base = name[: -len("-batch")]
                what = {"deposit": "deposits", "withdrawal": "withdrawals of one merchant"}[base]
                stmt = "INSERT" if base == "deposit" else "statement"
                label = (f"bare PostgreSQL, batched: {r['rows']} {what} per {stmt} "
                         f"(pgbench, rows/s; {r['tps']:.0f} statements/s; latency per statement)")
            else:
                label = {"deposit": "bare PostgreSQL: deposit insert (pgbench, tps)",
                         "withdrawal": "bare PostgreSQL: withdrawal transaction (pgbench, tps)"}[name]
            line(label, r)
        elif kind == "bare-rate":
            line(f"bare PostgreSQL: {r['name']} at {r['offered']:.0f}/s, open loop (pgbench -R, "
                 f"latency from the scheduled start)", r)
        elif kind == "gateway" and r["backend"] == "acquirer":
            label = {"payout-healthy": "payouts to acquirer-sim, primary healthy",
                     "payout-primary-down": "payouts to acquirer-sim, primary down, circuit open "
                                            "(served by the secondary)"}[r["name"]]
            label += f", {r.get('connections', '?')} connections"
            line(f"gateway on PostgreSQL: {label} ({r['requests']} in all)", r,
                 rss=f"{r['rss_mb']:.0f}")
        elif kind == "gateway" and r["backend"].startswith("fees-"):
            variant = r["backend"][len("fees-"):]
            line(f"gateway on PostgreSQL, {variant} a 1 % tariff: "
                 f"{KIND_PLURAL.get(r['name'], r['name'])}, {r.get('connections', '?')} "
                 f"connections, round {r.get('round', '?')} ({r['requests']} in all)", r,
                 rss=f"{r['rss_mb']:.0f}")
        elif kind == "gateway":
            plural = KIND_PLURAL.get(r["name"], r["name"])
            b = {"postgres": "PostgreSQL", "sqlite": "SQLite",
                 "cluster": "the failover cluster (synchronous standby, TLS)",
                 "acquirer-path": "PostgreSQL via one acquirer-sim"}.get(r["backend"], r["backend"])
            ratio = batched = "-"
            if r["backend"] == "postgres" and r["name"] in bare:
                value = r["rate"] / bare[r["name"]]["rate"]
                ratio = f"{value:.2f}"
                check(f"PostgreSQL {plural}/s >= {TARGETS['bare_ratio']} x bare one-transaction",
                      value >= TARGETS["bare_ratio"], f"{value:.2f} x")
            elif r["backend"] == "postgres":
                missing(f"PostgreSQL {plural}/s >= {TARGETS['bare_ratio']} x bare one-transaction",
                        "needs the pgbench phase")
            if r["backend"] == "postgres" and f"{r['name']}-batch" in bare:
                batched = f"{r['rate'] / bare[r['name'] + '-batch']['rate']:.2f}"
            if r["backend"] == "cluster":
                pg = sat.get(("postgres", r["name"]))
                name = (f"failover cluster {plural}/s >= {TARGETS['cluster_ratio']} x the single "
                        f"server's")
                if pg:
                    value = r["rate"] / pg["rate"]
                    ratio = f"{value:.2f} of single"
                    check(name, value >= TARGETS["cluster_ratio"], f"{value:.2f} x")
                else:
                    missing(name, "needs the postgres phase")
            if r["backend"] == "sqlite":
                pg = sat.get(("postgres", r["name"]))
                name = f"SQLite {plural}/s >= {TARGETS['sqlite_ratio']} x PostgreSQL gateway's"
                if pg:
                    value = r["rate"] / pg["rate"]
                    check(name, value >= TARGETS["sqlite_ratio"], f"{value:.2f} x")
                else:
                    missing(name, "needs the postgres phase")
            note = " (ran out of pre-signed requests!)" if r.get("exhausted") else ""
            connections = r.get("connections", "?")
            label = (f"gateway on {b}: {plural}, {connections} connections "
                     f"({r['requests']} in all){note}")
            line(label, r, rss=f"{r['rss_mb']:.0f}", ratio=ratio, batched=batched)
            tail = r["p99_ms"] / r["p50_ms"] if r["p50_ms"] else 0.0
            check(f"{b} {plural} at {connections} connections: p99 <= "
                  f"{TARGETS['tail_ratio']:.0f} x p50", tail <= TARGETS["tail_ratio"],
                  f"{tail:.2f} x ({r['p99_ms']:.1f} vs {r['p50_ms']:.1f} ms)")
        elif kind == "load":
            plural = KIND_PLURAL.get(r["name"], r["name"])
            note = " (ran out of pre-signed requests!)" if r.get("exhausted") else ""
            where = {"postgres": "gateway on PostgreSQL",
                     "acquirer-path": "gateway on PostgreSQL via one acquirer-sim"}
            who = (where.get(r["backend"], r["backend"]) if r["target"] == "gateway"
                   else "acquirer-sim directly (the same calls)")
            round_ = f", round {r['round']}" if r.get("round") else ""
            label = (f"{who}: {plural} at {r['offered']:.0f}/s offered, open loop, "
                     f"{r['connections']} connections ({r['requests']} in all{round_}; the "
                     f"generator's own send lag at most {r.get('max_send_lag_ms', 0):.0f} ms)"
                     f"{note}")
            line(label, r, rss=f"{r['rss_mb']:.0f}" if r["target"] == "gateway" else "-")
        elif kind == "declines":
            runs.append((f"{r['backend']}: operations declined by the gateway (status 2)",
                         r["errors"]))
        elif kind == "callbacks":
            line(f"callbacks delivered (PostgreSQL, {r['delivered']} of "
                 f"{r['delivered'] + r['errors']}, first to last)",
                 {**r, "p50_ms": 0, "p99_ms": 0}, rss=f"{r['rss_mb']:.0f}")
            pg = sat.get(("postgres", "deposit"))
            name = "callbacks delivered/s >= PostgreSQL deposits created/s"
            if pg:
                value = r["rate"] / pg["rate"]
                check(name, value >= TARGETS["callbacks_ratio"],
                      f"{value:.2f} x ({r['rate']:.0f}/s vs {pg['rate']:.0f}/s; "
                      f"{r['rate_from_start']:.0f}/s counting start-up)")
            else:
                missing(name, f"needs the postgres phase ({r['rate']:.0f}/s delivered)")

    # Fees: the same gateway with a tariff on every merchant and without, rounds alternated;
    # the medians decide.
    for kind in ("deposit", "withdrawal"):
        rates = {v: [r["rate"] for r in rows if r["kind"] == "gateway"
                     and r["backend"] == f"fees-{v}" and r["name"] == kind]
                 for v in ("with", "without")}
        if not rates["with"] or not rates["without"]:
            continue
        with_, without = statistics.median(rates["with"]), statistics.median(rates["without"])
        value = with_ / without if without else 0.0
        check(f"PostgreSQL {KIND_PLURAL[kind]} with a tariff in place: >= "
              f"{TARGETS['fees_ratio']} x without (median of {len(rates['with'])} rounds)",
              value >= TARGETS["fees_ratio"],
              f"{value:.2f} x ({with_:.0f}/s vs {without:.0f}/s; with: "
              f"{', '.join(f'{x:.0f}' for x in rates['with'])}; without: "
              f"{', '.join(f'{x:.0f}' for x in rates['without'])})")

    # Open loop at 50 % of saturation: the gateway against the bare transaction.
    for kind in ("deposit", "withdrawal"):
        gw = loads.get(("postgres", kind, "gateway"))
        if not gw:
            continue
        name = (f"PostgreSQL {KIND_PLURAL[kind]} at 50 % of saturation: gateway p99 <= bare p99 "
                f"+ {TARGETS['rate_added_p99_ms']:.0f} ms")
        b = bare_rate.get(kind)
        if b:
            added = gw["p99_ms"] - b["p99_ms"]
            check(name, added <= TARGETS["rate_added_p99_ms"],
                  f"{added:+.2f} ms ({gw['p99_ms']:.2f} vs {b['p99_ms']:.2f} ms at "
                  f"{gw['offered']:.0f}/s)")
        else:
            missing(name, "no pgbench -R run")

    # The acquirer path against the simulator's own latency, same calls, same rate: each round
    # is a gateway run and the simulator's run just after it; the median round decides.
    for kind in ("payout", "payin"):
        rounds = acquirer_rounds(rows, kind)
        if not rounds:
            continue
        plural = KIND_PLURAL[kind]
        offered = rounds[0][0]["offered"]
        for field, target in (("p50_ms", "acquirer_added_p50_ms"),
                              ("p99_ms", "acquirer_added_p99_ms")):
            added = [gw[field] - sim[field] for gw, sim in rounds]
            median = statistics.median(added)
            each = ", ".join(f"{a:+.2f} ({gw[field]:.2f} vs {sim[field]:.2f})"
                             for a, (gw, sim) in zip(added, rounds))
            gw, sim = rounds[0]
            how = (f"median of {len(rounds)} rounds; each: {each} ms" if len(rounds) > 1
                   else f"{gw[field]:.2f} vs {sim[field]:.2f} ms")
            check(f"acquirer path, {plural} at {offered:.0f}/s: added {field[:3]} <= "
                  f"{TARGETS[target]:.0f} ms", median <= TARGETS[target],
                  f"{median:+.2f} ms ({how})")

    acquirer = {r["name"]: r for r in rows if r["kind"] == "gateway" and r["backend"] == "acquirer"}
    if "payout-healthy" in acquirer and "payout-primary-down" in acquirer:
        down, healthy = acquirer["payout-primary-down"], acquirer["payout-healthy"]
        added = down["p50_ms"] - healthy["p50_ms"]
        limit = TARGETS["failover_added_p50_ms"]
        check(f"primary down, circuit open: added p50 <= {limit:.0f} ms",
              added <= limit, f"{added:+.2f} ms")
        ratio = down["p99_ms"] / healthy["p99_ms"] if healthy["p99_ms"] else 0.0
        limit = TARGETS["failover_p99_ratio"]
        check(f"primary down, circuit open: p99 <= {limit:.0f} x healthy p99 "
              f"(the primary's timeout is 5000 ms)", ratio <= limit,
              f"{ratio:.2f} x ({down['p99_ms']:.1f} vs {healthy['p99_ms']:.1f} ms)")
    peak = max((r.get("rss_mb", 0.0) for r in rows), default=0.0)
    if peak > 0:
        check(f"gateway peak RSS < {TARGETS['rss_mb']:.0f} MB", peak < TARGETS["rss_mb"],
              f"{peak:.0f} MB")
    else:
        missing(f"gateway peak RSS < {TARGETS['rss_mb']:.0f} MB", "no gateway ran")
    failed = [f"{label}: {errors}" for label, errors in runs if errors]
    check("0 errors in every run", not failed,
          "; ".join(failed) if failed else f"0 in all {len(runs)} runs")
    out.append("")
    out.append("| target | met | measured |")
    out.append("|---|---|---|")
    for name, ok, measured in checks:
        out.append(f"| {name} | {ok} | {measured} |")
    print("\n".join(out))


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "pgbench":
        pgbench(args[0], args[1], args[2], args[3:])
    elif mode == "pgbench-rate":
        pgbench_rate(args[0], args[1], args[2], args[3:])
    elif mode == "fsync":
        fsync(*args)
    elif mode == "wrk":
        wrk(*args)
    elif mode == "load":
        load(*args)
    elif mode == "declines":
        declines(*args)
    elif mode == "callbacks":
        callbacks(*args)
    elif mode == "table":
        table(*args)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
