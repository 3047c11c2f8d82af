//! Analytics over a scanned wallet's legs: its positions under a cost-basis
//! method ([`positions`], SPEC N3, on the `basis` engine), its value through
//! time ([`value_history`], N4) and who it trades with ([`flows`], N5).
//! Both read the wallet's whole ledger from the store and prices from
//! `prices`; the pure cores take legs and a valuer, so the benchmark and
//! unit tests run them without a server. docs/analytics.md is the long form.

pub mod flows;
pub mod positions;
pub mod registry;
pub mod value_history;

use crate::{error::AppError, ledger::SOL, reads::Reads, solana::WalletAddress};

/// A leg as the analytics use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leg {
    pub signature: String,
    pub index: u32,
    pub block_time: Option<i64>,
    pub operation_type: String,
    pub mint: String,
    pub amount: i128,
    pub decimals: u32,
    pub counterparties: Vec<crate::ledger::Counterparty>,
}

impl Leg {
    fn from_row(row: crate::store::AnalyticsLeg) -> Option<Self> {
        Some(Self {
            signature: row.signature,
            index: u32::try_from(row.leg_index).unwrap_or(0),
            block_time: row.block_time,
            amount: row.amount.parse().ok()?,
            decimals: u32::try_from(row.decimals).unwrap_or(0),
            counterparties: serde_json::from_str(&row.counterparties).unwrap_or_default(),
            operation_type: row.operation_type,
            mint: row.mint,
        })
    }
}

/// A stored leg row as the analytics read it (the graph reads them too).
pub(crate) fn leg_from_row(row: crate::store::AnalyticsLeg) -> Option<Leg> {
    Leg::from_row(row)
}

fn invalid(message: impl Into<String>) -> AppError {
    AppError::invalid_params(message)
}

/// A scanned wallet's legs, oldest first; a wallet never scanned is
/// not_found.
pub(crate) async fn scanned_legs(
    reads: &Reads<'_>,
    address: &WalletAddress,
) -> Result<Vec<Leg>, AppError> {
    if !reads.store().wallet_scanned(address.as_str()).await? {
        return Err(AppError::not_found(
            "this wallet has never been scanned: quote_wallet, scan_wallet, poll get_job, then read",
        ));
    }
    Ok(reads
        .store()
        .wallet_legs(address.as_str())
        .await?
        .into_iter()
        .filter_map(Leg::from_row)
        .collect())
}

fn mint_filter(text: Option<&str>) -> Result<Option<String>, AppError> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(m) if m.eq_ignore_ascii_case(SOL) => Ok(Some(SOL.to_owned())),
        Some(m) => Ok(Some(
            WalletAddress::parse(m)
                .map_err(|why| invalid(format!("mint: {why}")))?
                .to_string(),
        )),
    }
}
