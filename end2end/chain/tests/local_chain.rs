//! The `ledger` binary scans a real local chain. surfpool (offline, the
//! Agave 4.2.2 runtime with the token, Token-2022, associated-token-account,
//! memo and lookup-table programs) serves JSON-RPC; this test builds a
//! history for several wallets (SOL transfers in and out, a priority fee, a
//! memo, SPL Token and Token-2022 mints and transfers, associated token
//! account creation and close, a failed transaction, a version 0
//! transaction through an address lookup table, an unsolicited token),
//! starts `ledger` against it (`LEDGER_BIN`; `CHAIN_DATABASE_URL` to use
//! PostgreSQL), scans each wallet in both transaction encodings, and checks
//! every transaction conserves: per signature and per asset, the legs sum to
//! the wallet's balance change read straight from the chain. Its price
//! sources point at a tiny stand-in the test serves (Coinbase's and
//! Jupiter's response shapes, SOL at 150.25), so a scanned wallet also
//! answers get_positions, get_value_history and get_flows over MCP and REST.

use std::{
    collections::BTreeMap,
    io::{BufRead, BufReader, Read, Write},
    net::{Ipv4Addr, TcpListener, TcpStream},
    process::{Child, Command, Stdio},
    str::FromStr,
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use solana_commitment_config::{CommitmentConfig, CommitmentLevel};
use solana_instruction::{AccountMeta, Instruction};
use solana_keypair::Keypair;
use solana_message::{AddressLookupTableAccount, VersionedMessage, v0};
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;
use solana_rpc_client_api::{config::RpcSendTransactionConfig, request::RpcRequest};
use solana_signer::Signer;
use solana_transaction::{Transaction, versioned::VersionedTransaction};
use surfpool_core::surfnet::svm::SurfnetSvm;
use surfpool_types::{RpcConfig, SimnetConfig, SimnetEvent, SurfpoolConfig};

#[path = "local_chain/staking.rs"]
mod staking;

const SYSTEM: &str = "11111111111111111111111111111111";
const TOKEN: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const TOKEN_2022: &str = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
const ATA: &str = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
const MEMO: &str = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
const ALT: &str = "AddressLookupTab1e1111111111111111111111111";
const COMPUTE_BUDGET: &str = "ComputeBudget111111111111111111111111111111";

fn pk(s: &str) -> Pubkey {
    Pubkey::from_str(s).unwrap()
}

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Two distinct free loopback ports.
fn free_ports() -> (u16, u16) {
    let first = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let second = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    (
        first.local_addr().unwrap().port(),
        second.local_addr().unwrap().port(),
    )
}

/// surfpool on loopback, offline; its RPC URL. A start that fails (a port
/// taken between choosing and binding it) is tried again on new ports.
fn start_chain() -> String {
    for attempt in 1..=3 {
        let (rpc_port, ws_port) = free_ports();
        let config = SurfpoolConfig {
            simnets: vec![SimnetConfig {
                offline_mode: true,
                remote_rpc_url: None,
                ..SimnetConfig::default()
            }],
            rpc: RpcConfig {
                bind_host: "127.0.0.1".into(),
                bind_port: rpc_port,
                ws_port,
                ..RpcConfig::default()
            },
            ..SurfpoolConfig::default()
        };
        let (svm, events, geyser) = SurfnetSvm::default();
        let (tx, rx) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .unwrap();
            let outcome = runtime.block_on(surfpool_core::start_local_surfnet(
                svm, config, tx, rx, geyser,
            ));
            if let Err(e) = outcome {
                eprintln!("surfpool stopped: {e}");
            }
            runtime.shutdown_background();
        });
        let started = loop {
            match events.recv_timeout(Duration::from_secs(60)) {
                Ok(SimnetEvent::CoreStarted(_)) => break true,
                Ok(_) => continue,
                Err(_) => break false,
            }
        };
        if started {
            std::thread::spawn(move || for _ in events.iter() {});
            return format!("http://127.0.0.1:{rpc_port}");
        }
        eprintln!("surfpool did not start (attempt {attempt}); trying other ports");
    }
    panic!("surfpool did not start");
}

fn call(rpc: &RpcClient, req: RpcRequest, params: Value) -> Value {
    rpc.send::<Value>(req, params)
        .unwrap_or_else(|e| panic!("{req:?}: {e}"))
}

fn confirm(rpc: &RpcClient, sig: &str) -> Value {
    let started = Instant::now();
    loop {
        let v = call(rpc, RpcRequest::GetSignatureStatuses, json!([[sig]]));
        let s = &v["value"][0];
        if matches!(
            s["confirmationStatus"].as_str(),
            Some("confirmed" | "finalized")
        ) {
            return s["err"].clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "not confirmed: {sig}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn send(
    rpc: &RpcClient,
    ixs: &[Instruction],
    payer: &Keypair,
    extra: &[&Keypair],
    skip_preflight: bool,
) -> String {
    let mut signers: Vec<&Keypair> = vec![payer];
    signers.extend_from_slice(extra);
    let blockhash = rpc.get_latest_blockhash().unwrap();
    let tx = Transaction::new_signed_with_payer(ixs, Some(&payer.pubkey()), &signers, blockhash);
    let config = RpcSendTransactionConfig {
        skip_preflight,
        preflight_commitment: Some(CommitmentLevel::Confirmed),
        ..Default::default()
    };
    let sig = rpc
        .send_transaction_with_config(&tx, config)
        .unwrap()
        .to_string();
    confirm(rpc, &sig);
    sig
}

fn ata(owner: &Pubkey, mint: &Pubkey, program: &Pubkey) -> Pubkey {
    Pubkey::find_program_address(&[owner.as_ref(), program.as_ref(), mint.as_ref()], &pk(ATA)).0
}

fn create_ata(funder: &Pubkey, owner: &Pubkey, mint: &Pubkey, program: &Pubkey) -> Instruction {
    Instruction::new_with_bytes(
        pk(ATA),
        &[1],
        vec![
            AccountMeta::new(*funder, true),
            AccountMeta::new(ata(owner, mint, program), false),
            AccountMeta::new_readonly(*owner, false),
            AccountMeta::new_readonly(*mint, false),
            AccountMeta::new_readonly(pk(SYSTEM), false),
            AccountMeta::new_readonly(*program, false),
        ],
    )
}

/// A 6-decimal mint with `authority`; returns the mint key.
fn create_mint(rpc: &RpcClient, authority: &Keypair, program: &Pubkey) -> Pubkey {
    let mint = Keypair::new();
    let rent = rpc.get_minimum_balance_for_rent_exemption(82).unwrap();
    let create = solana_system_interface::instruction::create_account(
        &authority.pubkey(),
        &mint.pubkey(),
        rent,
        82,
        program,
    );
    let mut data = vec![20u8, 6];
    data.extend_from_slice(authority.pubkey().as_ref());
    data.push(0);
    let init = Instruction::new_with_bytes(
        *program,
        &data,
        vec![AccountMeta::new(mint.pubkey(), false)],
    );
    send(rpc, &[create, init], authority, &[&mint], false);
    mint.pubkey()
}

fn mint_to(
    program: &Pubkey,
    mint: &Pubkey,
    account: &Pubkey,
    authority: &Pubkey,
    amount: u64,
) -> Instruction {
    let mut data = vec![7u8];
    data.extend_from_slice(&amount.to_le_bytes());
    Instruction::new_with_bytes(
        *program,
        &data,
        vec![
            AccountMeta::new(*mint, false),
            AccountMeta::new(*account, false),
            AccountMeta::new_readonly(*authority, true),
        ],
    )
}

fn transfer_checked(
    program: &Pubkey,
    from: &Pubkey,
    mint: &Pubkey,
    to: &Pubkey,
    owner: &Pubkey,
    amount: u64,
) -> Instruction {
    let mut data = vec![12u8];
    data.extend_from_slice(&amount.to_le_bytes());
    data.push(6);
    Instruction::new_with_bytes(
        *program,
        &data,
        vec![
            AccountMeta::new(*from, false),
            AccountMeta::new_readonly(*mint, false),
            AccountMeta::new(*to, false),
            AccountMeta::new_readonly(*owner, true),
        ],
    )
}

fn close_account(
    program: &Pubkey,
    account: &Pubkey,
    destination: &Pubkey,
    owner: &Pubkey,
) -> Instruction {
    Instruction::new_with_bytes(
        *program,
        &[9],
        vec![
            AccountMeta::new(*account, false),
            AccountMeta::new(*destination, false),
            AccountMeta::new_readonly(*owner, true),
        ],
    )
}

fn memo(text: &str, signer: &Pubkey) -> Instruction {
    Instruction::new_with_bytes(
        pk(MEMO),
        text.as_bytes(),
        vec![AccountMeta::new_readonly(*signer, true)],
    )
}

fn priority_fee(micro_lamports: u64) -> Instruction {
    let mut data = vec![3u8];
    data.extend_from_slice(&micro_lamports.to_le_bytes());
    Instruction::new_with_bytes(pk(COMPUTE_BUDGET), &data, vec![])
}

/// What each wallet should show, for the checks after the scan.
struct History {
    alice: Keypair,
    bob: Keypair,
    carol: Keypair,
    failed: String,
    closed: String,
    versioned: String,
    priority: String,
}

fn build_history(rpc: &RpcClient) -> History {
    let (alice, bob, carol, dave) = (
        Keypair::new(),
        Keypair::new(),
        Keypair::new(),
        Keypair::new(),
    );
    for who in [&alice, &dave] {
        let sig = rpc
            .request_airdrop(&who.pubkey(), 10_000_000_000)
            .unwrap()
            .to_string();
        confirm(rpc, &sig);
    }
    // SOL out with a priority fee and a memo.
    let priority = send(
        rpc,
        &[
            priority_fee(50_000),
            solana_system_interface::instruction::transfer(
                &alice.pubkey(),
                &bob.pubkey(),
                500_000_000,
            ),
            memo("rent money", &alice.pubkey()),
        ],
        &alice,
        &[],
        false,
    );
    // A failed transaction: its fee is still paid.
    let failed = send(
        rpc,
        &[solana_system_interface::instruction::transfer(
            &alice.pubkey(),
            &bob.pubkey(),
            1_000_000_000_000,
        )],
        &alice,
        &[],
        true,
    );
    // SPL Token and Token-2022: mint, create both accounts (alice funds), mint, transfer with a memo.
    let mut closed = String::new();
    for program in [pk(TOKEN), pk(TOKEN_2022)] {
        let mint = create_mint(rpc, &alice, &program);
        let (a, b) = (
            ata(&alice.pubkey(), &mint, &program),
            ata(&bob.pubkey(), &mint, &program),
        );
        send(
            rpc,
            &[
                create_ata(&alice.pubkey(), &alice.pubkey(), &mint, &program),
                create_ata(&alice.pubkey(), &bob.pubkey(), &mint, &program),
                mint_to(&program, &mint, &a, &alice.pubkey(), 1_000_000),
            ],
            &alice,
            &[],
            false,
        );
        send(
            rpc,
            &[
                transfer_checked(&program, &a, &mint, &b, &alice.pubkey(), 250_000),
                memo("invoice 7", &alice.pubkey()),
            ],
            &alice,
            &[],
            false,
        );
        if program == pk(TOKEN) {
            // Empty alice's account and close it: the rent comes back.
            closed = send(
                rpc,
                &[
                    transfer_checked(&program, &a, &mint, &b, &alice.pubkey(), 750_000),
                    close_account(&program, &a, &alice.pubkey(), &alice.pubkey()),
                ],
                &alice,
                &[],
                false,
            );
        }
    }
    // A version 0 transaction through an address lookup table.
    let slot = rpc
        .get_slot_with_commitment(CommitmentConfig::finalized())
        .unwrap();
    let (table, bump) =
        Pubkey::find_program_address(&[alice.pubkey().as_ref(), &slot.to_le_bytes()], &pk(ALT));
    let mut create = 0u32.to_le_bytes().to_vec();
    create.extend_from_slice(&slot.to_le_bytes());
    create.push(bump);
    let targets: Vec<Pubkey> = vec![bob.pubkey(), Pubkey::new_unique(), Pubkey::new_unique()];
    let mut extend = 2u32.to_le_bytes().to_vec();
    extend.extend_from_slice(&(targets.len() as u64).to_le_bytes());
    for t in &targets {
        extend.extend_from_slice(t.as_ref());
    }
    let table_accounts = |data: Vec<u8>| {
        Instruction::new_with_bytes(
            pk(ALT),
            &data,
            vec![
                AccountMeta::new(table, false),
                AccountMeta::new_readonly(alice.pubkey(), true),
                AccountMeta::new(alice.pubkey(), true),
                AccountMeta::new_readonly(pk(SYSTEM), false),
            ],
        )
    };
    send(
        rpc,
        &[table_accounts(create), table_accounts(extend)],
        &alice,
        &[],
        false,
    );
    std::thread::sleep(Duration::from_millis(1000));
    let ixs: Vec<Instruction> = targets
        .iter()
        .map(|t| solana_system_interface::instruction::transfer(&alice.pubkey(), t, 1_000_000))
        .collect();
    let blockhash = rpc.get_latest_blockhash().unwrap();
    let message = v0::Message::try_compile(
        &alice.pubkey(),
        &ixs,
        &[AddressLookupTableAccount {
            key: table,
            addresses: targets.clone(),
        }],
        blockhash,
    )
    .unwrap();
    let vtx = VersionedTransaction::try_new(VersionedMessage::V0(message), &[&alice]).unwrap();
    let versioned = rpc.send_transaction(&vtx).unwrap().to_string();
    assert_eq!(
        confirm(rpc, &versioned),
        Value::Null,
        "the v0 transaction succeeded"
    );
    // An unsolicited token: dave mints a token nobody asked for into carol's account.
    let program = pk(TOKEN);
    let junk = create_mint(rpc, &dave, &program);
    send(
        rpc,
        &[
            create_ata(&dave.pubkey(), &carol.pubkey(), &junk, &program),
            mint_to(
                &program,
                &junk,
                &ata(&carol.pubkey(), &junk, &program),
                &dave.pubkey(),
                42_000_000,
            ),
        ],
        &dave,
        &[],
        false,
    );
    // Enough traffic for bob to need several signature pages of 5.
    for i in 0..8u64 {
        send(
            rpc,
            &[solana_system_interface::instruction::transfer(
                &alice.pubkey(),
                &bob.pubkey(),
                1_000 + i,
            )],
            &alice,
            &[],
            false,
        );
    }
    History {
        alice,
        bob,
        carol,
        failed,
        closed,
        versioned,
        priority,
    }
}

/// The wallet's change per asset in one transaction, read from the chain.
fn chain_changes(tx: &Value, wallet: &str) -> BTreeMap<String, i128> {
    let mut keys: Vec<String> = tx["transaction"]["message"]["accountKeys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_owned())
        .collect();
    for table in ["writable", "readonly"] {
        if let Some(list) = tx["meta"]["loadedAddresses"][table].as_array() {
            keys.extend(list.iter().map(|k| k.as_str().unwrap().to_owned()));
        }
    }
    let mut out = BTreeMap::new();
    if let Some(i) = keys.iter().position(|k| k == wallet) {
        let delta = tx["meta"]["postBalances"][i].as_i64().unwrap() as i128
            - tx["meta"]["preBalances"][i].as_i64().unwrap() as i128;
        out.insert("sol".to_owned(), delta);
    }
    for (side, sign) in [("postTokenBalances", 1i128), ("preTokenBalances", -1i128)] {
        for b in tx["meta"][side].as_array().into_iter().flatten() {
            if b["owner"] == wallet {
                let amount: i128 = b["uiTokenAmount"]["amount"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                *out.entry(b["mint"].as_str().unwrap().to_owned())
                    .or_insert(0) += sign * amount;
            }
        }
    }
    out.retain(|_, v| *v != 0);
    out
}

/// Every signature touching the wallet or one of its token accounts.
fn all_signatures(rpc: &RpcClient, wallet: &str) -> Vec<String> {
    let mut addresses = vec![wallet.to_owned()];
    for program in [TOKEN, TOKEN_2022] {
        let accounts = call(
            rpc,
            RpcRequest::GetTokenAccountsByOwner,
            json!([wallet, {"programId": program}, {"encoding": "base64"}]),
        );
        addresses.extend(
            accounts["value"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["pubkey"].as_str().unwrap().to_owned()),
        );
    }
    let mut out: Vec<String> = Vec::new();
    for address in addresses {
        let page = call(
            rpc,
            RpcRequest::GetSignaturesForAddress,
            json!([address, {"limit": 1000, "commitment": "confirmed"}]),
        );
        for e in page.as_array().unwrap() {
            let sig = e["signature"].as_str().unwrap().to_owned();
            if !out.contains(&sig) {
                out.push(sig);
            }
        }
    }
    out
}

/// SOL's price everywhere in the stand-in: spot, and every candle's close,
/// so a value does not depend on which side of an hour a read falls.
const SOL_USD: &str = "150.25";

/// Unix seconds of an ISO 8601 `YYYY-MM-DDTHH:MM:SS…` (UTC).
fn unix(iso: &str) -> i64 {
    let n = |r: std::ops::Range<usize>| iso[r].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    let (hh, mm, ss) = (n(11..13), n(14..16), n(17..19));
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) * 86_400 + hh * 3600 + mm * 60 + ss
}

/// A stand-in for Coinbase (retail spot; Exchange candles and stats) and
/// Jupiter's Price API v3 on one loopback port, in their real shapes.
fn start_prices() -> String {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve_price(stream));
        }
    });
    url
}

fn serve_price(mut stream: TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request = String::new();
    let _ = reader.read_line(&mut request);
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
    }
    let target = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .unwrap_or("")
            .to_owned()
    };
    let (status, body) = match path {
        "/v2/prices/SOL-USD/spot" => (
            "200 OK",
            format!(r#"{{"data":{{"amount":"{SOL_USD}","base":"SOL","currency":"USD"}}}}"#),
        ),
        "/products/SOL-USD/stats" => (
            "200 OK",
            format!(
                r#"{{"open":"148.00","high":"151.00","low":"147.50","last":"{SOL_USD}","volume":"1000.5","volume_30day":"30000.1"}}"#
            ),
        ),
        "/products/SOL-USD/candles" => {
            let step: i64 = param("granularity").parse().unwrap_or(3600);
            let (start, end) = (unix(&param("start")), unix(&param("end")));
            let mut rows = Vec::new();
            let mut t = start - start.rem_euclid(step);
            while t <= end {
                rows.push(format!("[{t},149.5,151,150,{SOL_USD},10.5]"));
                t += step;
            }
            rows.reverse();
            ("200 OK", format!("[{}]", rows.join(",")))
        }
        "/price/v3" => ("200 OK", "{}".to_owned()),
        _ => ("404 Not Found", r#"{"message":"NotFound"}"#.to_owned()),
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

struct Ledger {
    child: Child,
    port: u16,
}

impl Ledger {
    fn start(rpc_url: &str, database_url: &str, encoding: &str, prices_url: &str) -> Self {
        Self::start_with(rpc_url, database_url, encoding, prices_url, &[])
    }

    fn start_with(
        rpc_url: &str,
        database_url: &str,
        encoding: &str,
        prices_url: &str,
        env: &[(&str, String)],
    ) -> Self {
        let bin = std::env::var("LEDGER_BIN").unwrap_or_else(|_| {
            format!("{}/../../target/debug/ledger", env!("CARGO_MANIFEST_DIR"))
        });
        let port = free_port();
        let child = Command::new(&bin)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .env("LEDGER_LISTEN", format!("127.0.0.1:{port}"))
            .env("DATABASE_URL", database_url)
            .env("SOLANA_RPC_URL", rpc_url)
            .env("SOLANA_TX_ENCODING", encoding)
            .env("LEDGER_SOLANA__SIGNATURES_PAGE_SIZE", "5")
            .env("LEDGER_SOLANA__BATCH_SIZE", "3")
            .env("LEDGER_WORKER__POLL_MS", "50")
            .env("LEDGER_RATE_LIMIT__ANON_RPS", "1000")
            .env("LEDGER_RATE_LIMIT__ANON_BURST", "1000")
            .env("LEDGER_PRICES__COINBASE_URL", prices_url)
            .env("LEDGER_PRICES__COINBASE_EXCHANGE_URL", prices_url)
            .env("LEDGER_PRICES__JUPITER_URL", prices_url)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("start {bin}: {e} (build it with cargo build -p server, or set LEDGER_BIN)")
            });
        let ledger = Self { child, port };
        let started = Instant::now();
        while ledger.http("GET", "/healthz", None).0 != 200 {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "ledger did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        ledger
    }

    fn http(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let (status, _, json) = self.http_with(method, path, body, "");
        (status, json)
    }

    /// An HTTP request with `headers` (each line ending in CRLF); the
    /// status, the response headers and the JSON body.
    fn http_with(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        headers: &str,
    ) -> (u16, String, Value) {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return (0, String::new(), Value::Null);
        };
        let body = body.map(Value::to_string).unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response
            .get(9..12)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let (head, json) = response
            .split_once("\r\n\r\n")
            .map(|(h, b)| (h.to_owned(), serde_json::from_str(b).unwrap_or(Value::Null)))
            .unwrap_or_default();
        (status, head, json)
    }

    /// `tools/call` over MCP (stateless, no session); the tool result.
    fn tool(&self, name: &str, arguments: Value) -> Value {
        let (status, body) = self.http(
            "POST",
            "/mcp",
            Some(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": name, "arguments": arguments}})),
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["isError"], false, "{name}: {body}");
        body["result"]["structuredContent"].clone()
    }

    /// Quote, scan and wait over MCP; then the whole ledger, page by page.
    fn scan_over_mcp(&self, wallet: &str) -> Vec<Value> {
        let quote = self.tool("quote_wallet", json!({"address": wallet}));
        let job = self.tool("scan_wallet", json!({"quote_id": quote["quote_id"]}));
        let started = Instant::now();
        loop {
            let job = self.tool("get_job", json!({"job_id": job["job_id"]}));
            if job["status"] != "running" {
                assert_eq!(job["status"], "completed", "{job}");
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "scan did not end: {job}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut entries = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut args = json!({"address": wallet, "limit": 4, "include_counterparties": true});
            if let Some(c) = &cursor {
                args["cursor"] = json!(c);
            }
            let page = self.tool("get_ledger", args);
            entries.extend(page["entries"].as_array().unwrap().clone());
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => break entries,
            }
        }
    }

    /// Quote `scope`, scan over REST and wait; the finished job.
    fn scan_job(&self, wallet: &str, scope: &str) -> Value {
        let (status, quote) = self.http(
            "POST",
            "/v1/quotes",
            Some(&json!({"address": wallet, "scope": scope})),
        );
        assert_eq!(status, 200, "{quote}");
        let (status, job) = self.http(
            "POST",
            "/v1/scans",
            Some(&json!({"quote_id": quote["quote_id"]})),
        );
        assert_eq!(status, 202, "{job}");
        let path = format!("/v1/jobs/{}", job["job_id"].as_str().unwrap());
        let started = Instant::now();
        loop {
            let (_, job) = self.http("GET", &path, None);
            if job["status"] != "running" {
                assert_eq!(job["status"], "completed", "{job}");
                return job;
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "scan did not end: {job}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Quote, scan and wait over REST; then the whole ledger of `wallet`.
    fn scan(&self, wallet: &str) -> Vec<Value> {
        let (status, quote) = self.http("POST", "/v1/quotes", Some(&json!({"address": wallet})));
        assert_eq!(status, 200, "{quote}");
        let (status, job) = self.http(
            "POST",
            "/v1/scans",
            Some(&json!({"quote_id": quote["quote_id"]})),
        );
        assert_eq!(status, 202, "{job}");
        let path = format!("/v1/jobs/{}", job["job_id"].as_str().unwrap());
        let started = Instant::now();
        let job = loop {
            let (_, job) = self.http("GET", &path, None);
            if job["status"] != "running" {
                break job;
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "scan did not end: {job}"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        assert_eq!(job["status"], "completed", "{job}");
        let (status, page) = self.http(
            "GET",
            &format!("/v1/wallets/{wallet}/ledger?limit=1000&include_counterparties=true"),
            None,
        );
        assert_eq!(status, 200, "{page}");
        assert!(page["next_cursor"].is_null());
        page["entries"].as_array().unwrap().clone()
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn by_signature(entries: &[Value]) -> BTreeMap<String, Vec<Value>> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for e in entries {
        out.entry(e["signature"].as_str().unwrap().to_owned())
            .or_default()
            .push(e.clone());
    }
    out
}

fn ops(entries: &[Value]) -> Vec<&str> {
    entries
        .iter()
        .map(|e| e["operation_type"].as_str().unwrap())
        .collect()
}

/// A scanned wallet answers positions, value history and flows over MCP
/// and REST alike, with SOL priced by the stand-in.
fn analytics_answer(ledger: &Ledger, history: &History) {
    let alice = history.alice.pubkey().to_string();
    let bob = history.bob.pubkey().to_string();

    let (_, page) = ledger.http(
        "GET",
        &format!("/v1/wallets/{alice}/ledger?limit=1000"),
        None,
    );
    let sol_legs: Vec<&Value> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["mint"] == "sol")
        .collect();
    assert!(!sol_legs.is_empty());
    assert!(sol_legs.iter().all(|e| e["priced"] == true), "{sol_legs:?}");

    let (status, positions) = ledger.http("GET", &format!("/v1/wallets/{alice}/positions"), None);
    assert_eq!(status, 200, "{positions}");
    assert_eq!(positions["method"], "fifo");
    assert!(
        positions["positions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["mint"] == "sol")
    );
    assert_eq!(
        ledger.tool("get_positions", json!({"address": alice})),
        positions
    );
    let lifo = ledger.tool("get_positions", json!({"address": alice, "method": "lifo"}));
    assert_eq!(lifo["method"], "lifo");

    let (status, values) = ledger.http(
        "GET",
        &format!("/v1/wallets/{alice}/value-history?granularity=1h"),
        None,
    );
    assert_eq!(status, 200, "{values}");
    let points = values["points"].as_array().unwrap();
    let last = points.last().unwrap();
    assert_eq!(last["estimated"], true, "the open hour is valued at spot");
    assert!(
        last["usd"].as_str().unwrap().parse::<f64>().unwrap() > 0.0,
        "{last}"
    );
    assert!(
        last["holdings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["mint"] == "sol")
    );
    let over_mcp = ledger.tool(
        "get_value_history",
        json!({"address": alice, "granularity": "1h"}),
    );
    assert_eq!(over_mcp["points"].as_array().unwrap().len(), points.len());
    assert_eq!(over_mcp["unpriced_mints"], values["unpriced_mints"]);

    let (status, flows) = ledger.http("GET", &format!("/v1/wallets/{alice}/flows"), None);
    assert_eq!(status, 200, "{flows}");
    assert_eq!(flows["nodes"][0]["id"], alice.as_str());
    let to_bob: Vec<&Value> = flows["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["source"] == alice.as_str() && e["target"] == bob.as_str())
        .collect();
    assert!(!to_bob.is_empty(), "{flows}");
    assert!(
        to_bob
            .iter()
            .any(|e| e["mint"] == "sol" && !e["usd"].is_null())
    );
    assert_eq!(ledger.tool("get_flows", json!({"address": alice})), flows);
}

#[test]
fn ledger_scans_a_real_local_chain_and_every_transaction_conserves() {
    let rpc_url = start_chain();
    let rpc = RpcClient::new_with_commitment(rpc_url.clone(), CommitmentConfig::confirmed());
    let history = build_history(&rpc);
    let wallets = [
        history.alice.pubkey().to_string(),
        history.bob.pubkey().to_string(),
        history.carol.pubkey().to_string(),
    ];

    let prices_url = start_prices();
    let dir = std::env::temp_dir().join(format!("ledger-chain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut ledgers_by_encoding = Vec::new();
    let mut running = Vec::new();
    for encoding in ["json", "jsonParsed"] {
        let database_url = match std::env::var("CHAIN_DATABASE_URL") {
            Ok(url) if encoding == "json" => url,
            _ => format!("sqlite://{}/{encoding}.db", dir.display()),
        };
        let ledger = Ledger::start(&rpc_url, &database_url, encoding, &prices_url);
        let mut ledgers = Vec::new();
        for wallet in &wallets {
            // The agent's two ways in: REST for one encoding, MCP for the other.
            let entries = if encoding == "json" {
                ledger.scan(wallet)
            } else {
                ledger.scan_over_mcp(wallet)
            };
            let grouped = by_signature(&entries);
            let signatures = all_signatures(&rpc, wallet);
            assert!(!signatures.is_empty());
            for sig in grouped.keys() {
                assert!(
                    signatures.contains(sig),
                    "{sig} in the ledger of {wallet} but not its history"
                );
            }
            // Every transaction of the wallet's history conserves.
            for sig in &signatures {
                let tx = call(
                    &rpc,
                    RpcRequest::GetTransaction,
                    json!([sig, {"encoding": "json", "commitment": "confirmed", "maxSupportedTransactionVersion": 0}]),
                );
                let expected = chain_changes(&tx, wallet);
                let mut sums: BTreeMap<String, i128> = BTreeMap::new();
                for leg in grouped.get(sig).into_iter().flatten() {
                    *sums
                        .entry(leg["mint"].as_str().unwrap().to_owned())
                        .or_insert(0) += leg["amount"].as_str().unwrap().parse::<i128>().unwrap();
                }
                sums.retain(|_, v| *v != 0);
                assert_eq!(sums, expected, "{encoding}: {sig} for {wallet}");
            }
            ledgers.push(entries);
        }
        ledgers_by_encoding.push(ledgers);
        running.push(ledger);
    }
    // Both encodings give the same ledgers.
    assert_eq!(ledgers_by_encoding[0], ledgers_by_encoding[1]);
    {
        let ledger = &running[0];
        let ledgers = &ledgers_by_encoding[0];
        // An incremental scan fetches only what is new.
        let bob = history.bob.pubkey().to_string();
        for i in 0..2u64 {
            send(
                &rpc,
                &[solana_system_interface::instruction::transfer(
                    &history.alice.pubkey(),
                    &history.bob.pubkey(),
                    7_000 + i,
                )],
                &history.alice,
                &[],
                false,
            );
        }
        let job = ledger.scan_job(&bob, "incremental");
        assert_eq!(job["scope"], "incremental");
        assert_eq!(job["progress"]["transactions_fetched"], 2, "{job}");
        let (_, page) = ledger.http("GET", &format!("/v1/wallets/{bob}/ledger?limit=1000"), None);
        let entries = page["entries"].as_array().unwrap();
        assert_eq!(entries.len(), ledgers[1].len() + 2);
        assert_eq!(entries[0]["amount"], "7001");
        // A refresh re-lists everything and fetches nothing it holds.
        let job = ledger.scan_job(&bob, "refresh");
        assert_eq!(job["progress"]["transactions_fetched"], 0, "{job}");
        analytics_answer(ledger, &history);
    }

    let ledgers = &ledgers_by_encoding[0];
    let (alice, bob, carol) = (by_signature(&ledgers[0]), &ledgers[1], &ledgers[2]);
    assert_eq!(
        ops(&alice[&history.failed]),
        ["network_fee"],
        "a failed transaction costs only its fee"
    );
    let priority = &alice[&history.priority];
    assert_eq!(ops(priority), ["network_fee", "transfer_out"]);
    assert!(
        priority[0]["amount"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .unwrap()
            < -5000,
        "the priority fee is in the fee leg"
    );
    assert_eq!(
        priority[1]["counterparties"][0]["address"],
        history.bob.pubkey().to_string()
    );
    assert!(ops(&alice[&history.closed]).contains(&"rent_refund"));
    assert!(ops(&ledgers[0]).contains(&"rent_deposit"));
    let v0 = &alice[&history.versioned];
    assert_eq!(
        v0.iter()
            .filter(|l| l["operation_type"] == "transfer_out")
            .map(|l| l["amount"].as_str().unwrap().parse::<i64>().unwrap())
            .sum::<i64>(),
        -3_000_000
    );
    // Bob received SOL and both tokens (SPL Token and Token-2022).
    let bob_mints: std::collections::BTreeSet<&str> = bob
        .iter()
        .filter(|l| l["operation_type"] == "transfer_in")
        .map(|l| l["mint"].as_str().unwrap())
        .collect();
    assert_eq!(bob_mints.len(), 3, "sol and two tokens: {bob_mints:?}");
    // Carol never signed anything: the junk token is an airdrop.
    assert_eq!(ops(carol), ["airdrop"]);
    assert_eq!(carol[0]["amount"], "42000000");
    let _ = std::fs::remove_dir_all(dir);
}

/// Run the `x402pay` binary (`X402PAY_BIN`, else next to `LEDGER_BIN`).
fn x402pay(args: &[&str]) -> (i32, String) {
    let bin = std::env::var("X402PAY_BIN").unwrap_or_else(|_| {
        let ledger = std::env::var("LEDGER_BIN").unwrap_or_else(|_| {
            format!("{}/../../target/debug/ledger", env!("CARGO_MANIFEST_DIR"))
        });
        std::path::Path::new(&ledger)
            .with_file_name("x402pay")
            .display()
            .to_string()
    });
    let out = Command::new(&bin)
        .args(args)
        .env_remove("X402PAY_KEYFILE")
        .env_remove("X402PAY_BEARER")
        .env_remove("X402PAY_RPC_URL")
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("start {bin}: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn token_balance(rpc: &RpcClient, account: &Pubkey) -> u64 {
    let v = call(
        rpc,
        RpcRequest::GetTokenAccountBalance,
        json!([account.to_string(), {"commitment": "confirmed"}]),
    );
    v["value"]["amount"].as_str().unwrap().parse().unwrap()
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The seed's full exchange on a real chain, three ways: MCP (pay a scan,
/// then read with its receipt), REST (HTTP 402, an `X-PAYMENT` header, the
/// same payment replayed) and `x402pay mcp-call` (pay, then reuse the
/// receipt). Every payment moves USDC exactly once: the treasury's balance
/// is checked after each step, replays included.
#[test]
fn x402_payments_settle_on_a_real_local_chain_exactly_once() {
    let rpc_url = start_chain();
    let rpc = RpcClient::new_with_commitment(rpc_url.clone(), CommitmentConfig::confirmed());
    let token = pk(TOKEN);
    let (issuer, fee_payer, payer) = (Keypair::new(), Keypair::new(), Keypair::new());
    let treasury = Pubkey::new_unique();
    for who in [&issuer, &fee_payer] {
        let sig = rpc
            .request_airdrop(&who.pubkey(), 10_000_000_000)
            .unwrap()
            .to_string();
        confirm(&rpc, &sig);
    }
    // A USDC stand-in (6 decimals), the treasury's account and a funded payer.
    let usdc = create_mint(&rpc, &issuer, &token);
    let (payer_usdc, treasury_usdc) = (
        ata(&payer.pubkey(), &usdc, &token),
        ata(&treasury, &usdc, &token),
    );
    send(
        &rpc,
        &[
            create_ata(&issuer.pubkey(), &payer.pubkey(), &usdc, &token),
            create_ata(&issuer.pubkey(), &treasury, &usdc, &token),
            mint_to(&token, &usdc, &payer_usdc, &issuer.pubkey(), 10_000_000),
        ],
        &issuer,
        &[],
        false,
    );
    let dir = std::env::temp_dir().join(format!("ledger-pay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let keyfile = |name: &str, k: &Keypair| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            serde_json::to_string(&k.to_bytes().to_vec()).unwrap(),
        )
        .unwrap();
        path.to_str().unwrap().to_owned()
    };
    let (fee_payer_file, payer_file) = (
        keyfile("fee-payer.json", &fee_payer),
        keyfile("payer.json", &payer),
    );
    let genesis = call(&rpc, RpcRequest::GetGenesisHash, json!([]));
    let network = format!("solana:{}", &genesis.as_str().unwrap()[..32]);
    let database_url = std::env::var("CHAIN_DATABASE_URL")
        .unwrap_or_else(|_| format!("sqlite://{}/pay.db", dir.display()));
    // Prices are not this test's concern: a closed port answers at once.
    let no_prices = "http://127.0.0.1:9";
    let ledger = Ledger::start_with(
        &rpc_url,
        &database_url,
        "json",
        no_prices,
        &[
            ("LEDGER_PAYMENTS", "x402".to_owned()),
            ("LEDGER_X402__NETWORK", network.clone()),
            ("LEDGER_X402__ASSET", usdc.to_string()),
            ("LEDGER_X402__TREASURY", treasury.to_string()),
            ("LEDGER_X402__FEE_PAYER_KEYFILE", fee_payer_file),
        ],
    );
    let wallet = payer.pubkey().to_string();
    let mcp = |args: Value| {
        let (status, _, body) = ledger.http_with(
            "POST",
            "/mcp",
            Some(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": args})),
            "",
        );
        assert_eq!(status, 200, "{body}");
        body["result"].clone()
    };
    let pay = |challenge: &Value| {
        let (code, out) = x402pay(&[
            "mcp-payment",
            "-keyfile",
            &payer_file,
            "-challenge",
            &challenge.to_string(),
            "-rpc",
            &rpc_url,
        ]);
        assert_eq!(code, 0, "{out}");
        out.trim().to_owned()
    };

    // 1. MCP: quote, the scan's challenge, pay it, the scan runs.
    let quote = mcp(json!({"name": "quote_wallet", "arguments": {"address": wallet}}));
    let quote_id = quote["structuredContent"]["quote_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let price: u64 = quote["structuredContent"]["amount_atomic"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let challenge = mcp(json!({"name": "scan_wallet", "arguments": {"quote_id": quote_id}}));
    assert_eq!(challenge["isError"], true, "{challenge}");
    let x402 = &challenge["structuredContent"]["x402"];
    assert_eq!(x402["accepts"][0]["network"], network.as_str());
    assert_eq!(x402["accepts"][0]["amount"], price.to_string());
    let payment = pay(x402);
    let started = mcp(
        json!({"name": "scan_wallet", "arguments": {"quote_id": quote_id, "payment": payment}}),
    );
    assert_eq!(started["isError"], false, "{started}");
    let block = &started["structuredContent"]["payment"];
    assert_eq!(block["settled"], true);
    assert_eq!(block["payer"], wallet.as_str());
    let receipt = block["receipt"].as_str().unwrap().to_owned();
    let settlement = call(
        &rpc,
        RpcRequest::GetTransaction,
        json!([block["transaction"], {"encoding": "json", "commitment": "confirmed", "maxSupportedTransactionVersion": 0}]),
    );
    assert!(settlement["meta"]["err"].is_null(), "{settlement}");
    assert_eq!(
        settlement["transaction"]["message"]["accountKeys"][0],
        fee_payer.pubkey().to_string(),
        "our fee payer paid the fee"
    );
    assert_eq!(token_balance(&rpc, &treasury_usdc), price);
    let job_id = started["structuredContent"]["job_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let started_at = Instant::now();
    loop {
        let job =
            mcp(json!({"name": "get_job", "arguments": {"job_id": job_id, "receipt": receipt}}));
        assert_eq!(job["isError"], false, "{job}");
        if job["structuredContent"]["status"] != "running" {
            assert_eq!(job["structuredContent"]["status"], "completed", "{job}");
            break;
        }
        assert!(started_at.elapsed() < Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(100));
    }
    // The scan's receipt reads the wallet; the same payment again starts nothing.
    let read =
        mcp(json!({"name": "get_ledger", "arguments": {"address": wallet, "receipt": receipt}}));
    assert_eq!(read["isError"], false, "{read}");
    assert!(read["structuredContent"].get("payment").is_none());
    let replay = mcp(
        json!({"name": "scan_wallet", "arguments": {"quote_id": quote_id, "payment": payment}}),
    );
    assert_eq!(
        replay["structuredContent"]["payment"]["replayed"], true,
        "{replay}"
    );
    assert_eq!(replay["structuredContent"]["job_id"], job_id.as_str());
    assert_eq!(token_balance(&rpc, &treasury_usdc), price);

    // 2. REST: a genuine 402, paid with an X-PAYMENT header, then replayed.
    let path = format!("/v1/wallets/{wallet}/ledger?limit=10");
    let (status, head, body) = ledger.http_with("GET", &path, None, "");
    assert_eq!(status, 402, "{body}");
    assert!(header(&head, "payment-required").is_some());
    let read_price: u64 = body["accepts"][0]["amount"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(read_price, 20_000);
    let payment = pay(&body);
    let with_payment = format!("X-PAYMENT: {payment}\r\n");
    let (status, head, page) = ledger.http_with("GET", &path, None, &with_payment);
    assert_eq!(status, 200, "{page}");
    assert!(header(&head, "x-payment-response").is_some(), "{head}");
    assert_eq!(page["payment"]["replayed"], false);
    assert_eq!(token_balance(&rpc, &treasury_usdc), price + read_price);
    let (status, _, again) = ledger.http_with("GET", &path, None, &with_payment);
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["payment"]["replayed"], true);
    assert_eq!(again["payment"]["receipt"], page["payment"]["receipt"]);
    assert_eq!(
        token_balance(&rpc, &treasury_usdc),
        price + read_price,
        "a replay moves nothing"
    );

    // 3. x402pay mcp-call: the whole exchange in one command, then the receipt.
    let url = format!("http://127.0.0.1:{}/mcp", ledger.port);
    let args = json!({"address": wallet, "limit": 3}).to_string();
    let (code, out) = x402pay(&[
        "mcp-call",
        "-keyfile",
        &payer_file,
        "-url",
        &url,
        "-tool",
        "get_ledger",
        "-args",
        &args,
        "-rpc",
        &rpc_url,
    ]);
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("payer: {wallet}"));
    assert_eq!(
        lines[2],
        "paid: challenge answered with the payment argument"
    );
    assert_eq!(
        lines[3],
        format!("payment: settled=true replayed=false network={network} payer={wallet}")
    );
    let receipt = lines[5].strip_prefix("receipt: ").unwrap();
    assert_eq!(lines[6], "status: ok");
    assert_eq!(token_balance(&rpc, &treasury_usdc), price + 2 * read_price);
    let (code, out) = x402pay(&[
        "mcp-call",
        "-url",
        &url,
        "-tool",
        "get_ledger",
        "-args",
        &args,
        "-H",
        &format!("X-Receipt: {receipt}"),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("status: ok") && !out.contains("payment: "),
        "{out}"
    );
    assert_eq!(token_balance(&rpc, &treasury_usdc), price + 2 * read_price);
    assert_eq!(
        token_balance(&rpc, &payer_usdc),
        10_000_000 - price - 2 * read_price
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The `ledger` binary as an operator runs it against `database_url`; its
/// stdout, trimmed. Fails the test when the command fails.
fn operator(database_url: &str, args: &[&str]) -> String {
    let bin = std::env::var("LEDGER_BIN")
        .unwrap_or_else(|_| format!("{}/../../target/debug/ledger", env!("CARGO_MANIFEST_DIR")));
    let out = Command::new(&bin)
        .env_clear()
        .env("DATABASE_URL", database_url)
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("start {bin}: {e}"));
    assert!(out.status.success(), "ledger {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A research account set up as an operator would: created, an MCP token
/// with the read scope, the follow_the_money feature on, `usd` granted.
/// The account id and the token.
fn research_account(database_url: &str, usd: &str) -> (String, String) {
    let account = operator(
        database_url,
        &["accounts", "create", "--label", "chain research"],
    );
    assert!(account.starts_with("acct_"), "{account}");
    let token = operator(
        database_url,
        &[
            "tokens",
            "mint",
            "--account",
            &account,
            "--kind",
            "mcp",
            // Research spends credits: read and scan.
            "--scopes",
            "read,scan",
        ],
    );
    operator(
        database_url,
        &[
            "accounts",
            "feature",
            "--account",
            &account,
            "follow_the_money",
            "on",
        ],
    );
    let balance = operator(
        database_url,
        &["credits", "grant", "--account", &account, "--usd", usd],
    );
    assert!(!balance.is_empty());
    (account, token)
}

/// The research limits out of the way: these tests are about answers.
fn research_env() -> Vec<(&'static str, String)> {
    vec![
        ("LEDGER_GRAPH__RATE_PER_SEC", "1000".to_owned()),
        ("LEDGER_GRAPH__RATE_BURST", "1000".to_owned()),
    ]
}

/// `tools/call` over MCP as `token`; the tool's structured result.
fn research(ledger: &Ledger, token: &str, name: &str, arguments: Value) -> Value {
    let (status, _, body) = ledger.http_with(
        "POST",
        "/mcp",
        Some(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": name, "arguments": arguments}})),
        &format!("Authorization: Bearer {token}\r\n"),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["isError"], false, "{name}: {body}");
    body["result"]["structuredContent"].clone()
}

fn airdrop(rpc: &RpcClient, who: &Pubkey, lamports: u64) {
    let sig = rpc.request_airdrop(who, lamports).unwrap().to_string();
    confirm(rpc, &sig);
}

fn pay_sol(rpc: &RpcClient, from: &Keypair, to: &Pubkey, lamports: u64) -> String {
    send(
        rpc,
        &[solana_system_interface::instruction::transfer(
            &from.pubkey(),
            to,
            lamports,
        )],
        from,
        &[],
        false,
    )
}

/// A wallet's counterparty edges as (source, target, mint, amount).
fn edge_set(expansion: &Value) -> std::collections::BTreeSet<(String, String, String, String)> {
    expansion["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["source"].as_str().unwrap().to_owned(),
                e["target"].as_str().unwrap().to_owned(),
                e["mint"].as_str().unwrap().to_owned(),
                e["amount"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn atomic(v: &Value) -> i64 {
    v.as_str()
        .unwrap_or_else(|| panic!("not an atomic string: {v}"))
        .parse()
        .unwrap()
}

/// Follow the money on a real chain: F pays A, A pays B and C, B moves an
/// SPL token. With the feature on and credits granted through the CLI,
/// `find_first_funder` over MCP names F for A and A for B and C (sender,
/// signature and lamports as sent), `expand_graph` live and from the ledger
/// (after a scan) returns A's three edges with their direction and amount,
/// and every charge is a line of `GET /v1/credits` whose balance follows.
#[test]
fn follow_the_money_walks_a_real_funding_tree() {
    let rpc_url = start_chain();
    let rpc = RpcClient::new_with_commitment(rpc_url.clone(), CommitmentConfig::confirmed());
    let (f, a, b, c, d) = (
        Keypair::new(),
        Keypair::new(),
        Keypair::new(),
        Keypair::new(),
        Keypair::new(),
    );
    airdrop(&rpc, &f.pubkey(), 10_000_000_000);
    let f_to_a = pay_sol(&rpc, &f, &a.pubkey(), 2_000_000_000);
    let a_to_b = pay_sol(&rpc, &a, &b.pubkey(), 500_000_000);
    let a_to_c = pay_sol(&rpc, &a, &c.pubkey(), 300_000_000);
    // B mints a token and sends some of it to D: B's later history is not SOL in.
    let token = pk(TOKEN);
    let mint = create_mint(&rpc, &b, &token);
    let (b_ata, d_ata) = (
        ata(&b.pubkey(), &mint, &token),
        ata(&d.pubkey(), &mint, &token),
    );
    send(
        &rpc,
        &[
            create_ata(&b.pubkey(), &b.pubkey(), &mint, &token),
            create_ata(&b.pubkey(), &d.pubkey(), &mint, &token),
            mint_to(&token, &mint, &b_ata, &b.pubkey(), 1_000_000),
        ],
        &b,
        &[],
        false,
    );
    let b_token = send(
        &rpc,
        &[transfer_checked(
            &token,
            &b_ata,
            &mint,
            &d_ata,
            &b.pubkey(),
            400_000,
        )],
        &b,
        &[],
        false,
    );
    assert_eq!(token_balance(&rpc, &d_ata), 400_000);

    let dir = std::env::temp_dir().join(format!("ledger-ftm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let database_url = std::env::var("CHAIN_DATABASE_URL")
        .unwrap_or_else(|_| format!("sqlite://{}/ftm.db", dir.display()));
    let ledger = Ledger::start_with(
        &rpc_url,
        &database_url,
        "json",
        "http://127.0.0.1:9",
        &research_env(),
    );
    let (_, token_plain) = research_account(&database_url, "1");
    let mut balance: i64 = 1_000_000;
    let mut charges: Vec<(String, i64)> = Vec::new();
    let mut charged = |result: &Value, action: &str, price: i64| {
        assert_eq!(result["action_id"], action);
        assert_eq!(result["replayed"], false);
        assert_eq!(atomic(&result["cost_atomic"]), price, "{result}");
        balance -= price;
        assert_eq!(atomic(&result["balance_atomic"]), balance, "{result}");
        charges.push((action.to_owned(), price));
    };

    // First funders, each the transfer the test sent.
    for (wallet, funder, signature, lamports, action) in [
        (&a, &f, &f_to_a, 2_000_000_000u64, "funder-a"),
        (&b, &a, &a_to_b, 500_000_000, "funder-b"),
        (&c, &a, &a_to_c, 300_000_000, "funder-c"),
    ] {
        let found = research(
            &ledger,
            &token_plain,
            "find_first_funder",
            json!({"address": wallet.pubkey().to_string(), "action_id": action}),
        );
        assert_eq!(found["status"], "found", "{found}");
        assert_eq!(found["complete"], true, "{found}");
        assert_eq!(found["cached"], false);
        let first = &found["first_inbound"];
        assert_eq!(first["sender"], funder.pubkey().to_string(), "{found}");
        assert_eq!(first["signature"], signature.as_str(), "{found}");
        assert_eq!(first["lamports"], lamports.to_string(), "{found}");
        assert_eq!(found["node"]["id"], funder.pubkey().to_string(), "{found}");
        assert_eq!(
            found["label"],
            "first inbound transfer within the scanned window"
        );
        assert_eq!(
            found["pages_read"], 1,
            "one short page is the whole history"
        );
        assert_eq!(
            found["rpc_calls"].as_u64().unwrap(),
            found["pages_read"].as_u64().unwrap() + found["transactions_read"].as_u64().unwrap(),
            "{found}"
        );
        charged(&found, action, 50_000);
    }
    // B's history holds its token transfer; the funder is still the SOL in.
    let b_sigs = all_signatures(&rpc, &b.pubkey().to_string());
    assert!(b_sigs.contains(&b_token) && b_sigs.len() >= 4, "{b_sigs:?}");

    // A's edges: F paid it, it paid B and C.
    let (fa, aa, ba, ca) = (
        f.pubkey().to_string(),
        a.pubkey().to_string(),
        b.pubkey().to_string(),
        c.pubkey().to_string(),
    );
    let expected: std::collections::BTreeSet<(String, String, String, String)> = [
        (&fa, &aa, "2000000000"),
        (&aa, &ba, "500000000"),
        (&aa, &ca, "300000000"),
    ]
    .into_iter()
    .map(|(s, t, amount)| (s.clone(), t.clone(), "sol".to_owned(), amount.to_owned()))
    .collect();
    let check_nodes = |expansion: &Value| {
        let nodes = expansion["nodes"].as_array().unwrap();
        let node = |id: &str| {
            nodes
                .iter()
                .find(|n| n["id"] == id)
                .unwrap_or_else(|| panic!("no node {id}: {expansion}"))
                .clone()
        };
        let centre = node(&aa);
        assert_eq!(centre["signals"]["counterparty_count"], 3, "{centre}");
        assert_eq!(centre["signals"]["fan_in"], 1, "{centre}");
        assert_eq!(centre["signals"]["fan_out"], 2, "{centre}");
        for id in [&fa, &ba, &ca] {
            assert_eq!(node(id)["signals"]["legs"], 1, "{expansion}");
        }
        assert_eq!(nodes.len(), 4, "{expansion}");
        assert_eq!(expansion["counterparties_total"], 3);
        assert_eq!(expansion["counterparties_omitted"], 0);
    };
    let live = research(
        &ledger,
        &token_plain,
        "expand_graph",
        json!({"address": aa, "action_id": "expand-a-live", "source": "live", "window_sigs": 10}),
    );
    assert_eq!(live["source"], "live", "{live}");
    assert_eq!(live["complete"], true, "{live}");
    assert_eq!(live["signatures_read"], 3, "{live}");
    assert_eq!(edge_set(&live), expected, "{live}");
    check_nodes(&live);
    charged(&live, "expand-a-live", 20_000);

    // Only inbound, live: F alone (and from the live cache, at its price).
    let inbound = research(
        &ledger,
        &token_plain,
        "expand_graph",
        json!({"address": aa, "action_id": "expand-a-in", "source": "live", "window_sigs": 10,
               "direction": "in"}),
    );
    assert_eq!(inbound["cached"], true, "{inbound}");
    assert_eq!(
        edge_set(&inbound),
        expected.iter().filter(|e| e.1 == aa).cloned().collect(),
        "{inbound}"
    );
    charged(&inbound, "expand-a-in", 5_000);

    // The ledger source needs the wallet scanned; then the same edges.
    ledger.scan(&aa);
    let from_ledger = research(
        &ledger,
        &token_plain,
        "expand_graph",
        json!({"address": aa, "action_id": "expand-a-ledger", "source": "ledger"}),
    );
    assert_eq!(from_ledger["source"], "ledger", "{from_ledger}");
    assert_eq!(edge_set(&from_ledger), expected, "{from_ledger}");
    check_nodes(&from_ledger);
    charged(&from_ledger, "expand-a-ledger", 5_000);

    // The same action again is the stored answer, free.
    let replay = research(
        &ledger,
        &token_plain,
        "find_first_funder",
        json!({"address": a.pubkey().to_string(), "action_id": "funder-a"}),
    );
    assert_eq!(replay["replayed"], true, "{replay}");
    assert_eq!(replay["cost_atomic"], "0");
    assert_eq!(atomic(&replay["balance_atomic"]), balance);
    assert_eq!(replay["first_inbound"]["sender"], fa);
    // REST is the same domain call: the MCP action replays there, free.
    let (status, _, rest) = ledger.http_with(
        "POST",
        "/v1/graph/funder",
        Some(&json!({"address": c.pubkey().to_string(), "action_id": "funder-c"})),
        &format!("Authorization: Bearer {token_plain}\r\n"),
    );
    assert_eq!(status, 200, "{rest}");
    assert_eq!(rest["replayed"], true, "{rest}");
    assert_eq!(rest["cost_atomic"], "0");
    assert_eq!(rest["first_inbound"]["signature"], a_to_c.as_str());
    assert_eq!(atomic(&rest["balance_atomic"]), balance);

    // Every charge is a line of the credit ledger, newest first, and the
    // balance is what the lines leave.
    let (status, _, view) = ledger.http_with(
        "GET",
        "/v1/credits",
        None,
        &format!("Authorization: Bearer {token_plain}\r\n"),
    );
    assert_eq!(status, 200, "{view}");
    assert_eq!(atomic(&view["balance_atomic"]), balance);
    assert_eq!(balance, 1_000_000 - 3 * 50_000 - 20_000 - 2 * 5_000);
    let movements = view["movements"].as_array().unwrap();
    assert_eq!(movements.len(), charges.len() + 1, "{view}");
    let grant = movements.last().unwrap();
    assert_eq!(grant["kind"], "grant");
    assert_eq!(atomic(&grant["amount_atomic"]), 1_000_000);
    assert_eq!(atomic(&grant["balance_after_atomic"]), 1_000_000);
    let mut after = 1_000_000;
    for ((action, price), line) in charges.iter().zip(movements.iter().rev().skip(1)) {
        assert_eq!(line["kind"], "charge", "{line}");
        assert_eq!(line["action_id"], action.as_str(), "{line}");
        assert_eq!(atomic(&line["amount_atomic"]), -price, "{line}");
        after -= price;
        assert_eq!(atomic(&line["balance_after_atomic"]), after, "{line}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// `n` self-transfers by `w` (each a distinct amount, so a distinct
/// signature), sent from four threads without waiting, each thread on a
/// fresh blockhash every 25; then confirmed, 200 statuses a request. A
/// transfer still unconfirmed after 20 seconds (its blockhash expired
/// while the node was busy) is signed again on a new blockhash, under a new
/// signature. Every transfer lands exactly once; the signatures, in any order.
fn self_transfers(rpc_url: &str, w: &Keypair, n: u64) -> Vec<String> {
    let send_some = |amounts: Vec<u64>| -> Vec<(u64, String)> {
        let rpc = RpcClient::new_with_commitment(rpc_url.to_owned(), CommitmentConfig::confirmed());
        let config = RpcSendTransactionConfig {
            skip_preflight: true,
            ..Default::default()
        };
        let mut blockhash = rpc.get_latest_blockhash().unwrap();
        amounts
            .into_iter()
            .enumerate()
            .map(|(i, amount)| {
                if i % 25 == 0 {
                    blockhash = rpc.get_latest_blockhash().unwrap();
                }
                let tx = Transaction::new_signed_with_payer(
                    &[solana_system_interface::instruction::transfer(
                        &w.pubkey(),
                        &w.pubkey(),
                        amount,
                    )],
                    Some(&w.pubkey()),
                    &[w],
                    blockhash,
                );
                let sig = rpc.send_transaction_with_config(&tx, config).unwrap();
                (amount, sig.to_string())
            })
            .collect()
    };
    let rpc = RpcClient::new_with_commitment(rpc_url.to_owned(), CommitmentConfig::confirmed());
    let started = Instant::now();
    let mut pending: Vec<u64> = (1..=n).collect();
    let mut landed: Vec<String> = Vec::new();
    while !pending.is_empty() {
        let shares: Vec<Vec<u64>> = (0..4)
            .map(|t| pending.iter().copied().skip(t).step_by(4).collect())
            .collect();
        let mut sent: Vec<(u64, String)> = std::thread::scope(|scope| {
            let handles: Vec<_> = shares
                .into_iter()
                .map(|share| scope.spawn(|| send_some(share)))
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        let round = Instant::now();
        while !sent.is_empty() && round.elapsed() < Duration::from_secs(20) {
            let mut still = Vec::new();
            for chunk in sent.chunks(200) {
                let sigs: Vec<&str> = chunk.iter().map(|(_, s)| s.as_str()).collect();
                let v = call(&rpc, RpcRequest::GetSignatureStatuses, json!([sigs]));
                for ((amount, sig), s) in chunk.iter().zip(v["value"].as_array().unwrap()) {
                    if matches!(
                        s["confirmationStatus"].as_str(),
                        Some("confirmed" | "finalized")
                    ) {
                        assert!(s["err"].is_null(), "{sig} failed: {s}");
                        landed.push(sig.clone());
                    } else {
                        still.push((*amount, sig.clone()));
                    }
                }
            }
            sent = still;
            if !sent.is_empty() {
                std::thread::sleep(Duration::from_millis(250));
            }
        }
        pending = sent.into_iter().map(|(amount, _)| amount).collect();
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "{} transfers not confirmed in 4 minutes",
            pending.len()
        );
        if !pending.is_empty() {
            eprintln!("{} transfers dropped; signing them again", pending.len());
        }
    }
    landed
}

/// A wallet funded and then busy: 1,001 transactions after its funding put
/// the funding transfer on the second page of 1,000 signatures. With
/// `graph.funder_max_pages = 1` the lookup stops at the cap and says so
/// (`not_found_within_window`, `complete: false`, one RPC request, charged);
/// a server allowed two pages finds the funder, so the first answer was the
/// cap speaking, not a missing transfer.
#[test]
fn a_funder_beyond_the_page_cap_is_not_found_within_the_window() {
    let started = Instant::now();
    let rpc_url = start_chain();
    let rpc = RpcClient::new_with_commitment(rpc_url.clone(), CommitmentConfig::confirmed());
    let (f, w) = (Keypair::new(), Keypair::new());
    airdrop(&rpc, &f.pubkey(), 10_000_000_000);
    let funding = pay_sol(&rpc, &f, &w.pubkey(), 1_000_000_000);
    // 1,001 transactions after the funding: W pays itself.
    let after = self_transfers(&rpc_url, &w, 1001);
    assert_eq!(after.len(), 1001);
    let sent_in = started.elapsed();
    // Straight from the chain: the first page of 1,000 stops short of the
    // funding, which is the oldest on the second page.
    let page = |before: Option<&str>| {
        let mut options = json!({"limit": 1000, "commitment": "confirmed"});
        if let Some(b) = before {
            options["before"] = json!(b);
        }
        let v = call(
            &rpc,
            RpcRequest::GetSignaturesForAddress,
            json!([w.pubkey().to_string(), options]),
        );
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s["signature"].as_str().unwrap().to_owned())
            .collect::<Vec<String>>()
    };
    let first_page = page(None);
    assert_eq!(first_page.len(), 1000);
    assert!(
        !first_page.contains(&funding),
        "the funding is beyond the first page"
    );
    let second_page = page(first_page.last().map(String::as_str));
    assert_eq!(
        second_page.last(),
        Some(&funding),
        "the funding is the oldest"
    );
    let total = first_page.len() + second_page.len();
    assert_eq!(total, 1002, "the funding and the 1,001 after it");
    let built = started.elapsed();

    let dir = std::env::temp_dir().join(format!("ledger-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let database_url = std::env::var("CHAIN_DATABASE_URL")
        .unwrap_or_else(|_| format!("sqlite://{}/cap.db", dir.display()));
    let mut env = research_env();
    env.push(("LEDGER_GRAPH__FUNDER_MAX_PAGES", "1".to_owned()));
    let ledger = Ledger::start_with(&rpc_url, &database_url, "json", "http://127.0.0.1:9", &env);
    let (_, token) = research_account(&database_url, "1");
    let wallet = w.pubkey().to_string();
    let capped = research(
        &ledger,
        &token,
        "find_first_funder",
        json!({"address": wallet, "action_id": "capped"}),
    );
    assert_eq!(capped["status"], "not_found_within_window", "{capped}");
    assert_eq!(capped["complete"], false, "{capped}");
    assert!(capped["first_inbound"].is_null(), "{capped}");
    assert!(
        capped["reason"]
            .as_str()
            .unwrap()
            .contains("page cap (1 pages of 1000)"),
        "{capped}"
    );
    assert_eq!(capped["pages_read"], 1);
    assert_eq!(capped["signatures_scanned"], 1000);
    assert_eq!(capped["transactions_read"], 0);
    assert_eq!(capped["rpc_calls"], 1, "one signatures page, nothing else");
    assert_eq!(
        capped["cost_atomic"], "50000",
        "an honest not-found is charged"
    );
    assert_eq!(capped["balance_atomic"], "950000");
    drop(ledger);

    // The control: two pages reach the beginning and find F. Its own
    // SQLite database, so the capped finding's cache is not served.
    let control_db = format!("sqlite://{}/control.db", dir.display());
    let control = Ledger::start_with(
        &rpc_url,
        &control_db,
        "json",
        "http://127.0.0.1:9",
        &research_env(),
    );
    let (_, token) = research_account(&control_db, "1");
    let found = research(
        &control,
        &token,
        "find_first_funder",
        json!({"address": wallet, "action_id": "uncapped"}),
    );
    assert_eq!(found["status"], "found", "{found}");
    assert_eq!(found["complete"], true, "{found}");
    assert_eq!(found["pages_read"], 2, "{found}");
    assert_eq!(found["signatures_scanned"], total, "{found}");
    assert_eq!(found["first_inbound"]["sender"], f.pubkey().to_string());
    assert_eq!(found["first_inbound"]["signature"], funding.as_str());
    assert_eq!(found["first_inbound"]["lamports"], "1000000000");
    eprintln!(
        "page cap: 1,001 transfers sent and confirmed in {:.1}s, history checked by {:.1}s, \
         whole test {:.1}s",
        sent_in.as_secs_f64(),
        built.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(dir);
}
