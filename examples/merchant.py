#!/usr/bin/env python3
"""A merchant's side of the gateway, with the Python standard library only.

It signs requests, creates a card deposit and an SBP payout, reads them back,
and runs a small callback receiver that verifies each callback's signature.

    python3 examples/merchant.py                     # against `gateway serve --demo`
    GATEWAY_URL=http://127.0.0.1:8080 MERCHANT_ID=... DEPOSIT_SECRET=... \
        WITHDRAWAL_SECRET=... python3 examples/merchant.py

For callbacks to reach the receiver on 127.0.0.1, start the gateway with
GATEWAY_CALLBACK_ALLOW_PRIVATE=true.
"""

import hashlib
import hmac
import http.server
import json
import os
import threading
import time
import urllib.error
import urllib.request
import uuid

GATEWAY = os.environ.get("GATEWAY_URL", "http://127.0.0.1:8080")
MERCHANT = os.environ.get("MERCHANT_ID", "demo")
DEPOSIT_SECRET = os.environ.get(
    "DEPOSIT_SECRET", "6465706f7369742d64656d6f2d7365637265742d6e6f742d666f722d70726f64")
WITHDRAWAL_SECRET = os.environ.get(
    "WITHDRAWAL_SECRET", "7769746864726177616c2d64656d6f2d7365637265742d6e6f742d666f722d70")
CALLBACK_PORT = int(os.environ.get("CALLBACK_PORT", "8099"))


def sign(secret: str, message: bytes) -> str:
    """x-signature: hex HMAC-SHA256 of the exact bytes sent (the body, or path+query for GET)."""
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def call(method: str, path: str, secret: str, body=None):
    data = json.dumps(body, separators=(",", ":")).encode() if body is not None else None
    headers = {"merchant-id": MERCHANT, "x-signature": sign(secret, data if data is not None else path.encode())}
    if data is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(GATEWAY + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


class CallbackReceiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        kind = json.loads(body)["data"]["type"]
        secret = DEPOSIT_SECRET if kind == "deposit" else WITHDRAWAL_SECRET
        valid = hmac.compare_digest(sign(secret, body), self.headers.get("x-signature", "").lower())
        data = json.loads(body)["data"]
        print(f"callback #{self.headers.get('x-callback-attempt')}: {data['type']} {data['operationId']} "
              f"status={data['status']} signature {'valid' if valid else 'INVALID'}")
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
    print("balance:", *call("GET", "/api/v1/balance", WITHDRAWAL_SECRET))
    print("waiting 5 s for the payout's callback (sandbox payouts settle after 2 s)...")
    time.sleep(5)
    server.shutdown()


if __name__ == "__main__":
    main()
