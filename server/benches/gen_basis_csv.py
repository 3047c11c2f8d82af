#!/usr/bin/env python3
"""Deterministic `ledger basis` input for benchmarks (docs/benchmarks.md).

usage: server/benches/gen_basis_csv.py ROWS [usd_value|value] > FILE.csv

Rows 30 s apart from 2023-01-01 on 50 assets plus SOL over three wallets:
about 55% acquisitions, 40% disposals (a random share of what the wallet
holds, so nearly all covered), 4% moves between the wallets, 1% staking
deposits and withdrawals; prices on a random walk; 1% unpriced. The second
argument names the value columns (`usd_value`/`fee_usd` for the US,
`value`/`fee` for the others).
"""
import random
import sys
from datetime import datetime, timedelta, timezone

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
value_col = sys.argv[2] if len(sys.argv) > 2 else "usd_value"
fee_col = "fee_usd" if value_col == "usd_value" else "fee"
rng = random.Random(24)
assets = ["SOL"] + [f"MINT{i:02d}" for i in range(50)]
price = {a: 20.0 + 5 * i for i, a in enumerate(assets)}
wallets = ["a", "b", "c"]
held = {}
staked = {}
start = datetime(2023, 1, 1, tzinfo=timezone.utc)
out = sys.stdout
out.write(f"date,type,asset,quantity,{value_col},{fee_col},wallet,to_wallet\n")
for n in range(rows):
    t = (start + timedelta(seconds=30 * n)).strftime("%Y-%m-%dT%H:%M:%SZ")
    asset = assets[0] if rng.random() < 0.3 else rng.choice(assets)
    price[asset] = max(0.01, price[asset] * (1 + rng.gauss(0, 0.01)))
    w = rng.choice(wallets)
    h = held.get((w, asset), 0.0)
    r = rng.random()
    fee = f"{rng.random() * 0.01:.4f}"
    if r < 0.40 and h > 0.01:
        q = round(h * rng.uniform(0.05, 0.6), 6)
        kind, to = "dispose", ""
        held[(w, asset)] = h - q
    elif r < 0.44 and h > 0.01:
        q = round(h * rng.uniform(0.1, 0.9), 6)
        to = rng.choice([x for x in wallets if x != w])
        held[(w, asset)] = h - q
        held[(to, asset)] = held.get((to, asset), 0.0) + q
        out.write(f"{t},move,{asset},{q},,,{w},{to}\n")
        continue
    elif r < 0.45 and asset == "SOL":
        s = staked.get(w, 0.0)
        if s > 0.01:
            q, kind = round(s, 6), "stake_withdraw"
            staked[w] = 0.0
        elif h > 0.01:
            q, kind = round(h / 2, 6), "stake_deposit"
            staked[w] = q
        else:
            q, kind = round(rng.uniform(0.1, 5), 6), "acquire"
            held[(w, asset)] = h + q
        to = ""
    else:
        q = round(rng.uniform(0.1, 50), 6)
        kind, to = "acquire", ""
        held[(w, asset)] = h + q
    if q <= 0:
        q = 0.000001
    value = "" if rng.random() < 0.01 else f"{q * price[asset]:.2f}"
    if kind.startswith("stake"):
        fee = ""
    out.write(f"{t},{kind},{asset},{q},{value},{fee},{w},{to}\n")
