//! Settlement: from a verified payment to a receipt, on chain, exactly once.
//!
//! Order matters and is the whole design:
//!
//! 1. Verify offline ([`super::verify`]), then look the payment up by its
//!    message hash: a payment seen before answers from its row (waiting
//!    while it is in flight) and never reaches the chain again.
//! 2. Check the blockhash is fresh and simulate, before any signature of
//!    ours exists.
//! 3. Co-sign, then record the intent (`pending`, with the fully signed
//!    bytes) under two unique keys: the message hash (the same payment) and
//!    the quote (another payment for a quote already being paid). Of any
//!    number of concurrent presentations exactly one inserts; the others
//!    wait for its outcome.
//! 4. Send, confirm, record the outcome. A crash anywhere after step 3
//!    leaves a `pending` row that [`recover`] finishes from the chain:
//!    confirmed → settled (the receipt re-derives from the payment), failed
//!    → failed, unknown with a live blockhash → the same bytes sent again
//!    (one signature executes once), unknown with an expired blockhash →
//!    failed, since it can no longer land.

use std::{sync::Arc, time::Duration};

use base64::{Engine, engine::general_purpose::STANDARD};
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_signer::Signer;

use super::{
    Paywall, UnknownText,
    quote::{Entitlement, Scope},
    receipt::Receipt,
    verify::{self, Expected, Refusal, Verified},
    x402::{self, PaymentBlock},
};
use crate::{
    error::AppError,
    ids,
    solana::{RpcCost, RpcError},
    store::{Intent, PaymentRecord, QuoteRecord},
};

/// The payments setup loaded at start: our fee payer and the payee.
pub struct Runtime {
    fee_payer: Option<Arc<Keypair>>,
    treasury: Option<Pubkey>,
    asset: Pubkey,
    receipt_secret: tokio::sync::OnceCell<Vec<u8>>,
}

impl Runtime {
    pub fn load(config: &crate::config::X402Config) -> Result<Self, String> {
        let asset: Pubkey = config
            .asset
            .parse()
            .map_err(|_| format!("x402.asset {:?} is not a public key", config.asset))?;
        let treasury = config
            .treasury
            .as_deref()
            .map(|t| {
                t.parse::<Pubkey>()
                    .map_err(|_| format!("x402.treasury {t:?} is not a public key"))
            })
            .transpose()?;
        let fee_payer = config
            .fee_payer_keyfile
            .as_deref()
            .map(|path| {
                solana_keypair::read_keypair_file(path)
                    .map(Arc::new)
                    .map_err(|e| format!("x402.fee_payer_keyfile {}: {e}", path.display()))
            })
            .transpose()?;
        if !config.network.starts_with("solana:") {
            return Err(format!(
                "x402.network {:?} must be a CAIP-2 solana id (solana:<genesis hash prefix>)",
                config.network
            ));
        }
        Ok(Self {
            fee_payer,
            treasury,
            asset,
            receipt_secret: tokio::sync::OnceCell::new(),
        })
    }

    /// Payments can be taken: a payee and a fee payer are configured.
    pub fn ready(&self) -> Option<(&Keypair, Pubkey)> {
        Some((self.fee_payer.as_deref()?, self.treasury?))
    }

    pub fn asset(&self) -> Pubkey {
        self.asset
    }
}

/// A refusal, or a failure that is nobody's fault (storage, RPC down).
#[derive(Debug)]
pub enum SettleError {
    Refused(Refusal),
    QuoteAlreadyPaid,
    /// Another payment from the same payer is still in flight; this one
    /// was to buy the entitlement named.
    PayerBusy(Entitlement),
    App(AppError),
}

impl From<Refusal> for SettleError {
    fn from(r: Refusal) -> Self {
        SettleError::Refused(r)
    }
}

impl From<crate::store::StoreError> for SettleError {
    fn from(e: crate::store::StoreError) -> Self {
        SettleError::App(e.into())
    }
}

impl From<UnknownText> for SettleError {
    fn from(e: UnknownText) -> Self {
        SettleError::App(e.into())
    }
}

/// Where a payment row stands (`payments.status`): written `pending`
/// before the transaction is sent, then `settled` or `failed`, once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaymentStatus {
    Pending,
    Settled,
    Failed,
}

impl PaymentStatus {
    /// As the `payments.status` column stores it.
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentStatus::Pending => "pending",
            PaymentStatus::Settled => "settled",
            PaymentStatus::Failed => "failed",
        }
    }

    /// A stored status: text this server never writes is an error.
    pub fn of_column(text: &str) -> Result<Self, UnknownText> {
        [
            PaymentStatus::Pending,
            PaymentStatus::Settled,
            PaymentStatus::Failed,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
        .ok_or_else(|| UnknownText::new("payments.status", text))
    }

    /// Where `record` stands.
    pub fn of_record(record: &PaymentRecord) -> Result<Self, UnknownText> {
        Self::of_column(&record.status)
    }
}

/// A settled payment, as its row and the block to report.
pub struct Settled {
    pub record: PaymentRecord,
    pub block: PaymentBlock,
}

fn rpc_unavailable(context: &str, e: &RpcError) -> SettleError {
    tracing::warn!(error = %e, context, "payments: RPC failed");
    SettleError::App(AppError::new(
        crate::error::Code::Unavailable,
        "the Solana RPC endpoint did not answer; nothing was charged, try again shortly",
    ))
}

async fn receipt_secret(pw: &Paywall<'_>) -> Result<Vec<u8>, SettleError> {
    let rt = pw.runtime;
    let secret = rt
        .receipt_secret
        .get_or_try_init(|| async {
            pw.store
                .server_secret("receipts")
                .await
                .map(String::into_bytes)
        })
        .await?;
    Ok(secret.clone())
}

/// The receipt of a payment row.
pub async fn receipt_of(pw: &Paywall<'_>, p: &PaymentRecord) -> Result<Receipt, SettleError> {
    let secret = receipt_secret(pw).await?;
    Receipt::of_message_hex(&secret, &p.message_hash)
        .ok_or_else(|| SettleError::App(AppError::internal("payment hash", p.message_hash.clone())))
}

async fn block_of(
    pw: &Paywall<'_>,
    p: &PaymentRecord,
    replayed: bool,
) -> Result<PaymentBlock, SettleError> {
    Ok(PaymentBlock {
        settled: true,
        transaction: p.signature.clone(),
        receipt: receipt_of(pw, p).await?.as_str().to_owned(),
        network: p.network.clone(),
        payer: p.payer.clone(),
        replayed,
    })
}

/// The atomic amount a quote's price comes to in an asset of `decimals`,
/// rounded up.
pub fn atomic_amount(price_micros: i64, decimals: u8) -> u64 {
    let micros = u128::try_from(price_micros).unwrap_or(0);
    let scaled = if decimals >= 6 {
        micros * 10u128.pow(u32::from(decimals - 6))
    } else {
        micros.div_ceil(10u128.pow(u32::from(6 - decimals)))
    };
    u64::try_from(scaled).unwrap_or(u64::MAX)
}

/// Verify, settle and record `payment` for `quote`; what it buys is what
/// the quote's scope buys.
pub async fn settle(
    pw: &Paywall<'_>,
    payment: &str,
    quote: &QuoteRecord,
) -> Result<Settled, SettleError> {
    let scope = Scope::of_column(&quote.scope)?;
    let config = pw.x402;
    let Some((fee_payer, treasury)) = pw.runtime.ready() else {
        return Err(SettleError::App(super::not_configured()));
    };
    let value = x402::parse_payment(payment, &config.network)?;
    let expected = Expected {
        fee_payer: fee_payer.pubkey(),
        asset: pw.runtime.asset(),
        decimals: config.asset_decimals,
        pay_to: treasury,
        amount: atomic_amount(quote.price_micros, config.asset_decimals),
        quote_id: &quote.id,
        max_compute_unit_limit: config.max_compute_unit_limit,
        max_compute_unit_price: config.max_compute_unit_price,
    };
    let verified = verify::verify(&value.transaction, &expected)?;
    let hash = verified.message_hash_hex();
    if let Some(seen) = pw.store.payment_by_message(&hash).await? {
        return answer_seen(pw, seen).await;
    }

    let cost = RpcCost::default();
    let rpc = pw.rpc;
    let fresh = rpc
        .is_blockhash_valid(&verified.recent_blockhash, &cost)
        .await
        .map_err(|e| rpc_unavailable("isBlockhashValid", &e))?;
    if !fresh {
        return Err(Refusal::StaleBlockhash.into());
    }
    if let Some(why) = rpc
        .simulate(&STANDARD.encode(&verified.wire), &cost)
        .await
        .map_err(|e| rpc_unavailable("simulateTransaction", &e))?
    {
        if why.contains("BlockhashNotFound") {
            return Err(Refusal::StaleBlockhash.into());
        }
        return Err(Refusal::SimulationFailed(why).into());
    }

    let (wire, signature) = co_sign(&verified, fee_payer);
    let now = pw.now_ms();
    let lease_ms = i64::try_from(config.confirm_timeout_secs * 1000 + 15_000).unwrap_or(60_000);
    let record = PaymentRecord {
        id: ids::new_id("pay_", now),
        quote_id: quote.id.clone(),
        message_hash: hash,
        signature: signature.clone(),
        wire_tx: STANDARD.encode(&wire),
        payer: verified.payer.to_string(),
        network: config.network.clone(),
        asset: expected.asset.to_string(),
        pay_to: treasury.to_string(),
        amount_atomic: i64::try_from(expected.amount).unwrap_or(i64::MAX),
        status: PaymentStatus::Pending.as_str().to_owned(),
        error: None,
        receipt_hash: None,
        entitlement: scope.entitlement().as_str().to_owned(),
        wallet: quote.address.clone(),
        scope: scope.as_str().to_owned(),
        consumed_job_id: None,
        account_id: None,
        lease_until: now + lease_ms,
        created_at: now,
        settled_at: None,
        expires_at: None,
    };
    match pw.store.record_payment_intent(&record).await? {
        Intent::New => {}
        Intent::Same(seen) => return answer_seen(pw, *seen).await,
        Intent::QuotePaid(_) => return Err(SettleError::QuoteAlreadyPaid),
        Intent::PayerBusy(_) => return Err(SettleError::PayerBusy(scope.entitlement())),
    }
    tracing::info!(payment = %record.id, quote = %quote.id, %signature, payer = %record.payer, "payment: sending");
    match send_and_confirm(pw, &record, &cost).await {
        Outcome::Landed => finish_settled(pw, &record, false).await,
        Outcome::Failed(why) => {
            pw.store.fail_payment(&record.id, &why).await?;
            tracing::warn!(payment = %record.id, %why, "payment: failed on chain");
            Err(Refusal::SettlementFailed(why).into())
        }
        Outcome::Refused => {
            // Answer now, but leave the row pending (its quote stays taken)
            // and hand it to recovery at once: it is failed only when the
            // chain confirms it can no longer land, so a transaction that
            // lands after all is still settled and never paid twice.
            pw.store.expire_payment_lease(&record.id).await?;
            Err(Refusal::SettlementFailed(
                "the Solana node refused to take the transaction".to_owned(),
            )
            .into())
        }
        Outcome::Unknown => Err(SettleError::App(AppError::new(
            crate::error::Code::Unavailable,
            "the payment was submitted but is not confirmed yet; present the same payment again \
             shortly to get its receipt (it will not be charged twice)",
        ))),
    }
}

/// Whether `payment` was taken before (settled, in flight or failed): its
/// answer is a replay, whatever its quote's age.
pub async fn is_known(pw: &Paywall<'_>, payment: &str) -> Result<bool, AppError> {
    let network = &pw.x402.network;
    let Ok(value) = x402::parse_payment(payment, network) else {
        return Ok(false);
    };
    let Some(hash) = verify::message_hash_of(&value.transaction) else {
        return Ok(false);
    };
    Ok(pw.store.payment_by_message(&hash).await?.is_some())
}

/// Put our signature in the fee payer's slot of the bytes the payer
/// signed; returns the wire transaction and its id.
fn co_sign(verified: &Verified, fee_payer: &Keypair) -> (Vec<u8>, String) {
    let signature = fee_payer.sign_message(verified.message());
    let mut wire = verified.wire.clone();
    let slot = verified.fee_payer_slot;
    wire[slot..slot + 64].copy_from_slice(signature.as_ref());
    (wire, signature.to_string())
}

enum Outcome {
    Landed,
    Failed(String),
    /// The node answered the send with an error. That almost certainly
    /// means it will not land, but only the chain can say so for sure.
    Refused,
    Unknown,
}

async fn send_and_confirm(pw: &Paywall<'_>, p: &PaymentRecord, cost: &RpcCost) -> Outcome {
    let rpc = pw.rpc;
    if let Err(e) = rpc.send_transaction(&p.wire_tx, cost).await {
        // A refusal from the node almost certainly means it will not land;
        // a transport failure may hide a send that happened. Either way the
        // row stays pending and the chain decides (here or in recovery).
        if let RpcError::Rpc { message, .. } = &e {
            tracing::warn!(payment = %p.id, %message, "payment: send refused");
            return Outcome::Refused;
        }
        tracing::warn!(payment = %p.id, error = %e, "payment: send uncertain");
    }
    // Confirmation only: deciding that a transaction can never land is left
    // to recovery, which waits until that is certain.
    let timeout = Duration::from_secs(pw.x402.confirm_timeout_secs);
    let poll = async {
        loop {
            match rpc.signature_status(&p.signature, cost).await {
                Ok(Some(status)) if status.err.is_some() => {
                    return Outcome::Failed(format!(
                        "the transaction failed on chain: {}",
                        status.err.unwrap_or_default()
                    ));
                }
                Ok(Some(status)) if status.confirmed => return Outcome::Landed,
                Ok(_) => {}
                Err(e) => tracing::debug!(error = %e, "payment: status poll failed"),
            }
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
    };
    tokio::time::timeout(timeout, poll)
        .await
        .unwrap_or(Outcome::Unknown)
}

fn blockhash_of(wire_b64: &str) -> Option<String> {
    let wire = STANDARD.decode(wire_b64).ok()?;
    let tx: solana_transaction::versioned::VersionedTransaction =
        wincode::deserialize(&wire).ok()?;
    Some(tx.message.recent_blockhash().to_string())
}

async fn finish_settled(
    pw: &Paywall<'_>,
    p: &PaymentRecord,
    replayed: bool,
) -> Result<Settled, SettleError> {
    let receipt = receipt_of(pw, p).await?;
    let now = pw.now_ms();
    let ttl = i64::try_from(pw.x402.receipt_ttl_secs * 1000).unwrap_or(i64::MAX / 4);
    pw.store
        .settle_payment(&p.id, &receipt.hash(), now, now + ttl)
        .await?;
    let record = pw
        .store
        .payment(&p.id)
        .await?
        .ok_or_else(|| SettleError::App(AppError::internal("payment", "vanished")))?;
    if PaymentStatus::of_record(&record)? != PaymentStatus::Settled {
        return Err(Refusal::SettlementFailed(record.error.unwrap_or_default()).into());
    }
    tracing::info!(payment = %p.id, signature = %p.signature, "payment: settled");
    // The payment is settled and stored: nothing after this may turn it
    // into a refusal, so a row whose entitlement cannot be read is logged
    // and left uncounted rather than answered as an error.
    match Entitlement::of_record(&record) {
        Ok(bought) => pw.metrics.payment_settled(bought.as_str()),
        Err(err) => tracing::error!(
            payment = %p.id,
            error = %err,
            "payment settled, but its stored entitlement is unreadable; not counted"
        ),
    }
    let block = block_of(pw, &record, replayed).await?;
    Ok(Settled { record, block })
}

/// A payment presented again: its first outcome, waiting while it is in
/// flight (bounded by the confirmation timeout).
async fn answer_seen(pw: &Paywall<'_>, mut seen: PaymentRecord) -> Result<Settled, SettleError> {
    let deadline =
        tokio::time::Instant::now() + Duration::from_secs(pw.x402.confirm_timeout_secs + 5);
    loop {
        match PaymentStatus::of_record(&seen)? {
            PaymentStatus::Settled => {
                // A settled transaction is public on chain, so anyone can
                // rebuild its payment value; its receipt is answered again
                // only shortly after it settled (the window in which its
                // payer may be retrying), never after.
                let window = i64::try_from(pw.x402.replay_window_secs * 1000).unwrap_or(0);
                if seen
                    .settled_at
                    .is_none_or(|at| pw.now_ms() > at.saturating_add(window))
                {
                    return Err(Refusal::AlreadySettled.into());
                }
                let block = block_of(pw, &seen, true).await?;
                return Ok(Settled {
                    record: seen,
                    block,
                });
            }
            PaymentStatus::Failed => {
                return Err(Refusal::SettlementFailed(seen.error.unwrap_or_default()).into());
            }
            PaymentStatus::Pending => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(SettleError::App(AppError::new(
                crate::error::Code::Unavailable,
                "this payment is still being settled; present it again shortly to get its receipt",
            )));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        seen = pw
            .store
            .payment(&seen.id)
            .await?
            .ok_or_else(|| SettleError::App(AppError::internal("payment", "vanished")))?;
    }
}

/// How old a pending payment must be before "not on chain and blockhash
/// invalid" is taken as "can never land".
const EXPIRED_AFTER_MS: i64 = 180_000;

/// Finish pending payments nobody holds any more, from the chain. Runs at
/// start and with the worker's maintenance. Returns how many it finished.
pub async fn recover(pw: &Paywall<'_>) -> Result<usize, crate::store::StoreError> {
    let lease_ms = i64::try_from(pw.x402.confirm_timeout_secs * 1000 + 15_000).unwrap_or(60_000);
    let stale = pw.store.claim_stale_payments(pw.now_ms(), lease_ms).await?;
    let cost = RpcCost::default();
    let rpc = pw.rpc;
    let mut finished = 0;
    for p in stale {
        let status = match rpc.signature_status(&p.signature, &cost).await {
            Ok(status) => status,
            Err(e) => {
                tracing::warn!(payment = %p.id, error = %e, "payment recovery: RPC failed; later");
                continue;
            }
        };
        match status {
            Some(s) if s.err.is_some() => {
                let why = format!(
                    "the transaction failed on chain: {}",
                    s.err.unwrap_or_default()
                );
                if pw.store.fail_payment(&p.id, &why).await? {
                    finished += 1;
                }
            }
            Some(s) if s.confirmed => match finish_settled(pw, &p, false).await {
                Ok(_) => finished += 1,
                Err(e) => tracing::warn!(payment = %p.id, ?e, "payment recovery: settle failed"),
            },
            Some(_) => {}
            None => {
                let live = match blockhash_of(&p.wire_tx) {
                    Some(blockhash) => rpc.is_blockhash_valid(&blockhash, &cost).await.ok(),
                    None => Some(false),
                };
                // A blockhash lives about 150 blocks (a minute or so) and
                // was checked fresh when the payment was taken; past
                // `EXPIRED_AFTER_MS` no transaction carrying it can land,
                // whatever a lagging node says.
                let surely_expired = pw.now_ms() - p.created_at > EXPIRED_AFTER_MS;
                match live {
                    Some(true) => {
                        // Never seen by the chain and still able to land:
                        // send the very same bytes (one signature, one
                        // execution at most).
                        let _ = rpc.send_transaction(&p.wire_tx, &cost).await;
                        tracing::info!(payment = %p.id, "payment recovery: resent");
                    }
                    Some(false) if surely_expired => {
                        // Look once more: it may have landed meanwhile.
                        if let Ok(None) = rpc.signature_status(&p.signature, &cost).await
                            && pw
                                .store
                                .fail_payment(&p.id, "the transaction expired before it landed")
                                .await?
                        {
                            finished += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    if finished > 0 {
        tracing::info!(finished, "payment recovery");
    }
    Ok(finished)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(status: &str, entitlement: &str, scope: &str) -> PaymentRecord {
        PaymentRecord {
            id: "pay_1".to_owned(),
            quote_id: "q_1".to_owned(),
            message_hash: String::new(),
            signature: String::new(),
            wire_tx: String::new(),
            payer: String::new(),
            network: String::new(),
            asset: String::new(),
            pay_to: String::new(),
            amount_atomic: 0,
            status: status.to_owned(),
            error: None,
            receipt_hash: None,
            entitlement: entitlement.to_owned(),
            wallet: String::new(),
            scope: scope.to_owned(),
            consumed_job_id: None,
            account_id: None,
            lease_until: 0,
            created_at: 0,
            settled_at: None,
            expires_at: None,
        }
    }

    #[test]
    fn statuses_read_back_their_own_words_and_refuse_any_other() {
        for status in [
            PaymentStatus::Pending,
            PaymentStatus::Settled,
            PaymentStatus::Failed,
        ] {
            assert_eq!(PaymentStatus::of_column(status.as_str()), Ok(status));
        }
        for unknown in ["", "Settled", "refunded", "settled "] {
            assert_eq!(
                PaymentStatus::of_column(unknown),
                Err(UnknownText::new("payments.status", unknown))
            );
        }
    }

    #[test]
    fn a_stored_entitlement_is_what_its_scope_bought() {
        let of = |entitlement, scope| Entitlement::of_record(&row("settled", entitlement, scope));
        assert_eq!(of("scan", "full"), Ok(Entitlement::Scan));
        assert_eq!(of("read", "read"), Ok(Entitlement::Read));
        // The column predates top-ups: a top-up's row says `read`.
        assert_eq!(of("read", "topup"), Ok(Entitlement::TopUp));
        assert_eq!(Entitlement::TopUp.as_str(), "read");
        for (bought, scope) in [
            (Entitlement::Scan, Scope::Incremental),
            (Entitlement::Read, Scope::Read),
            (Entitlement::TopUp, Scope::TopUp),
        ] {
            assert_eq!(scope.entitlement(), bought);
            assert_eq!(of(bought.as_str(), scope.as_str()), Ok(bought));
        }
    }

    #[test]
    fn a_stored_entitlement_or_scope_this_server_never_writes_is_refused() {
        let of = |entitlement, scope| Entitlement::of_record(&row("settled", entitlement, scope));
        assert_eq!(
            of("topup", "topup"),
            Err(UnknownText::new("payments.entitlement", "topup"))
        );
        assert_eq!(
            of("Scan", "full"),
            Err(UnknownText::new("payments.entitlement", "Scan"))
        );
        assert_eq!(
            of("read", "backfill"),
            Err(UnknownText::new("scope", "backfill"))
        );
        // A known word paired with a scope that never writes it.
        assert_eq!(
            of("scan", "read"),
            Err(UnknownText::new("payments.entitlement", "scan"))
        );
        assert_eq!(
            of("read", "full"),
            Err(UnknownText::new("payments.entitlement", "read"))
        );
        assert_eq!(
            of("scan", "topup"),
            Err(UnknownText::new("payments.entitlement", "scan"))
        );
    }
}
