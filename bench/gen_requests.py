#!/usr/bin/env python3
"""Pre-signed request bodies for the load generator, one request a line.

Signs exactly as a merchant would (hex HMAC-SHA256 of the exact body bytes, with the
deposit secret for deposits and the withdrawal secret for withdrawals), so the gateway
does all of its real work for every request. Each line is

    MERCHANT_ID <TAB> X-SIGNATURE <TAB> BODY

and every body carries its own merchantOperationId, so no request is a replay.

    gen_requests.py --merchants merchants.json --kind deposit --count 250000 \
        --run-id 1700000000 --callback-url http://127.0.0.1:18099/callback > deposits.tsv

merchants.json is a list of `gateway merchant create --json` objects. Requests go to the
merchants in turn, so each merchant gets the same share.
"""

import argparse
import hashlib
import hmac
import json
import random
import sys


def amount(rng: random.Random, low: int, high: int) -> str:
    """An amount in [low, high] minor units as "R.KK", never ending in 05 (the sandbox
    declines those at creation, which would queue a callback during the request phases)."""
    while True:
        minor = rng.randint(low, high)
        if minor % 100 != 5:
            return f"{minor // 100}.{minor % 100:02d}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merchants", required=True, help="JSON list of merchant credentials")
    parser.add_argument("--kind", choices=["deposit", "withdrawal"], required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--run-id", required=True, help="makes merchantOperationIds unique per run")
    parser.add_argument("--callback-url", required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    with open(args.merchants, encoding="utf-8") as f:
        merchants = json.load(f)
    if not merchants:
        print("no merchants", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    secret_key = "depositSecret" if args.kind == "deposit" else "withdrawalSecret"
    keys = [m[secret_key].encode() for m in merchants]
    ids = [m["merchantId"] for m in merchants]
    out = sys.stdout
    write = out.write
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    prefix = "d" if args.kind == "deposit" else "w"
    for i in range(args.count):
        m = i % len(merchants)
        body = {
            "amount": amount(rng, 100, 999_999) if args.kind == "deposit" else amount(rng, 100, 9_999),
            "currency": "RUB",
            "paymentMethod": "card" if args.kind == "deposit" else "sbp",
            "userId": f"user-{rng.randint(1, 100_000)}",
            "merchantOperationId": f"bench-{args.run_id}-{prefix}{i}",
            "callbackUrl": args.callback_url,
        }
        if args.kind == "withdrawal":
            body["requisites"] = {
                "phone": f"+79{rng.randint(100_000_000, 999_999_999)}",
                "accountName": "Ivan Petrov",
                "bankName": "Bank A",
            }
        raw = dumps(body).encode()
        signature = hmac.new(keys[m], raw, hashlib.sha256).hexdigest()
        write(f"{ids[m]}\t{signature}\t{raw.decode()}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
