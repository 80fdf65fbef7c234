"""Schemathesis hooks for `just fuzz-api` (scripts/fuzz-api.sh): signs every request, counts every exchange.

Loaded by schemathesis through SCHEMATHESIS_HOOKS=fuzz_api_hooks (with scripts/ on PYTHONPATH).

Signing (docs/api.md section 2). The signer is a `requests` auth object registered with
`schemathesis.auth.set_from_requests`. `requests` calls it on the *prepared* request, after the
body has been serialised and the URL (path and query) encoded, so it signs exactly the bytes that
go on the wire:

* with a generated `x-signature-version: 2` (version 2, required on the POSTs that name an
  operation): HMAC-SHA256 over "{x-timestamp}\n{METHOD}\n{target}\n{body}", with a fresh
  `x-timestamp`; any other drawn value of that header is left as drawn (and must be answered 401);
* otherwise (version 1), POST (and any other method with a body): HMAC-SHA256 over the raw body
  bytes; GET: over the request target, path plus `?query`, exactly as sent;
* key: the secret's text as UTF-8 bytes; `/api/v1/deposits...` use the deposit secret,
  `/api/v1/withdrawals...` and `/api/v1/balance` the withdrawal secret; every other path
  (healthz, readyz, metrics, /sandbox/...) is left unsigned.

It sets `merchant-id` and `x-signature`, replacing the values schemathesis generated for the
two security schemes, but only when the generated request carries both headers: a negative test
that deliberately leaves one out goes out unsigned, as generated, and must be answered 401.
Because it is a registered auth provider, schemathesis treats the credentials as explicit, and
the `ignored_auth` check re-sends requests without this auth to prove the server enforces it.

Counting. Every HTTP exchange schemathesis makes (generated cases, stateful steps and the probes
some checks send) passes through `requests.adapters.HTTPAdapter.send`, which is wrapped here to
append one JSON line per exchange to $FUZZ_EXCHANGES (method, path, status) and, for a 5xx or a
transport error (or every exchange with FUZZ_EXCHANGES_FULL=1), the full request and answer.
scripts/fuzz-api.sh sums that file.

Also, each explained where it is defined:
* `before_load_schema` adds OpenAPI links in memory (create -> read, find, /input, /confirm,
  sandbox /complete) for the stateful phase;
* `before_call` gives three in four schema-valid creations a fresh merchantOperationId and makes
  schema-valid payout card numbers pass the Luhn check (the two things random valid data cannot
  get right); negative requests are never touched;
* `filter_failure` drops only the bare 400 that actix's HTTP parser sends for a drawn,
  malformed Content-Length header, and records each drop in $FUZZ_FILTERED.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import os
import re
import threading
import time
from urllib.parse import urlsplit

import requests
import requests.adapters
import requests.auth

import schemathesis

MERCHANT_ID = os.environ.get("FUZZ_MERCHANT_ID", "demo")
# The demo merchant's fixed secrets (crates/app/src/demo.rs, README.md); public, for trying the API only.
DEPOSIT_SECRET = os.environ.get(
    "FUZZ_DEPOSIT_SECRET", "6465706f7369742d64656d6f2d7365637265742d6e6f742d666f722d70726f64"
)
WITHDRAWAL_SECRET = os.environ.get(
    "FUZZ_WITHDRAWAL_SECRET", "7769746864726177616c2d64656d6f2d7365637265742d6e6f742d666f722d70"
)


# The pattern docs/openapi.yaml gives `x-timestamp`.
_TIMESTAMP = re.compile(r"[0-9]{1,15}")


def secret_for(path: str) -> str | None:
    """The secret that signs a request to `path` (without its query), or None for unsigned paths."""
    if path == "/api/v1/deposits" or path.startswith("/api/v1/deposits/"):
        return DEPOSIT_SECRET
    if path == "/api/v1/withdrawals" or path.startswith("/api/v1/withdrawals/") or path == "/api/v1/balance":
        return WITHDRAWAL_SECRET
    return None


def body_bytes(request: requests.PreparedRequest) -> bytes:
    """The body as the bytes that will be sent, normalising `request.body` to exactly those bytes."""
    body = request.body
    if body is None:
        return b""
    if isinstance(body, str):
        # http.client would encode a str body as ISO-8859-1 (and fail on anything else); send UTF-8
        # bytes instead, and sign those.
        body = body.encode("utf-8")
    elif not isinstance(body, (bytes, bytearray)):
        # A file or an iterator (not produced for this API's JSON bodies, but be exact anyway).
        body = body.read() if hasattr(body, "read") else b"".join(
            part.encode("utf-8") if isinstance(part, str) else bytes(part) for part in body
        )
        request.headers.pop("Transfer-Encoding", None)
    body = bytes(body)
    request.body = body
    request.headers["Content-Length"] = str(len(body))
    return body


class GatewaySigner(requests.auth.AuthBase):
    """Adds `merchant-id` and `x-signature` to a prepared request (see the module docstring)."""

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        target = request.path_url  # path plus "?query", exactly as it goes on the request line
        secret = secret_for(urlsplit(target).path)
        if secret is None:
            return request
        # Schemathesis generates both security headers for every request it means to be
        # authenticated. A request that lacks one was stripped on purpose (a negative test of the
        # `required` headers): it must go out as generated, unsigned, and be answered 401.
        if "merchant-id" not in request.headers or "x-signature" not in request.headers:
            return request
        body = b"" if request.method == "GET" else body_bytes(request)
        # A drawn `x-timestamp` that fits its pattern is some moment long ago: replace it with
        # now, so signed requests reach the checks behind it. One that breaks the pattern is a
        # negative test of the header: it is kept as drawn (and signed as sent), and must be
        # answered 401.
        drawn = request.headers.get("x-timestamp")
        if drawn is None or _TIMESTAMP.fullmatch(drawn):
            stamp = str(int(time.time()))
            if drawn is not None or request.headers.get("x-signature-version") == "2":
                request.headers["x-timestamp"] = stamp
        else:
            stamp = drawn
        if request.headers.get("x-signature-version") == "2":
            # Version 2 binds the signature to the time, method and target.
            message = f"{stamp}\n{request.method}\n{target}\n".encode("utf-8") + body
        else:
            message = target.encode("utf-8") if request.method == "GET" else body
            if "x-timestamp" in request.headers:
                message = stamp.encode("utf-8", "surrogateescape") + b"." + message
        request.headers["merchant-id"] = MERCHANT_ID
        request.headers["x-signature"] = hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()
        return request


schemathesis.auth.set_from_requests(GatewaySigner())


# ---- reaching the operations behind a created one ------------------------------------------------

_OPERATION_ID = "$response.body#/data/operationId"
# OpenAPI links the stateful phase follows, added in memory (docs/openapi.yaml declares none):
# without them every /input, /confirm and sandbox /complete call names a random UUID and gets 404.
_LINKS = {
    ("/api/v1/deposits", "post"): {
        "ReadDeposit": ("getDeposit", {"path.operationId": _OPERATION_ID}),
        "FindDeposit": (
            "findDepositByMerchantOperationId",
            {"query.merchantOperationId": "$request.body#/merchantOperationId"},
        ),
        "SendInput": ("submitDepositInput", {"path.operationId": _OPERATION_ID}),
        # The sandbox's valid answers (docs/api.md section 10), which random bodies never hit.
        "SendSandboxInput": (
            "submitDepositInput",
            {"path.operationId": _OPERATION_ID},
            {"fields": {"payerName": "Ivan Ivanov", "bank": "bank_a"}},
        ),
        "SendCode": ("confirmDeposit", {"path.operationId": _OPERATION_ID}),
        "SendSandboxCode": ("confirmDeposit", {"path.operationId": _OPERATION_ID}, {"code": "123456"}),
        "CompleteDeposit": ("completeSandboxOperation", {"path.operationId": _OPERATION_ID}),
    },
    ("/api/v1/withdrawals", "post"): {
        "ReadWithdrawal": ("getWithdrawal", {"path.operationId": _OPERATION_ID}),
        "FindWithdrawal": (
            "findWithdrawalByMerchantOperationId",
            {"query.merchantOperationId": "$request.body#/merchantOperationId"},
        ),
        "CompleteWithdrawal": ("completeSandboxOperation", {"path.operationId": _OPERATION_ID}),
    },
    ("/api/v1/deposits/{operationId}/input", "post"): {
        "ReadAfterInput": ("getDeposit", {"path.operationId": _OPERATION_ID}),
    },
    ("/api/v1/deposits/{operationId}/confirm", "post"): {
        "ReadAfterCode": ("getDeposit", {"path.operationId": _OPERATION_ID}),
        "SendAnotherCode": ("confirmDeposit", {"path.operationId": _OPERATION_ID}),
    },
}


@schemathesis.hook
def before_load_schema(context, raw_schema):  # type: ignore[no-untyped-def]
    paths = raw_schema.get("paths", {})
    for (path, method), links in _LINKS.items():
        response = paths.get(path, {}).get(method, {}).get("responses", {}).get("200")
        if not isinstance(response, dict) or "$ref" in response:
            continue
        target = response.setdefault("links", {})
        for name, (operation_id, parameters, *body) in links.items():
            link = {"operationId": operation_id, "parameters": dict(parameters)}
            if body:
                # A literal body, sent as it is rather than merged into a generated one.
                link["requestBody"] = body[0]
                link["x-schemathesis"] = {"merge_body": False}
            target.setdefault(name, link)


# ---- what the schema cannot say -------------------------------------------------------------------


def _luhn_valid(digits: str) -> str:
    """`digits` with its last digit replaced so that the whole passes the Luhn check."""
    body = digits[:-1]
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:  # every second digit from the right, counting the check digit as the first
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return body + str((10 - total % 10) % 10)


_creations = itertools.count(1)
_RUN_TAG = str(os.getpid())  # the database is fresh for each run; this only avoids drawn look-alikes
_FRESH_SUFFIX = re.compile(rf"-{_RUN_TAG}\.[0-9]+$")


@schemathesis.hook
def before_call(context, case, kwargs):  # type: ignore[no-untyped-def]
    """Adjusts the bodies schemathesis means to be valid, on the two creation endpoints only.

    Negative (schema-violating) requests are sent exactly as drawn.
    """
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return
    body = case.body
    if case.method.upper() != "POST" or case.path not in ("/api/v1/deposits", "/api/v1/withdrawals"):
        return
    if not isinstance(body, dict):
        return
    # Drawn merchantOperationIds repeat all the time ("order-1" from the examples, "0", ...), so most
    # creations would be answered 409 DuplicateOperation before reaching routes, balance and
    # provider. Make three in four of them unique; the fourth keeps the drawn id, so replays and
    # 409s are still exercised.
    mid = body.get("merchantOperationId")
    if isinstance(mid, str):
        n = next(_creations)
        drawn = _FRESH_SUFFIX.sub("", mid)  # a body sent again is re-suffixed, not suffixed twice
        fresh = f"{drawn}-{_RUN_TAG}.{n}"
        if n % 4 and len(fresh) <= 128:
            body["merchantOperationId"] = fresh
    # A payout card number must pass the Luhn check (docs/api.md 3.2), which JSON Schema cannot
    # express: there a valid `pan` is any 13 to 19 digits. Fix the check digit, so valid payouts are
    # not refused with 400.
    requisites = body.get("requisites")
    if case.path == "/api/v1/withdrawals" and isinstance(requisites, dict):
        pan = requisites.get("pan")
        if isinstance(pan, str) and pan.isascii() and pan.isdigit() and 13 <= len(pan) <= 19:
            requisites["pan"] = _luhn_valid(pan)


# ---- counting -------------------------------------------------------------------------------------

_EXCHANGES = os.environ.get("FUZZ_EXCHANGES")
_FULL = os.environ.get("FUZZ_EXCHANGES_FULL") == "1"  # every exchange in full, not only the 5xx
_LOCK = threading.Lock()
_BODY_LIMIT = 4096


def _text(data: object) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        text = data
    else:
        try:
            text = bytes(data).decode("utf-8", "backslashreplace")
        except TypeError:
            text = repr(data)
    return text if len(text) <= _BODY_LIMIT else text[:_BODY_LIMIT] + f"... ({len(text)} chars)"


def _record(entry: dict) -> None:
    if not _EXCHANGES:
        return
    line = json.dumps(entry, ensure_ascii=False) + "\n"
    with _LOCK, open(_EXCHANGES, "a", encoding="utf-8") as out:
        out.write(line)


_original_send = requests.adapters.HTTPAdapter.send


def _counting_send(self, request, *args, **kwargs):  # type: ignore[no-untyped-def]
    started = time.monotonic()
    entry = {"method": request.method, "target": request.path_url}
    try:
        response = _original_send(self, request, *args, **kwargs)
    except Exception as exc:
        entry.update(
            status=None,
            error=f"{type(exc).__name__}: {exc}",
            requestHeaders=dict(request.headers),
            requestBody=_text(request.body),
        )
        _record(entry)
        raise
    entry["status"] = response.status_code
    entry["ms"] = round((time.monotonic() - started) * 1000, 1)
    if response.status_code >= 500 or _FULL:
        # The adapter streams: read the body now (it stays cached on the response for schemathesis).
        entry.update(
            url=request.url,
            requestHeaders=dict(request.headers),
            requestBody=_text(request.body),
            responseHeaders=dict(response.headers),
            responseBody=_text(response.content),
        )
    _record(entry)
    return response


requests.adapters.HTTPAdapter.send = _counting_send  # type: ignore[method-assign]


# ---- failures that are not the API's -------------------------------------------------------------

_FILTERED = os.environ.get("FUZZ_FILTERED")
_FRAMING_NOISE = "400 with no body from the HTTP parser, for a drawn Content-Length or Transfer-Encoding header"


def _framing_header_drawn(request: requests.PreparedRequest) -> bool:
    """Whether the request carries a Content-Length that is not its body's, or a Transfer-Encoding."""
    if "Transfer-Encoding" in request.headers:
        return True
    length = request.headers.get("Content-Length")
    if length is None:
        return False
    body = request.body or b""
    return length.strip() != str(len(body.encode("utf-8") if isinstance(body, str) else body))


@schemathesis.hook
def filter_failure(context, failure, case, response):  # type: ignore[no-untyped-def]
    """Drops failures about the HTTP framing of a request, not about the API.

    Negative tests draw arbitrary extra headers, now and then one named Content-Length (e.g.
    `Content-Length: TT c` on a GET). actix's HTTP/1 parser refuses such a message with a bare 400
    (no body, no x-request-id) before the gateway sees it, which schemathesis reports as an
    undocumented status. Only that exact shape is dropped, and each drop is recorded.
    """
    if (
        response.status_code == 400
        and not response.content
        and "x-request-id" not in response.headers
        and _framing_header_drawn(response.request)
    ):
        if _FILTERED:
            entry = {
                "reason": _FRAMING_NOISE,
                "failure": failure.title,
                "method": response.request.method,
                "target": response.request.path_url,
                "requestHeaders": dict(response.request.headers),
            }
            with _LOCK, open(_FILTERED, "a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")
        return False
    return True
