//! A cost-basis replay of a large synthetic history, for time and memory.
//!
//! `cargo bench -p server --bench basis` makes up `BASIS_LEGS` legs
//! (default 1,000,000) deterministically: transactions 30 s apart on 50
//! mints plus SOL, each a swap, a transfer in or out, or a rent deposit or
//! refund, with the network fee leg the wallet pays, prices on a random
//! walk and 1% of legs unpriced. For each method (`BASIS_METHODS`, default
//! `fifo,hifo`) it runs one child process of this same binary, which builds
//! the legs, maps them with `events_from_legs` and runs `replay` on one
//! thread, and reads its peak RSS (`VmHWM` from `/proc/self/status`) once
//! the inputs are built and again at the end, so the replay's own share
//! shows apart from the legs and events it is given.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::peak_rss_kib;

use std::{process::Command, time::Instant};

use rust_decimal::Decimal;
use serde_json::json;
use server::{
    basis::{LegInput, Method, events_from_legs, replay},
    ledger::model::{OperationType, SOL},
};

/// splitmix64: the same legs on every machine, no dependency on `rand`'s
/// stream stability.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

struct Mint {
    name: String,
    decimals: u8,
    /// USD per whole token, in micro-dollars.
    price_micros: i64,
}

fn base58ish(rng: &mut Rng, len: usize) -> String {
    const ALPHABET: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    (0..len)
        .map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize] as char)
        .collect()
}

fn synthetic_legs(count: usize) -> Vec<LegInput> {
    let mut rng = Rng(0x1ED6E5);
    let mut mints: Vec<Mint> = (0..50)
        .map(|i| Mint {
            name: base58ish(&mut rng, 44),
            decimals: [6, 9, 5, 8][i % 4],
            price_micros: 1_000 + rng.below(50_000_000) as i64,
        })
        .collect();
    mints.push(Mint {
        name: SOL.to_owned(),
        decimals: 9,
        price_micros: 150_000_000,
    });
    let sol = mints.len() - 1;
    let mut legs = Vec::with_capacity(count + 4);
    let mut time = 1_600_000_000i64;
    while legs.len() < count {
        time += 30;
        // Prices drift ±2% per transaction on the mint it touches.
        let signature = base58ish(&mut rng, 88);
        let mut index = 0u32;
        let mut push = |rng: &mut Rng, mints: &mut [Mint], op, m: usize, amount: i128| {
            let mint = &mut mints[m];
            let drift = 980 + rng.below(41) as i64;
            mint.price_micros = (mint.price_micros * drift / 1000).max(1);
            let units = Decimal::from_i128_with_scale(amount.abs(), u32::from(mint.decimals));
            let usd_value =
                (!rng.chance(1)).then(|| (units * Decimal::new(mint.price_micros, 6)).round_dp(6));
            legs.push(LegInput {
                signature: signature.clone(),
                index,
                block_time: time,
                operation_type: op,
                mint: mint.name.clone(),
                amount,
                decimals: mint.decimals,
                usd_value,
                position: None,
            });
            index += 1;
        };
        let token = rng.below(sol as u64) as usize;
        let tokens = |rng: &mut Rng, m: &Mint, scale: u64| -> i128 {
            let whole = 1 + rng.below(scale) as i128;
            whole * 10i128.pow(u32::from(m.decimals)) / 10
        };
        let fee = -(5_000 + rng.below(100_000) as i128);
        let roll = rng.below(100);
        if roll < 45 {
            push(&mut rng, &mut mints, OperationType::NetworkFee, sol, fee);
            // Buy more often than sell, so lots pile up for HIFO.
            let (give, get) = if rng.chance(60) {
                (sol, token)
            } else {
                (token, sol)
            };
            let out = -tokens(&mut rng, &mints[give], 50);
            let inn = tokens(&mut rng, &mints[get], 500);
            push(&mut rng, &mut mints, OperationType::Swap, give, out);
            push(&mut rng, &mut mints, OperationType::Swap, get, inn);
        } else if roll < 75 {
            let m = if rng.chance(30) { sol } else { token };
            let amount = tokens(&mut rng, &mints[m], 1_000);
            push(&mut rng, &mut mints, OperationType::TransferIn, m, amount);
        } else if roll < 92 {
            push(&mut rng, &mut mints, OperationType::NetworkFee, sol, fee);
            let m = if rng.chance(30) { sol } else { token };
            let amount = -tokens(&mut rng, &mints[m], 100);
            push(&mut rng, &mut mints, OperationType::TransferOut, m, amount);
        } else if roll < 96 {
            push(&mut rng, &mut mints, OperationType::NetworkFee, sol, fee);
            push(
                &mut rng,
                &mut mints,
                OperationType::RentDeposit,
                sol,
                -2_039_280,
            );
        } else {
            push(&mut rng, &mut mints, OperationType::NetworkFee, sol, fee);
            push(
                &mut rng,
                &mut mints,
                OperationType::RentRefund,
                sol,
                2_039_280,
            );
        }
    }
    legs.truncate(count);
    legs
}

/// Child: build, map and replay; print one JSON line.
fn run(method: Method, count: usize) {
    let legs = synthetic_legs(count);
    let started = Instant::now();
    let events = events_from_legs(&legs, true);
    let map_secs = started.elapsed().as_secs_f64();
    let inputs_kib = peak_rss_kib();
    let started = Instant::now();
    let result = replay(&events, method);
    let replay_secs = started.elapsed().as_secs_f64();
    let peak_kib = peak_rss_kib();
    let max_open = result
        .assets
        .iter()
        .map(|a| {
            result
                .open_lots
                .iter()
                .filter(|l| l.asset == a.asset)
                .count()
        })
        .max()
        .unwrap_or(0);
    println!(
        "{}",
        json!({
            "method": method.as_str(),
            "legs": legs.len(),
            "events": events.len(),
            "rows": result.disposals.len(),
            "open_lots": result.open_lots.len(),
            "max_open_lots_per_asset": max_open,
            "map_secs": map_secs,
            "replay_secs": replay_secs,
            "inputs_peak_rss_kib": inputs_kib,
            "peak_rss_kib": peak_kib,
            "gain": result.total.gain.round_dp(2).to_string(),
        })
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let count: usize = std::env::var("BASIS_LEGS")
        .ok()
        .and_then(|s| s.replace('_', "").parse().ok())
        .unwrap_or(1_000_000);
    if args.get(1).map(String::as_str) == Some("run") {
        return run(args[2].parse().unwrap(), count);
    }
    let methods: Vec<Method> = std::env::var("BASIS_METHODS")
        .unwrap_or_else(|_| "fifo,hifo".to_owned())
        .split(',')
        .map(|m| m.trim().parse().unwrap())
        .collect();
    let me = std::env::current_exe().unwrap();
    println!(
        "| method | legs | events | realized rows | open lots (largest asset) | legs to events (s) | replay (s) | events/s | peak RSS inputs (MiB) | peak RSS end (MiB) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for method in methods {
        let output = Command::new(&me)
            .args(["run", method.as_str()])
            .output()
            .unwrap();
        let r = support::child_report(&output);
        let replay_secs = r["replay_secs"].as_f64().unwrap();
        println!(
            "| {} | {} | {} | {} | {} ({}) | {:.2} | {:.2} | {:.0} | {:.0} | {:.0} |",
            r["method"].as_str().unwrap(),
            r["legs"],
            r["events"],
            r["rows"],
            r["open_lots"],
            r["max_open_lots_per_asset"],
            r["map_secs"].as_f64().unwrap(),
            replay_secs,
            r["events"].as_f64().unwrap() / replay_secs,
            r["inputs_peak_rss_kib"].as_f64().unwrap() / 1024.0,
            r["peak_rss_kib"].as_f64().unwrap() / 1024.0,
        );
    }
}
