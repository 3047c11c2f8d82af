//! `get_report` (SPEC R1): one report over up to twenty scanned wallets,
//! in the format a reader needs: the report object (`json`), the ledger
//! (`csv`), the open lots (`positions_csv`), IRS Form 8949 rows (`8949`),
//! the import templates of Koinly and CoinTracker, and a PDF.
//!
//! Every format is rendered from one [`book::Book`] per wallet: the
//! wallet's legs read as `get_positions` reads them, valued by the same
//! valuer and replayed by the same `basis` engine, so a figure in one
//! format cannot disagree with another or with `get_positions`. Each
//! wallet is a paid cached read through the paywall ([`authorize`]): a
//! receipt covers the wallet it was paid for, a payment the one wallet its
//! quote prices. Nothing here knows of HTTP or MCP: the surfaces hand in
//! parsed arguments and turn the [`ReportFile`] into a response, a tool
//! result or a download. docs/reports.md is the long form.

pub mod book;
pub mod csv_formats;
pub mod pdf;
pub mod summary;
pub mod tax_templates;
pub mod tokens;

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    accounts::{AccountId, Action, Principal},
    analytics::tax::{self, TaxArgs},
    basis::Method,
    error::AppError,
    params::MinUsd,
    payments::{self, PayArgs, PaymentBlock, Presented, Resource},
    reads::Reads,
    solana::WalletAddress,
    values::{TimeBound, time::optional_bound},
};

pub use book::{Book, Range};
pub use summary::Report;

/// The most wallets one report covers.
pub const MAX_WALLETS: usize = 20;

/// What a report is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Format {
    #[serde(rename = "json")]
    Json,
    #[serde(rename = "csv")]
    Csv,
    #[serde(rename = "positions_csv")]
    PositionsCsv,
    #[serde(rename = "8949")]
    Form8949,
    #[serde(rename = "koinly")]
    Koinly,
    #[serde(rename = "cointracker")]
    Cointracker,
    #[serde(rename = "pdf")]
    Pdf,
}

impl Format {
    pub const ALL: [Format; 7] = [
        Format::Json,
        Format::Csv,
        Format::PositionsCsv,
        Format::Form8949,
        Format::Koinly,
        Format::Cointracker,
        Format::Pdf,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Csv => "csv",
            Format::PositionsCsv => "positions_csv",
            Format::Form8949 => "8949",
            Format::Koinly => "koinly",
            Format::Cointracker => "cointracker",
            Format::Pdf => "pdf",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == text.trim())
    }

    /// The `Content-Type` the file is served with.
    pub fn mime(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Pdf => "application/pdf",
            _ => "text/csv; charset=utf-8",
        }
    }

    /// Whether the format writes the tax section (`jurisdiction`,
    /// `currency`, `tax_year`): the report object and the PDF.
    pub fn writes_tax_section(self) -> bool {
        matches!(self, Format::Json | Format::Pdf)
    }

    /// Whether the format is one of the CSV family (answered as text over MCP).
    pub fn is_csv(self) -> bool {
        !matches!(self, Format::Json | Format::Pdf)
    }

    fn extension(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Pdf => "pdf",
            _ => "csv",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The payment arguments of `get_report`: [`PayArgs`] in words that say a
/// payment covers one wallet and a receipt the wallets it was paid for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct ReportPayArgs {
    /// Base64 X-PAYMENT built for the payment_required challenge (x402
    /// exact scheme; one payment covers the one wallet its quote prices);
    /// name its quote in quote_id.
    #[serde(default)]
    pub payment: Option<String>,
    /// The quoteId of the challenge the payment was built for
    /// (structuredContent.x402.accepts[0].extra.quoteId).
    #[serde(default)]
    pub quote_id: Option<String>,
    /// Receipt token of the payment that covers reads of these wallets.
    #[serde(default)]
    pub receipt: Option<String>,
}

impl From<&ReportPayArgs> for PayArgs {
    fn from(p: &ReportPayArgs) -> Self {
        PayArgs {
            payment: p.payment.clone(),
            quote_id: p.quote_id.clone(),
            receipt: p.receipt.clone(),
        }
    }
}

/// The arguments of `get_report`; `GET /v1/reports` takes the same as
/// query parameters (`wallets` comma-separated).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GetReportArgs {
    /// Base58 public keys, at most 20.
    #[schemars(length(min = 1, max = 20))]
    pub wallets: Vec<WalletAddress>,
    /// json | csv | positions_csv | 8949 | koinly | cointracker | pdf.
    pub format: Format,
    /// Leave airdrop_spam out; default false.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub exclude_spam: Option<bool>,
    /// Inclusive lower bound on block time: RFC 3339 or YYYY-MM-DD.
    #[serde(default, deserialize_with = "optional_bound")]
    pub from: Option<TimeBound>,
    /// fifo | lifo | hifo | average; default fifo.
    #[serde(default, deserialize_with = "crate::params::optional_method")]
    #[schemars(with = "Option<crate::params::CostMethod>", extend("default" = "fifo"))]
    pub method: Option<Method>,
    #[serde(flatten)]
    pub pay: ReportPayArgs,
    /// Inclusive upper bound on block time: RFC 3339 or YYYY-MM-DD.
    #[serde(default, deserialize_with = "optional_bound")]
    pub to: Option<TimeBound>,
    #[serde(flatten)]
    pub tax: TaxArgs,
    /// 8949 only: disposals whose proceeds are under this many USD are
    /// combined into one row per asset and term (code M, "see attached
    /// statement"; each listed below as a statement row); default 1.00,
    /// 0 lists every disposal on its own row.
    #[serde(default)]
    #[schemars(extend("default" = 1.0))]
    pub dust_threshold: Option<MinUsd>,
}

/// What a report is made of, once its arguments are checked and its reads
/// allowed: the same for the tool, the REST route and the portal download.
#[derive(Clone, Debug)]
pub struct Spec {
    pub wallets: Vec<WalletAddress>,
    pub format: Format,
    pub method: Method,
    pub exclude_spam: bool,
    pub from: Option<TimeBound>,
    pub to: Option<TimeBound>,
    /// The tax section asked for, and whose labels say who the taxpayer
    /// is (the calling account's; none for an anonymous call).
    pub tax: Option<tax::TaxChoice>,
    pub taxpayer: Option<AccountId>,
    /// Form 8949: disposals with proceeds under this (USD) are combined
    /// per asset and term ([`csv_formats::DEFAULT_DUST_THRESHOLD`]).
    pub dust_threshold: rust_decimal::Decimal,
}

impl Spec {
    /// Check what no schema can: the count of wallets (also held by the
    /// schema), no wallet twice, the range in order.
    pub fn new(
        wallets: Vec<WalletAddress>,
        format: Format,
        method: Option<Method>,
        exclude_spam: Option<bool>,
        from: Option<TimeBound>,
        to: Option<TimeBound>,
    ) -> Result<Self, AppError> {
        if wallets.is_empty() {
            return Err(AppError::invalid_params(
                "wallets: name at least one wallet",
            ));
        }
        if wallets.len() > MAX_WALLETS {
            return Err(AppError::invalid_params(format!(
                "wallets: at most {MAX_WALLETS} wallets in one report ({} given)",
                wallets.len()
            )));
        }
        // A wallet named twice is reported once, where it was first named.
        let mut wallets = wallets;
        let mut seen = std::collections::HashSet::new();
        wallets.retain(|w| seen.insert(w.clone()));
        let (start, end) = crate::values::time::range(from.as_ref(), to.as_ref())
            .map_err(|why| AppError::invalid_params(format!("from/to: {why}")))?;
        if format == Format::Form8949
            && let (Some(start), Some(end)) = (start, end)
            && csv_formats::year_of(start) != csv_formats::year_of(end)
        {
            return Err(AppError::invalid_params(
                "from/to: Form 8949 covers one tax year; from and to must fall in the same \
                 calendar year (UTC)",
            ));
        }
        Ok(Self {
            wallets,
            format,
            method: method.unwrap_or_default(),
            exclude_spam: exclude_spam.unwrap_or(false),
            from,
            to,
            tax: None,
            taxpayer: None,
            dust_threshold: csv_formats::DEFAULT_DUST_THRESHOLD,
        })
    }

    /// With the Form 8949 dust threshold asked for (none: the default). A
    /// threshold with another format is refused rather than ignored.
    pub fn with_dust_threshold(mut self, threshold: Option<MinUsd>) -> Result<Self, AppError> {
        if let Some(threshold) = threshold {
            if self.format != Format::Form8949 {
                return Err(AppError::invalid_params(
                    "dust_threshold: applies to format 8949 only (it combines Form 8949's small \
                     disposals); leave it out for other formats",
                ));
            }
            self.dust_threshold = threshold.decimal();
        }
        Ok(self)
    }

    /// With the tax section `tax` for `taxpayer`'s books.
    pub fn with_tax(mut self, tax: Option<tax::TaxChoice>, taxpayer: Option<AccountId>) -> Self {
        self.tax = tax;
        self.taxpayer = taxpayer;
        self
    }

    /// The range in unix seconds, inclusive.
    pub fn range(&self) -> Range {
        Range {
            from: self.from.as_ref().map(TimeBound::start),
            to: self.to.as_ref().map(TimeBound::end),
        }
    }

    /// `ledger-<wallet or N-wallets>-<format>-<method>-<from>-<to>.<ext>`:
    /// only characters no browser or shell quotes.
    pub fn filename(&self) -> String {
        let who = match self.wallets.as_slice() {
            [one] => one.as_str().chars().take(8).collect::<String>(),
            many => format!("{}-wallets", many.len()),
        };
        let day = |b: Option<&TimeBound>, none: &str| {
            b.map(|b| {
                b.as_str()
                    .chars()
                    .take(10)
                    .filter(char::is_ascii_digit)
                    .collect()
            })
            .unwrap_or_else(|| none.to_owned())
        };
        format!(
            "ledger-{who}-{}-{}-{}-{}.{}",
            self.format.as_str().replace('_', "-"),
            self.method,
            day(self.from.as_ref(), "start"),
            day(self.to.as_ref(), "now"),
            self.format.extension()
        )
    }
}

/// A rendered report.
#[derive(Debug)]
pub struct ReportFile {
    pub format: Format,
    pub filename: String,
    pub body: ReportBody,
    /// The payment this call settled (or replayed), with its receipt.
    pub payment: Option<PaymentBlock>,
    pub wallets: Vec<String>,
    /// Data rows written (CSV family), legs read (json, pdf).
    pub rows: u64,
}

/// The report object (json) or a file's bytes.
#[derive(Debug)]
pub enum ReportBody {
    Json(Box<Report>),
    Bytes(Vec<u8>),
}

impl ReportFile {
    /// The bytes as served: the report object's JSON, or the file.
    pub fn into_bytes(self) -> Result<Vec<u8>, AppError> {
        match self.body {
            ReportBody::Json(report) => {
                serde_json::to_vec(&report).map_err(|e| AppError::internal("report json", e))
            }
            ReportBody::Bytes(bytes) => Ok(bytes),
        }
    }
}

/// `get_report` for the MCP tool and the REST route alike: check the
/// arguments, pass the paywall for every wallet, render.
pub async fn get_report(
    reads: &Reads<'_>,
    principal: &Principal,
    args: GetReportArgs,
    presented: &Presented,
) -> Result<ReportFile, AppError> {
    // The account's tax defaults ask for the section only where it is
    // written (json, pdf); a tax argument with another format is refused
    // below rather than ignored.
    let writes_tax = args.format.writes_tax_section();
    let settings = if writes_tax {
        tax::settings_of(reads.store(), principal.account()).await?
    } else {
        None
    };
    let tax = args.tax.choice(args.method, settings)?;
    if tax.is_some() && !writes_tax {
        return Err(AppError::invalid_params(
            "jurisdiction/currency/tax_year: the tax section is written in the json and pdf \
             formats only (the CSV formats carry no tax section); ask for format json or pdf",
        ));
    }
    let spec = Spec::new(
        args.wallets,
        args.format,
        args.method,
        args.exclude_spam,
        args.from,
        args.to,
    )?
    .with_tax(tax, principal.account().cloned())
    .with_dust_threshold(args.dust_threshold)?;
    let payment = authorize(
        reads,
        principal,
        &spec.wallets,
        &(&args.pay).into(),
        presented,
    )
    .await?;
    let mut file = render(reads, &spec).await?;
    if let ReportBody::Json(report) = &mut file.body {
        report.payment = payment.clone();
    }
    file.payment = payment;
    Ok(file)
}

/// Pass the paywall for every wallet of a report. Each wallet is covered as
/// `get_ledger` covers it (payments off, the account watching it, a receipt
/// for it); the one wallet the presented payment's quote prices is settled
/// last, once every other wallet is known to be covered, so a payment is
/// never taken for a report that is then refused. The first wallet nothing
/// covers is answered with its challenge (resource `/v1/reports`).
pub async fn authorize(
    reads: &Reads<'_>,
    principal: &Principal,
    wallets: &[WalletAddress],
    pay: &PayArgs,
    headers: &Presented,
) -> Result<Option<PaymentBlock>, AppError> {
    principal.permit(Action::ReadWallet)?;
    let presented = pay.presented(headers);
    let pw = &reads.paywall;
    let resource = Resource {
        path: crate::routes::REPORTS.path,
        tool: "get_report",
    };
    let paid = match &presented.payment {
        Some(payment) => payments::quoted_wallet(pw, payment, presented.quote_id.as_deref())
            .await?
            .and_then(|w| wallets.iter().find(|x| x.as_str() == w)),
        None => None,
    };
    let receipt_only = Presented {
        payment: None,
        quote_id: None,
        receipt: presented.receipt.clone(),
    };
    let mut block = None;
    for wallet in wallets {
        if Some(wallet) == paid {
            continue;
        }
        // A payment whose quote prices none of these wallets goes to the
        // first wallet that needs one, which refuses it with a challenge.
        let offered = if paid.is_none() {
            &presented
        } else {
            &receipt_only
        };
        if let Some(b) = payments::authorize_read(pw, principal, wallet, offered, resource).await? {
            block.get_or_insert(b);
        }
    }
    if let Some(wallet) = paid
        && let Some(b) =
            payments::authorize_read(pw, principal, wallet, &presented, resource).await?
    {
        block = Some(b);
    }
    Ok(block)
}

/// Render `spec` for readers already allowed: read and replay each wallet
/// once, then write the format.
pub async fn render(reads: &Reads<'_>, spec: &Spec) -> Result<ReportFile, AppError> {
    let range = spec.range();
    let now_s = reads.now_ms().div_euclid(1000);
    let mut books = Vec::with_capacity(spec.wallets.len());
    for wallet in &spec.wallets {
        let mut book =
            Book::read(reads, wallet, spec.method, spec.exclude_spam, range, now_s).await?;
        if spec.format == Format::Pdf {
            book.value_over_range(reads).await?;
        }
        books.push(book);
    }
    let ctx = summary::Context {
        generated_ms: reads.now_ms(),
        method: spec.method,
        exclude_spam: spec.exclude_spam,
        from: spec.from.as_ref().map(|b| b.as_str().to_owned()),
        to: spec.to.as_ref().map(|b| b.as_str().to_owned()),
        sol_usd: sol_spot(reads).await,
    };
    let (body, rows) = match spec.format {
        Format::Json => {
            let mut report = summary::report(&ctx, &books);
            report.tax = tax_section(reads, spec, &books).await?;
            let legs = books.iter().map(|b| b.legs_in_range().count() as u64).sum();
            (ReportBody::Json(Box::new(report)), legs)
        }
        Format::Csv => wrote(csv_formats::ledger(&books))?,
        Format::PositionsCsv => wrote(csv_formats::positions(&books))?,
        Format::Form8949 => wrote(csv_formats::form_8949(
            &books,
            range,
            now_s,
            spec.dust_threshold,
        ))?,
        Format::Koinly => wrote(tax_templates::koinly(&books))?,
        Format::Cointracker => wrote(tax_templates::cointracker(&books))?,
        Format::Pdf => {
            let mut report = summary::report(&ctx, &books);
            report.tax = tax_section(reads, spec, &books).await?;
            let legs = books.iter().map(|b| b.legs_in_range().count() as u64).sum();
            let bytes =
                pdf::render(&report, &books).map_err(|e| AppError::internal("report pdf", e))?;
            (ReportBody::Bytes(bytes), legs)
        }
    };
    Ok(ReportFile {
        format: spec.format,
        filename: spec.filename(),
        body,
        payment: None,
        wallets: spec.wallets.iter().map(|w| w.as_str().to_owned()).collect(),
        rows,
    })
}

/// A wallet's legs to a tax year's replay horizon, with their USD values.
type LongerLegs = (
    Vec<crate::analytics::Leg>,
    Vec<Option<rust_decimal::Decimal>>,
);

/// The tax section of `spec` over `books`, when asked for.
async fn tax_section(
    reads: &Reads<'_>,
    spec: &Spec,
    books: &[Book],
) -> Result<Option<tax::TaxSection>, AppError> {
    let Some(choice) = &spec.tax else {
        return Ok(None);
    };
    // One tax year is replayed to 30 days past its end even when the
    // report's `to` is earlier: a buy-back in those days changes the year's
    // matching (UK bed and breakfast, TCGA 1992 s.106A(5), CG51560 and
    // CRYPTO22255; Canada's superficial loss, ITA s.54). Only that year's
    // disposals are listed. The later legs are valued as the book's own.
    let horizon = choice
        .tax_year
        .and_then(|y| choice.jurisdiction.last_day(y))
        // 30 days, plus two for any zone's offset from UTC: a leg a day or
        // two beyond changes nothing, the core dates the 30 days itself.
        .and_then(|d| d.checked_add_days(chrono::Days::new(32)))
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|d| d.and_utc().timestamp());
    let mut extended: Vec<Option<LongerLegs>> = Vec::with_capacity(books.len());
    for (book, wallet) in books.iter().zip(&spec.wallets) {
        let Some(horizon) = horizon.filter(|h| book.range.to.is_some_and(|to| to < *h)) else {
            extended.push(None);
            continue;
        };
        let all = crate::analytics::scanned_legs(reads, wallet).await?;
        let legs: Vec<crate::analytics::Leg> = all
            .iter()
            .filter(|l| book::time_of(l) <= horizon)
            .filter(|l| {
                !(spec.exclude_spam
                    && l.operation_type == crate::ledger::OperationType::AirdropSpam.as_str())
            })
            .cloned()
            .collect();
        let values = legs
            .iter()
            .map(|l| {
                book.valuer
                    .value(&l.mint, l.amount, l.decimals, l.block_time)
                    .map(|v| v.abs())
            })
            .collect();
        extended.push(Some((legs, values)));
    }
    let wallets: Vec<tax::WalletLegs<'_>> = books
        .iter()
        .zip(&extended)
        .map(|(b, longer)| match longer {
            Some((legs, values)) => tax::WalletLegs {
                wallet: &b.address,
                legs,
                values,
            },
            None => tax::WalletLegs {
                wallet: &b.address,
                legs: &b.legs,
                values: &b.values,
            },
        })
        .collect();
    let events = tax::events_for(
        reads.store(),
        spec.taxpayer.as_ref(),
        &wallets,
        spec.exclude_spam,
    )
    .await?;
    let mut section =
        tax::section(reads.store(), reads.prices, reads.now_ms(), &events, choice).await?;
    section.undated = tax::UndatedView::of(&wallets);
    Ok(Some(section))
}

fn wrote(written: std::io::Result<(Vec<u8>, u64)>) -> Result<(ReportBody, u64), AppError> {
    let (bytes, rows) = written.map_err(|e| AppError::internal("report csv", e))?;
    Ok((ReportBody::Bytes(bytes), rows))
}

/// The SOL price `get_prices` answers now (`meta.sol_usd_at_generation`);
/// none when no source answers.
async fn sol_spot(reads: &Reads<'_>) -> Option<rust_decimal::Decimal> {
    let sol = crate::ledger::SOL.to_owned();
    reads
        .prices
        .spot(std::slice::from_ref(&sol), reads.now_ms())
        .await
        .get(&sol)
        .map(|s| s.usd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> WalletAddress {
        WalletAddress::parse(s).unwrap()
    }

    #[test]
    fn every_format_reads_back_from_its_name() {
        for f in Format::ALL {
            assert_eq!(Format::parse(f.as_str()), Some(f));
            let json = serde_json::to_value(f).unwrap();
            assert_eq!(json, f.as_str());
        }
        assert_eq!(Format::parse("xlsx"), None);
    }

    #[test]
    fn a_spec_refuses_too_many_wallets_naming_the_limit_and_reports_twins_once() {
        let many: Vec<WalletAddress> = (0..21)
            .map(|i| {
                let mut bytes = [1u8; 32];
                bytes[0] = i;
                w(&bs58::encode(bytes).into_string())
            })
            .collect();
        let err = Spec::new(many, Format::Csv, None, None, None, None).unwrap_err();
        assert!(err.to_string().contains("at most 20"), "{err}");
        let a = w("71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6");
        let spec = Spec::new(
            vec![a.clone(), a.clone()],
            Format::Csv,
            None,
            None,
            None,
            None,
        )
        .expect("a wallet named twice is reported once");
        assert_eq!(spec.wallets, vec![a]);
    }

    #[test]
    fn the_filename_says_what_the_file_is_in_safe_characters() {
        let spec = Spec::new(
            vec![w("71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6")],
            Format::Form8949,
            Some(Method::Hifo),
            None,
            TimeBound::parse("2025-01-01").unwrap(),
            TimeBound::parse("2025-12-31T23:59:59Z").unwrap(),
        )
        .unwrap();
        assert_eq!(
            spec.filename(),
            "ledger-71WDyyCs-8949-hifo-20250101-20251231.csv"
        );
    }
}
