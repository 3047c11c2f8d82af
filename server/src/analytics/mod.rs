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

use crate::{
    error::AppError,
    ledger::SOL,
    values::parse_time,
    solana::WalletAddress,
    state::AppState,
};

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

fn invalid(message: impl Into<String>) -> AppError {
    AppError::invalid_params(message)
}

/// A scanned wallet's legs, oldest first; a wallet never scanned is
/// not_found.
async fn scanned_legs(state: &AppState, address: &WalletAddress) -> Result<Vec<Leg>, AppError> {
    if !state.store().wallet_scanned(address.as_str()).await? {
        return Err(AppError::not_found(
            "this wallet has never been scanned: quote_wallet, scan_wallet, poll get_job, then read",
        ));
    }
    Ok(state
        .store()
        .wallet_legs(address.as_str())
        .await?
        .into_iter()
        .filter_map(Leg::from_row)
        .collect())
}

fn parse_address(text: &str) -> Result<WalletAddress, AppError> {
    WalletAddress::parse(text).map_err(|why| invalid(format!("address: {why}")))
}

/// Optional inclusive time bounds.
fn bounds(from: Option<&str>, to: Option<&str>) -> Result<(Option<i64>, Option<i64>), AppError> {
    let from = from
        .filter(|t| !t.trim().is_empty())
        .map(|t| parse_time(t, false))
        .transpose()
        .map_err(|why| invalid(format!("from: {why}")))?;
    let to = to
        .filter(|t| !t.trim().is_empty())
        .map(|t| parse_time(t, true))
        .transpose()
        .map_err(|why| invalid(format!("to: {why}")))?;
    if let (Some(f), Some(t)) = (from, to)
        && f > t
    {
        return Err(invalid("from is after to"));
    }
    Ok((from, to))
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
