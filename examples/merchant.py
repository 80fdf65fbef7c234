#!/usr/bin/env python3
"""A merchant's side of the gateway, with the Python standard library, and the official
Standard Webhooks library (`pip install standardwebhooks`) for callbacks when it is installed.

It signs every request with signature version 2 (`x-signature-version: 2`: the
timestamp, method, path and body, so a captured signature works nowhere else and
for 5 minutes only; refunds, cancels, input and confirmation accept nothing else),
creates a card deposit and an SBP payout, reads them back, refunds part of an approved
deposit, cancels a deposit and a payout that have not happened yet, and runs a
small callback receiver that verifies each callback, answers 401 to a stale or
badly signed one without processing it, drops duplicates and orders each
operation's callbacks by their `sequence`. With `standardwebhooks` installed it
verifies `webhook-id`, `webhook-timestamp` and `webhook-signature` with that
library, keyed by `whsec_` + base64 of the secret; without it, the timestamp and
`x-signature-v2` by hand.

    python3 examples/merchant.py                     # against `gateway serve --demo`
    GATEWAY_URL=http://127.0.0.1:8080 MERCHANT_ID=... DEPOSIT_SECRET=... \
        WITHDRAWAL_SECRET=... python3 examples/merchant.py
    python3 examples/merchant.py verify < callbacks.jsonl

`verify` checks callbacks already received with the Standard Webhooks library (which it
needs): one JSON object per line on stdin, `{"headers": {...}, "body": "the exact body"}`,
and one line out for each, `{"verified": true|false, "webhookId": ..., "sequence": ...,
"error": ...}`.

During a secret rotation's overlap, DEPOSIT_SECRET (or WITHDRAWAL_SECRET) is the
new secret, which signs requests, and OLD_DEPOSIT_SECRETS (or
OLD_WITHDRAWAL_SECRETS, comma-separated) the older ones, which callbacks may
still be signed with until the overlap ends.

For callbacks to reach the receiver on 127.0.0.1, start the gateway with
GATEWAY_CALLBACK_ALLOW_PRIVATE=true. The refund step approves its deposit through
the sandbox's `complete` endpoint, so it needs the sandbox (on by default).
"""

import base64
import hashlib
import hmac
import http.server
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid

try:  # the official Standard Webhooks verifier, if installed
    from standardwebhooks.webhooks import Webhook, WebhookVerificationError
except ImportError:
    Webhook = None

GATEWAY = os.environ.get("GATEWAY_URL", "http://127.0.0.1:8080")
MERCHANT = os.environ.get("MERCHANT_ID", "demo")
DEPOSIT_SECRET = os.environ.get(
    "DEPOSIT_SECRET", "6465706f7369742d64656d6f2d7365637265742d6e6f742d666f722d70726f64")
WITHDRAWAL_SECRET = os.environ.get(
    "WITHDRAWAL_SECRET", "7769746864726177616c2d64656d6f2d7365637265742d6e6f742d666f722d70")
CALLBACK_PORT = int(os.environ.get("CALLBACK_PORT", "8099"))
# How far a callback's x-callback-timestamp may be from our clock before it counts as a replay.
CALLBACK_MAX_AGE = 300


def older(name: str) -> list:
    return [secret for secret in os.environ.get(name, "").split(",") if secret]


# Every secret a callback may be signed with, by its `data.type` (refunds belong to deposits):
# the current one, then during a rotation's overlap the older ones.
DEPOSIT_SECRETS = [DEPOSIT_SECRET] + older("OLD_DEPOSIT_SECRETS")
WITHDRAWAL_SECRETS = [WITHDRAWAL_SECRET] + older("OLD_WITHDRAWAL_SECRETS")
SECRETS_FOR_TYPE = {"deposit": DEPOSIT_SECRETS, "refund": DEPOSIT_SECRETS, "dispute": DEPOSIT_SECRETS,
                    "withdrawal": WITHDRAWAL_SECRETS}


def standard_webhooks_key(secret: str) -> str:
    """A secret as a Standard Webhooks key: `whsec_` + base64 of the secret's UTF-8 bytes."""
    return "whsec_" + base64.b64encode(secret.encode()).decode()


def sign(secret: str, message: bytes) -> str:
    """Hex HMAC-SHA256 with the secret's text as the key."""
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_headers(secret: str, method: str, path_and_query: str, body: bytes) -> dict:
    """Signature version 2: x-signature over "{x-timestamp}\n{METHOD}\n{path and query}\n{body}",
    the path and query exactly as sent and the body's exact bytes (empty for a GET)."""
    stamp = str(int(time.time()))
    message = f"{stamp}\n{method}\n{path_and_query}\n".encode() + body
    return {"x-signature-version": "2", "x-timestamp": stamp, "x-signature": sign(secret, message)}


def call(method: str, path: str, secret: str, body=None):
    data = json.dumps(body, separators=(",", ":")).encode() if body is not None else None
    headers = {"merchant-id": MERCHANT}
    headers.update(signature_headers(secret, method, path, data or b""))
    if data is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(GATEWAY + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def refund_deposit(operation_id: str, amount: str, merchant_refund_id=None, callback_url=None):
    """Refunds `amount` of an approved deposit; the answer's data is the refund (status 3 at first)."""
    body = {"amount": amount}
    if merchant_refund_id is not None:
        body["merchantRefundId"] = merchant_refund_id
    if callback_url is not None:
        body["callbackUrl"] = callback_url
    return call("POST", f"/api/v1/deposits/{operation_id}/refunds", DEPOSIT_SECRET, body)


def read_refund(operation_id: str, refund_id: str):
    return call("GET", f"/api/v1/deposits/{operation_id}/refunds/{refund_id}", DEPOSIT_SECRET)


def cancel_deposit(operation_id: str):
    """Cancels a deposit the user has not paid yet: 200 declined `Canceled`, or 409 InvalidState."""
    return call("POST", f"/api/v1/deposits/{operation_id}/cancel", DEPOSIT_SECRET, {})


def cancel_withdrawal(operation_id: str):
    """Cancels a payout its provider has not executed yet (its hold is released); 503 means retry."""
    return call("POST", f"/api/v1/withdrawals/{operation_id}/cancel", WITHDRAWAL_SECRET, {})


def sandbox_complete(operation_id: str, status: int = 1):
    """Test mode only, no signature: finishes a sandbox operation as the bank would (1 approves)."""
    data = json.dumps({"status": status}).encode()
    request = urllib.request.Request(f"{GATEWAY}/sandbox/operations/{operation_id}/complete", data=data,
                                     headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def verify_callback(body: bytes, stamp: str, signature_v2: str) -> str:
    """Checks x-callback-timestamp, then x-signature-v2 over "{stamp}.{body}" (the raw bytes
    received) with each secret for `data.type`. Only "valid" may be processed."""
    if not (stamp.isascii() and stamp.isdigit()) or abs(time.time() - int(stamp)) > CALLBACK_MAX_AGE:
        return "STALE timestamp (missing, malformed, or a replay)"
    message = stamp.encode() + b"." + body
    secrets = SECRETS_FOR_TYPE.get(json.loads(body)["data"]["type"], [])
    fits = [hmac.compare_digest(sign(secret, message), signature_v2.lower()) for secret in secrets]
    return "valid" if any(fits) else "INVALID signature"


def verify_standard(body: bytes, headers) -> str:
    """Verifies a callback with the Standard Webhooks library: its webhook-timestamp within 5
    minutes, and one of the `v1,...` signatures of webhook-signature (one per live secret
    during a rotation) made with a key of ours for `data.type`. Only "valid" may be processed."""
    wanted = {name: headers.get(name, "") for name in ("webhook-id", "webhook-timestamp", "webhook-signature")}
    try:
        kind = json.loads(body)["data"]["type"]
    except (ValueError, KeyError, TypeError):
        return "INVALID body"
    error = "no secret for this type"
    for secret in SECRETS_FOR_TYPE.get(kind, []):
        try:
            Webhook(standard_webhooks_key(secret)).verify(body, wanted)
            return "valid"
        except WebhookVerificationError as refused:
            error = str(refused)
    return f"INVALID ({error})"


def dedup_key(data: dict) -> str:
    """Without a webhook-id header, by the body: a refund is told apart by refundId, a
    dispute's change by its dispute and status."""
    if data["type"] == "refund":
        return "refund:" + data["refundId"]
    if data["type"] == "dispute":
        return "dispute:" + data["disputeId"] + ":" + data["status"]
    return "operation:" + data["operationId"]


class CallbackReceiver(http.server.BaseHTTPRequestHandler):
    seen = set()  # keep this in your database; HTTPServer handles one request at a time

    latest = {}  # operationId -> the highest `sequence` processed: an older one arriving late is stale

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if Webhook is not None:
            verdict = verify_standard(body, self.headers)
        else:
            verdict = verify_callback(body, self.headers.get("x-callback-timestamp", ""),
                                      self.headers.get("x-signature-v2", ""))
        valid = verdict == "valid"
        data = json.loads(body)["data"]
        # webhook-id is the same on every attempt of one callback, and only of that one.
        key = self.headers.get("webhook-id") or dedup_key(data)
        duplicate = valid and key in self.seen
        if valid:
            self.seen.add(key)
        sequence = data.get("sequence", 0)
        late = valid and not duplicate and sequence < self.latest.get(data["operationId"], 0)
        if valid and not duplicate:
            self.latest[data["operationId"]] = max(sequence, self.latest.get(data["operationId"], 0))
        about = (f"refund {data['refundId']} of {data['operationId']}" if data["type"] == "refund"
                 else f"{data['type']} {data['operationId']}")
        print(f"callback #{self.headers.get('x-callback-attempt')} seq {sequence}: {about} "
              f"status={data['status']} {verdict}"
              f"{' (duplicate, ignored)' if duplicate else ''}"
              f"{' (arrived after a later one of this operation)' if late else ''}")
        self.send_response(200 if valid else 401)
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    server = http.server.HTTPServer(("127.0.0.1", CALLBACK_PORT), CallbackReceiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    callback_url = f"http://127.0.0.1:{CALLBACK_PORT}/callbacks"

    status, deposit = call("POST", "/api/v1/deposits", DEPOSIT_SECRET, {
        "amount": "100.00", "currency": "RUB", "paymentMethod": "card", "userId": "user-1",
        "merchantOperationId": f"order-{uuid.uuid4()}", "callbackUrl": callback_url,
        "successUrl": "https://shop.example/ok", "failUrl": "https://shop.example/fail",
    })
    print("deposit:", status, json.dumps(deposit))
    operation = deposit["data"]["operationId"]
    print("send the user to:", deposit["data"].get("redirectUrl"))

    status, payout = call("POST", "/api/v1/withdrawals", WITHDRAWAL_SECRET, {
        "amount": "50.00", "currency": "RUB", "paymentMethod": "sbp", "userId": "user-1",
        "merchantOperationId": f"payout-{uuid.uuid4()}", "callbackUrl": callback_url,
        "requisites": {"phone": "+79001234567", "accountName": "Ivan Ivanov", "bankName": "Bank A"},
    })
    print("payout:", status, json.dumps(payout))

    print("read deposit:", *call("GET", f"/api/v1/deposits/{operation}", DEPOSIT_SECRET))

    # A refund needs an approved deposit: here the sandbox approves it in the user's place.
    status, approved = sandbox_complete(operation)
    print("deposit approved in the sandbox:", status, json.dumps(approved))
    if status == 200 and approved["data"]["status"] == 1:
        status, refund = refund_deposit(operation, "30.00", f"refund-{uuid.uuid4()}")
        print("refund:", status, json.dumps(refund))
        if status == 200:
            print("read refund:", *read_refund(operation, refund["data"]["refundId"]))

    # Cancel what has not happened yet: a deposit nobody paid, a payout before it settles.
    status, unpaid = call("POST", "/api/v1/deposits", DEPOSIT_SECRET, {
        "amount": "20.00", "currency": "RUB", "paymentMethod": "card", "userId": "user-1",
        "merchantOperationId": f"order-{uuid.uuid4()}", "callbackUrl": callback_url,
    })
    print("cancel deposit:", *cancel_deposit(unpaid["data"]["operationId"]))
    status, second = call("POST", "/api/v1/withdrawals", WITHDRAWAL_SECRET, {
        "amount": "10.00", "currency": "RUB", "paymentMethod": "sbp", "userId": "user-1",
        "merchantOperationId": f"payout-{uuid.uuid4()}", "callbackUrl": callback_url,
        "requisites": {"phone": "+79001234567", "accountName": "Ivan Ivanov", "bankName": "Bank A"},
    })
    print("cancel payout:", *cancel_withdrawal(second["data"]["operationId"]))

    print("balance:", *call("GET", "/api/v1/balance", WITHDRAWAL_SECRET))
    print("waiting 5 s for the payout's and the refund's callbacks (the sandbox settles them after 2 s)...")
    time.sleep(5)
    print("read deposit:", *call("GET", f"/api/v1/deposits/{operation}", DEPOSIT_SECRET))
    server.shutdown()


def verify_lines():
    """`verify`: each stdin line a received callback, each answered by one line of the verdict."""
    if Webhook is None:
        sys.exit("verify needs the Standard Webhooks library: pip install standardwebhooks")
    for line in sys.stdin:
        if not line.strip():
            continue
        received = json.loads(line)
        headers = {name.lower(): value for name, value in received["headers"].items()}
        body = received["body"].encode()
        verdict = verify_standard(body, headers)
        try:
            sequence = json.loads(body)["data"].get("sequence")
        except (ValueError, KeyError, TypeError, AttributeError):
            sequence = None
        print(json.dumps({"verified": verdict == "valid", "webhookId": headers.get("webhook-id"),
                          "sequence": sequence, "error": None if verdict == "valid" else verdict}),
              flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["verify"]:
        verify_lines()
    else:
        main()
