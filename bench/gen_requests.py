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
merchants in turn, so each merchant gets the same share. A `deposit` is a card deposit and a
`withdrawal` an SBP payout: the same requests serve the sandbox and a route to an acquirer
(`gateway route add --direction deposit --method card --provider NAME`), which the gateway
calls with its own body.

The kinds `sim-payin` and `sim-payout` are those calls made directly: the body the gateway
sends to an acquirer's `POST /v1/payments` for a card deposit or an SBP payout (same keys,
in the gateway's order, with a `notAfter` a day away and, for payins, an `expiresAt` an hour
away), one line each as

    IDEMPOTENCY_KEY <TAB> - <TAB> BODY

for `bench_load --mode acquirer`, which adds the bearer API key. They need no merchants
(`--merchants` is ignored) and take `--public-url` for the URLs in them: the simulator
notifies `notifyUrl` of each payment's first status as it answers (the benchmark points it
at a sink that answers 200), and nothing after that during a run: payins wait for their
page, payouts settle after the simulator's `--settle-ms`.
"""

import argparse
import hashlib
import hmac
import json
import random
import sys
import uuid
from datetime import datetime, timedelta, timezone


def amount(rng: random.Random, low: int, high: int) -> str:
    """An amount in [low, high] minor units as "R.KK", never ending in 05 (the sandbox
    declines those at creation, which would queue a callback during the request phases)."""
    while True:
        minor = rng.randint(low, high)
        if minor % 100 != 5:
            return f"{minor // 100}.{minor % 100:02d}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merchants", help="JSON list of merchant credentials")
    parser.add_argument("--kind", required=True,
                        choices=["deposit", "withdrawal", "sim-payin", "sim-payout"])
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--run-id", required=True, help="makes merchantOperationIds unique per run")
    parser.add_argument("--callback-url", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--public-url", default="http://127.0.0.1:18080",
                        help="sim-* kinds: the base of notifyUrl and returnUrl")
    args = parser.parse_args()
    if args.kind.startswith("sim-"):
        return acquirer_calls(args)
    if not args.merchants:
        parser.error("--merchants is required for deposits and withdrawals")

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


def rfc3339(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def acquirer_calls(args) -> int:
    """The gateway's creation calls to an acquirer, for sending to it directly."""
    rng = random.Random(args.seed)
    now = datetime.now(timezone.utc)
    not_after = rfc3339(now + timedelta(days=1))
    expires_at = rfc3339(now + timedelta(hours=1))
    payin = args.kind == "sim-payin"
    write = sys.stdout.write
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    for _ in range(args.count):
        reference = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        minor = int(amount(rng, 100, 999_999 if payin else 9_999).replace(".", ""))
        body = {
            "reference": reference,
            "kind": "payin" if payin else "payout",
            "method": "card" if payin else "sbp",
            "amount": minor,
            "currency": "RUB",
            "notifyUrl": f"{args.public_url}/providers/bench/notifications",
            "notAfter": not_after,
        }
        if payin:
            body["returnUrl"] = f"{args.public_url}/pay/{reference}/return"
            body["expiresAt"] = expires_at
        else:
            body["payout"] = {
                "phone": f"+79{rng.randint(100_000_000, 999_999_999)}",
                "name": "Ivan Petrov",
                "bank": "Bank A",
            }
        write(f"{reference}\t-\t{dumps(body)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
