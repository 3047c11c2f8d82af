"""Schemathesis hooks for .ci/schemathesis.

Two rules of the API that JSON Schema cannot state, taught to the
generator so that valid data is valid (invalid data is generated as usual
and must still be refused):
  * `format: solana-pubkey`: base58 of exactly 32 bytes (the pattern beside
    it says only which characters and how many);
  * a time range: `from` not after `to`, and at most 20000 buckets of the
    granularity on value and price history (counted from Solana's genesis
    day, 2020-03-16, to which an earlier `from` or `to` is clamped);
  * a ledger cursor is a token the server signed for one wallet and one set
    of filters (any other is refused as invalid_params), so none is made up.
"""

from datetime import datetime, timedelta, timezone

import schemathesis
from hypothesis import strategies as st

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58(data: bytes) -> str:
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = ALPHABET[r] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


schemathesis.openapi.format("solana-pubkey", st.binary(min_size=32, max_size=32).map(b58))

MAX_BUCKETS = 20000
GENESIS = datetime(2020, 3, 16, tzinfo=timezone.utc)


def parse(text):
    if not isinstance(text, str):
        return None
    try:
        if len(text) == 10:
            return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc)
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


@schemathesis.hook
def filter_query(ctx, query):
    if not query:
        return True
    if "cursor" in query:
        return False
    start, end = parse(query.get("from")), parse(query.get("to"))
    path = ctx.operation.path if ctx.operation else ""
    series = path.endswith("/value-history") or path.endswith("/prices/history")
    if series:
        # A series' range defaults: to now, from 90 (value) or 30 days before.
        end = end or datetime.now(timezone.utc)
        default_days = 90 if path.endswith("/value-history") else 30
        try:
            start = start or end - timedelta(days=default_days)
        except OverflowError:
            return False
    if start and end and start > end:
        return False
    if series:
        start, end = max(start, GENESIS), max(end, GENESIS)
        bucket = 3600 if query.get("granularity") == "1h" else 86400
        if (end - start).total_seconds() / bucket > MAX_BUCKETS:
            return False
    return True
