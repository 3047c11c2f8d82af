//! What each portal page shows, as plain data: the server computes these
//! values (`server::portal`) and the pages render them. Nothing here
//! renders or fetches, so the server and every page can use them without
//! reaching a page, and no page imports another.

use serde::{Deserialize, Serialize};

/// Why an authorization request cannot be answered, and, when its client
/// and redirect URI checked out, a link back the person may click.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthErrorView {
    /// `error: error_description`.
    pub message: String,
    /// The client's redirect URI with `error`, `error_description`,
    /// `state` and `iss`; `None` when the client or URI is not trusted.
    pub return_to: Option<String>,
    /// Where `return_to` goes.
    pub destination: Option<Destination>,
}

/// Where an authorization's answer sends the browser, as a person reads
/// it. An app's private-use scheme (`com.example.app:`) is named as such,
/// never by what follows it: `com.evil.app://claude.ai/cb` goes to
/// whichever app claimed `com.evil.app`, not to claude.ai.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Destination {
    /// A web site, by its host (`claude.ai`).
    Site(String),
    /// An app on this device, by the scheme it claimed (`com.example.app`).
    App(String),
}

impl Default for Destination {
    fn default() -> Self {
        Destination::Site(String::new())
    }
}

impl Destination {
    /// The words: the site's host, or "an app on this device (scheme:)".
    pub fn words(&self) -> String {
        match self {
            Destination::Site(host) => host.clone(),
            Destination::App(scheme) => format!("an app on this device ({scheme}:)"),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInView {
    /// Why the last sign-in failed, in words.
    pub error: Option<String>,
    /// Where to go once signed in: a same-origin path the server checked.
    pub next: Option<String>,
}

/// The consent page of an OAuth authorization request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsentView {
    /// The held request the form answers (its parameters stay server-side).
    pub request_id: String,
    pub client_name: String,
    /// For a metadata-document client: the host its document comes from.
    pub client_from: Option<String>,
    pub redirect_uri: String,
    /// Where the browser is sent back to.
    pub destination: Destination,
    /// What the granted scopes let the client do, in words.
    pub abilities: Vec<String>,
    /// The scopes, `read scan`.
    pub scope: String,
    /// The signed-in account's label.
    pub identity: String,
    /// Its identities ("Solana wallet …", "Google account …").
    pub identities: Vec<String>,
}

/// A client connected through OAuth, on the Keys page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthClientRow {
    pub client_id: String,
    pub name: String,
    pub from: String,
    pub scopes: String,
    pub connected: String,
    pub last_used: Option<String>,
}

/// One line of OAuth activity, on the Keys page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthActivityRow {
    pub client: String,
    /// In words: "authorized", "refreshed a token", …
    pub what: String,
    pub at: String,
}

/// An error to show next to a form field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// The field's `name`.
    pub field: String,
    pub message: String,
}

/// A destructive action asked about before it is done: what it acts on,
/// in words, and one form that does it. Works with JavaScript off.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfirmView {
    /// The page's `<title>`: a fixed text per action, never a name someone
    /// chose (leptos_meta writes the title unescaped).
    pub title: String,
    /// The question, naming what is acted on: "Revoke token `laptop`
    /// (created 2 Dec 2026)?".
    pub question: String,
    /// What doing it means, in a sentence.
    pub consequence: String,
    /// Where the form POSTs.
    pub action: String,
    /// The form's hidden fields besides the CSRF token.
    pub fields: Vec<(String, String)>,
    /// The button, saying what it does: "Revoke laptop".
    pub button: String,
    /// Where "Cancel" goes back to.
    pub cancel: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeysView {
    /// What the last form did, in words.
    pub notice: Option<String>,
    pub tokens: Vec<TokenRow>,
    /// A token minted by this very request: its plaintext, shown once.
    pub minted: Option<MintedToken>,
    pub error: Option<FieldError>,
    /// What the mint form held when it was refused.
    pub form: MintForm,
    /// Clients connected through OAuth.
    pub oauth_clients: Vec<OAuthClientRow>,
    /// Recent activity on them, newest first.
    pub oauth_activity: Vec<OAuthActivityRow>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MintForm {
    pub kind: String,
    pub read: bool,
    pub scan: bool,
    pub label: String,
}

impl Default for MintForm {
    fn default() -> Self {
        Self {
            kind: "mcp".to_owned(),
            read: true,
            scan: false,
            label: String::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenRow {
    pub id: String,
    pub label: String,
    /// `mcp` or `api`.
    pub kind: String,
    pub scopes: String,
    pub prefix: String,
    pub created: String,
    /// The day it was created (`2 Dec 2026`), for naming it.
    pub created_day: String,
    pub last_used: Option<String>,
}

#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MintedToken {
    pub plaintext: String,
    pub kind: String,
    pub label: String,
}

/// Redacted: the plaintext shows only its display prefix (what the token
/// list shows anyway), so a logged view never carries a usable token.
impl std::fmt::Debug for MintedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let prefix: String = self.plaintext.chars().take(11).collect();
        f.debug_struct("MintedToken")
            .field("plaintext", &format_args!("{prefix}…"))
            .field("kind", &self.kind)
            .field("label", &self.label)
            .finish()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WalletsView {
    pub wallets: Vec<WalletRow>,
    pub error: Option<FieldError>,
    /// The add form's values when it was refused.
    pub address: String,
    pub label: String,
    /// What the last form did, in words.
    pub notice: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WalletRow {
    pub address: String,
    pub label: String,
    pub added: String,
    /// "completed 2026-12-01 12:00 UTC", "running", or "never scanned".
    pub last_scan: String,
    pub ledger_legs: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentRow {
    pub payment_id: String,
    pub quote_id: String,
    pub entitlement: String,
    pub wallet: String,
    /// USDC, in words (`0.05 USDC`).
    pub amount: String,
    pub status: String,
    pub transaction: String,
    pub date: String,
}

/// What the report view shows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportView {
    pub address: String,
    pub label: String,
    /// The report section, HTML rendered and escaped by the server (the
    /// share page's component).
    pub section_html: String,
    /// A share link just minted: its URL, shown this once.
    pub new_link: Option<String>,
    /// What the last form did, or why it was refused, in words.
    pub notice: Option<String>,
    pub error: Option<String>,
    /// The account's live links to this wallet.
    pub links: Vec<ShareLinkRow>,
    /// Live links the account may hold at once.
    pub limit: u32,
    /// The wallet has a ledger to report (it was scanned): without one
    /// the downloads are not offered (each would be a 404).
    pub scanned: bool,
    /// The tax summary and its choices (a scanned wallet only).
    pub tax: Option<Box<TaxView>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareLinkRow {
    pub id: String,
    /// The token's first characters.
    pub hint: String,
    pub range: String,
    pub denominate: String,
    pub created: String,
    pub expires: String,
}

/// One line of the credit ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovementRow {
    pub date: String,
    pub kind: String,
    /// Signed, in USD (`-0.005`).
    pub amount: String,
    /// The balance it left, in USD.
    pub balance_after: String,
    /// The idempotency key it was charged under (kept for the JSON reads;
    /// an internal id the page does not show).
    pub action_id: String,
    pub note: String,
}

/// The Credits page.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreditsPage {
    pub balance_usd: String,
    pub balance_atomic: String,
    pub follow_the_money: bool,
    /// (what, USD) per research call.
    pub prices: Vec<(String, String)>,
    /// Top-up amounts in USD.
    pub topup_usd: Vec<String>,
    pub movements: Vec<MovementRow>,
}

/// A node row under the graph (the graph itself needs JavaScript; the
/// table does not).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRow {
    pub address: String,
    pub kind: String,
    pub name: String,
    pub category: String,
    /// The registry citation: URL and date checked.
    pub citation: Option<(String, String)>,
    /// "12 legs, 34.5% of volume, first 2024-03-01, last 2024-04-01".
    pub signals: String,
}

/// An edge row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeRow {
    pub source: String,
    pub target: String,
    pub mint: String,
    pub amount: String,
    pub usd: String,
    pub legs: u32,
}

/// The graph page.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphPage {
    pub address: String,
    pub follow_the_money: bool,
    pub balance_usd: String,
    pub ledger_price_usd: String,
    pub live_price_usd: String,
    pub cached_live_price_usd: String,
    /// A fresh idempotency key for the next expansion (resubmitting the
    /// same form is not charged twice).
    pub action_id: String,
    /// The node the last expansion was of, when there was one.
    pub expanded: Option<String>,
    /// The last expansion's outcome in words ("cost 0.005 USD, balance …").
    pub outcome: Option<String>,
    pub error: Option<String>,
    pub hub: Option<String>,
    /// The ECharts option (JSON, built with charming).
    pub option_json: String,
    pub nodes: Vec<NodeRow>,
    pub edges: Vec<EdgeRow>,
}

/// What a scan of a watched wallet would cost, asked before it starts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanOffer {
    pub address: String,
    /// The label, or the address shortened.
    pub name: String,
    /// The quote the form starts; none when the portal cannot start it
    /// (the scan is paid and the portal takes no payment).
    pub quote_id: Option<String>,
    /// "Free: payments are off on this service." or "0.50 USD".
    pub price: String,
    /// "A full scan of about 1,234 transactions (tier small)."
    pub what: String,
    /// How the scan is paid (from credits), or how to pay when the
    /// portal cannot start it.
    pub paid_note: Option<String>,
    /// Why the last attempt did not start.
    pub error: Option<String>,
    /// The start button's words: "Start the scan" (free) or "Scan now
    /// (uses 0.25 USD of credits)".
    pub button: String,
    /// The credits do not cover the scan: link to the Credits page.
    pub buy_credits: bool,
}

/// Where a scan is, as the page and its JSON twin show it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScanState {
    #[default]
    Running,
    /// Completed, or partial (some transactions missing).
    Done,
    /// Failed or cancelled: the reason is in `error`.
    Failed,
}

/// A scan's progress, from the job's own counters (`get_job`'s fields).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanProgress {
    pub job_id: String,
    pub address: String,
    pub name: String,
    pub state: ScanState,
    /// Transactions read so far (fetched and missing).
    pub done: i64,
    /// Transactions listed so far (the bar's end).
    pub total: i64,
    /// "Reading transactions: 1,350 of 4,200." in words.
    pub summary: String,
    /// Why it failed, in words.
    pub error: Option<String>,
}

/// One option of a select: the value a form sends and what a person reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    pub value: String,
    pub label: String,
}

/// The account settings page (`/settings`): the defaults of the report
/// view and the tax section, and the locale numbers are written in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsView {
    /// The values in effect (or as sent, when the form was refused).
    pub jurisdiction: String,
    /// Empty: the jurisdiction's own.
    pub method: String,
    /// Empty: the jurisdiction's own.
    pub currency: String,
    pub unlabelled: String,
    /// Empty: the browser's.
    pub locale: String,
    pub jurisdictions: Vec<Choice>,
    pub methods: Vec<Choice>,
    pub currencies: Vec<Choice>,
    pub unlabelled_choices: Vec<Choice>,
    pub locales: Vec<Choice>,
    /// Which methods and currencies each jurisdiction accepts, in words.
    pub rules: Vec<String>,
    /// The locale the browser's Accept-Language gives.
    pub browser_locale: String,
    /// Whether the account has saved settings (else these are defaults).
    pub saved: bool,
    pub notice: Option<String>,
    pub error: Option<FieldError>,
}

/// The tax part of the report view: the choices and one jurisdiction's
/// per-tax-year summary, every amount already written in the reader's
/// locale and the chosen currency.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxView {
    pub jurisdiction: String,
    /// Empty: the jurisdiction's own.
    pub method: String,
    pub currency: String,
    /// Empty: every year.
    pub tax_year: String,
    pub jurisdictions: Vec<Choice>,
    pub methods: Vec<Choice>,
    pub currencies: Vec<Choice>,
    pub tax_years: Vec<Choice>,
    /// Which methods and currencies each jurisdiction accepts, in words.
    pub rules: Vec<String>,
    /// Why the choices were refused, in words (then no summary).
    pub error: Option<String>,
    /// "United Kingdom: share matching (same day, 30 days, Section 104), GBP".
    pub heading: String,
    /// Where the choices came from ("your settings" or "this page").
    pub source: String,
    pub years: Vec<TaxYearView>,
    pub rows: Vec<TaxRowLine>,
    /// Unlabelled transfers by counterparty, each with a label form.
    pub unlabelled: Vec<UnlabelledLine>,
    pub label_categories: Vec<Choice>,
    /// The page's own query (`jurisdiction=uk&...`), for the label form's
    /// way back and the download form.
    pub query: String,
}

/// One tax year's figures in the jurisdiction's terms.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxYearView {
    pub tax_year: String,
    /// (term as the return names it, amount written).
    pub lines: Vec<(String, String)>,
    /// Present when unlabelled transfers make the year not ready to file.
    pub warning: Option<String>,
}

/// One disposal with the rule that matched it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxRowLine {
    pub tax_year: String,
    pub asset: String,
    pub quantity: String,
    pub acquired: String,
    pub disposed: String,
    pub proceeds: String,
    pub cost: String,
    pub gain: String,
    /// The rule in words (`Section 104 pool`, `held over a year`).
    pub rule: String,
}

/// Transfers with one counterparty that no label names.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnlabelledLine {
    pub address: String,
    /// "2 sent: 1.5 SOL (300.00 USD)".
    pub totals: String,
}
