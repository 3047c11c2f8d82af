//! The `get_report` tool: a thin adapter over `reports::get_report` that
//! answers each format the way a model reads it (SPEC T9): `json` as
//! `structuredContent` (the report object `GET /v1/reports` returns), the
//! CSV family as a text content item (with a small description of the file
//! as `structuredContent`), and a PDF, or anything over 256 KiB, as a
//! `resource_link` to `GET /v1/reports` with the same arguments. The link
//! carries the covering receipt when there is one (the settled payment's,
//! else the one presented), never a payment; an account's bearer reads it
//! otherwise.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use super::{
    inline::{self, INLINE_LIMIT},
    registry::{Annotations, Tier, ToolDef, ToolMeta, ToolOutput},
};
use crate::{
    error::AppError,
    payments::PaymentBlock,
    reports::{self, Format, GetReportArgs, Report},
    routes,
};

/// A CSV-family report, described (its text is the next content item).
#[derive(Serialize, JsonSchema)]
pub struct ReportFileView {
    /// csv, positions_csv, 8949, koinly or cointracker.
    pub format: String,
    /// The name `GET /v1/reports` downloads it as.
    pub filename: String,
    pub mime_type: String,
    pub bytes: u64,
    /// Data rows written.
    pub rows: u64,
    pub wallets: Vec<String>,
    /// The payment this call settled (or replayed), with its receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<PaymentBlock>,
}

/// A report served only from `GET /v1/reports` (a PDF, or over 256 KiB).
#[derive(Serialize, JsonSchema)]
pub struct ReportLinkView {
    /// result_linked.
    pub code: String,
    pub message: String,
    /// GET this with the covering receipt or the account's bearer.
    pub uri: String,
    pub mime_type: String,
    pub bytes: u64,
    pub filename: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<PaymentBlock>,
}

/// What `get_report` answers, for its output schema.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ReportOutput {
    Report(Box<Report>),
    File(ReportFileView),
    Linked(ReportLinkView),
}

pub fn get_report() -> ToolDef {
    ToolDef::custom::<GetReportArgs, ReportOutput, _, _>(
        ToolMeta {
            name: "get_report",
            title: "A report over wallets",
            description: "A report over one or more scanned wallets. format is json \
                (structuredContent holds the report), or a CSV family — csv (ledger), \
                positions_csv, 8949 (IRS Form 8949), koinly, cointracker — returned as text, or \
                as a resource link to GET /v1/reports when larger than 256 KiB or for pdf. \
                Optional from/to (RFC 3339 or YYYY-MM-DD), method (fifo|lifo|hifo|average), \
                exclude_spam. Every wallet is a paid cached read, paid for like get_ledger; one \
                receipt covers every wallet it was paid for.",
            tier: Tier::PaidCachedRead,
            annotations: Annotations::READ_OPEN_WORLD,
            rest: Some(routes::REPORTS),
        },
        |ctx, args: GetReportArgs, raw: Value| async move {
            let receipt_arg = args.pay.receipt.clone();
            let file =
                reports::get_report(&ctx.state.reads(), &ctx.principal, args, &ctx.presented)
                    .await?;
            answer(ctx.state.public_url(), file, &raw, receipt_arg.as_deref())
        },
    )
}

fn answer(
    public_url: &str,
    file: reports::ReportFile,
    raw: &Value,
    receipt_arg: Option<&str>,
) -> Result<ToolOutput, AppError> {
    let format = file.format;
    let filename = file.filename.clone();
    let wallets = file.wallets.clone();
    let rows = file.rows;
    let payment = file.payment.clone();
    let mut summary = match &file.body {
        reports::ReportBody::Json(report) => json_summary(report),
        reports::ReportBody::Bytes(_) => format!(
            "Report {filename} ({format}) over {} wallet(s), method {}: {rows} rows.",
            wallets.len(),
            raw["method"].as_str().unwrap_or("fifo"),
        ),
    };
    let bytes = file.into_bytes()?;
    let size = bytes.len();
    let (structured, link, text) = if format == Format::Pdf || size > INLINE_LIMIT {
        let receipt = payment.as_ref().map(|p| p.receipt.as_str()).or(receipt_arg);
        let uri = inline::rest_uri(public_url, routes::REPORTS.path, raw, receipt)
            .ok_or_else(|| AppError::internal("report link", "no URI"))?;
        let message = format!(
            "The report is {} of {}; GET {uri} downloads it (with the account's bearer, or \
             the receipt in the link).",
            inline::human_bytes(size),
            format.mime(),
        );
        summary.push(' ');
        summary.push_str(&message);
        let view = ReportLinkView {
            code: "result_linked".to_owned(),
            message,
            uri: uri.clone(),
            mime_type: format.mime().to_owned(),
            bytes: size as u64,
            filename: filename.clone(),
            payment: payment.clone(),
        };
        let link = json!({
            "type": "resource_link",
            "uri": uri,
            "name": filename,
            "mimeType": format.mime(),
            "size": size,
            "description": format!("The {format} report ({})", inline::human_bytes(size)),
        });
        (to_value(&view)?, Some(link), None)
    } else if format == Format::Json {
        let value: Value =
            serde_json::from_slice(&bytes).map_err(|e| AppError::internal("report json", e))?;
        (value, None, None)
    } else {
        let view = ReportFileView {
            format: format.as_str().to_owned(),
            filename,
            mime_type: format.mime().to_owned(),
            bytes: size as u64,
            rows,
            wallets,
            payment: payment.clone(),
        };
        let text = String::from_utf8(bytes).map_err(|e| AppError::internal("report text", e))?;
        (to_value(&view)?, None, Some(text))
    };
    if let Some(p) = payment.as_ref().filter(|p| p.settled) {
        summary.push_str(&format!(
            " Payment settled (transaction {}). Receipt {} can be reused: pass it as the receipt \
             argument of later tools instead of paying again.",
            p.transaction, p.receipt
        ));
    }
    Ok(ToolOutput {
        structured,
        summary,
        link,
        text,
    })
}

fn to_value<T: Serialize>(v: &T) -> Result<Value, AppError> {
    serde_json::to_value(v).map_err(|e| AppError::internal("report view", e))
}

fn json_summary(r: &Report) -> String {
    let t = &r.total;
    format!(
        "Report over {} wallet(s) ({}): realized gain {} USD (short term {}, long term {}) over \
         {} rows ({} incomplete); income {} USD; fees {} SOL; value {} USD at the start, {} USD \
         at the end; {} open positions.",
        r.wallets.len(),
        r.meta.method,
        t.realized.gain,
        t.realized.short_term_gain,
        t.realized.long_term_gain,
        t.realized.rows,
        t.realized.incomplete_rows,
        t.income.usd,
        t.fees.sol,
        t.value_start_usd,
        t.value_end_usd,
        t.open_positions.len(),
    )
}
