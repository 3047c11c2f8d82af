//! Which scopes each thing a token may do needs: the one table every scope
//! check reads ([`Action::needs`]), so a tool and its REST twin, and every
//! surface added later, ask the same question and get the same answer.
//!
//! The rule behind the table is what the person approved (the consent
//! page and the Keys page say it in `app::scopes`' words): `read` reads
//! and keeps the watchlist; `scan` spends money or publishes. What spends
//! or publishes *and* shows what `read` shows needs both: a research result
//! names the account's own labels, a share link reads a wallet, a top-up
//! answers the account's balance. So a read-only grant never moves a
//! credit or mints a public link, and a scan-only grant never reads more
//! than a job's status.
//!
//! Free tools with no account data (`ping`, `quote_wallet`, the prices,
//! `get_job`, which its own account, receipt or admin may read) need no
//! scope and have no entry here.

use super::Scope;

/// Something a token asks to do that its scopes decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Read a wallet (ledger, positions, value history, flows, reports),
    /// owned or paid for per call.
    ReadWallet,
    /// Read the account's own records: its watchlist, payments, credit
    /// balance and movements, and its share links (listed without tokens).
    ReadAccount,
    /// Add, remove or label a watched wallet, or label an address.
    KeepWatchlist,
    /// Start a paid scan (`scan_wallet`, `POST /v1/scans`).
    StartScan,
    /// Spend research credits (`expand_graph`, `find_first_funder`).
    SpendCredits,
    /// Buy research credits (`POST /v1/credits`).
    BuyCredits,
    /// Mint a public share link (`create_snapshot`, `POST /v1/snapshots`).
    PublishLink,
    /// Revoke a share link (`revoke_snapshot`, `DELETE /v1/snapshots/…`).
    RevokeLink,
}

impl Action {
    /// Every action, for the tests that hold the table to the texts.
    pub const ALL: [Action; 8] = [
        Action::ReadWallet,
        Action::ReadAccount,
        Action::KeepWatchlist,
        Action::StartScan,
        Action::SpendCredits,
        Action::BuyCredits,
        Action::PublishLink,
        Action::RevokeLink,
    ];

    /// The scopes a token must hold, every one of them.
    pub fn needs(self) -> &'static [Scope] {
        match self {
            Action::ReadWallet | Action::ReadAccount | Action::KeepWatchlist => &[Scope::Read],
            Action::StartScan => &[Scope::Scan],
            Action::SpendCredits
            | Action::BuyCredits
            | Action::PublishLink
            | Action::RevokeLink => &[Scope::Read, Scope::Scan],
        }
    }

    /// What the refusal says the token was asked to do.
    pub fn words(self) -> &'static str {
        match self {
            Action::ReadWallet => "reading a wallet",
            Action::ReadAccount => "reading your account's records",
            Action::KeepWatchlist => "changing the watchlist or labels",
            Action::StartScan => "starting a scan",
            Action::SpendCredits => "spending research credits",
            Action::BuyCredits => "buying research credits",
            Action::PublishLink => "publishing a share link",
            Action::RevokeLink => "revoking a share link",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounts::Scopes;

    fn allowed(scopes: &str) -> Vec<Action> {
        let scopes = Scopes::parse(scopes).unwrap();
        Action::ALL
            .into_iter()
            .filter(|a| a.needs().iter().all(|s| scopes.allows(*s)))
            .collect()
    }

    /// The finding, as a table: a read-only grant neither spends
    /// nor publishes.
    #[test]
    fn a_read_grant_neither_spends_nor_publishes() {
        assert_eq!(
            allowed("read"),
            [
                Action::ReadWallet,
                Action::ReadAccount,
                Action::KeepWatchlist
            ]
        );
    }

    #[test]
    fn a_scan_grant_alone_only_starts_scans() {
        assert_eq!(allowed("scan"), [Action::StartScan]);
    }

    #[test]
    fn both_scopes_allow_everything() {
        assert_eq!(allowed("read,scan"), Action::ALL);
    }

    /// `set_address_label` (under `read`) labels any address, watched or
    /// not: the words must not say it labels only the watched wallets,
    /// and must still begin with the guide's consent words.
    #[test]
    fn the_read_words_say_labels_name_any_address_not_only_watched_wallets() {
        let read = Scope::Read.words();
        assert!(read.starts_with("read your watched wallets, reports and positions"));
        assert!(read.contains("label any address"), "{read}");
        assert!(!read.contains("label the wallets you watch"), "{read}");
    }

    /// The words people approve name everything the table lets each scope
    /// do (`app::scopes`): a change to one must be a change to the other.
    #[test]
    fn the_scope_words_name_what_the_table_allows() {
        let read = Scope::Read.words();
        for part in [
            "read your watched wallets, reports and positions",
            "ledgers",
            "payments",
            "credit balance",
            "share links",
            "add and remove the wallets you watch",
            "label any address",
        ] {
            assert!(read.contains(part), "read: {part}");
        }
        let scan = Scope::Scan.words();
        for part in [
            "start scans on your behalf",
            "with read as well",
            "spend your research credits",
            "buy more",
            "publish or revoke share links",
        ] {
            assert!(scan.contains(part), "scan: {part}");
        }
        assert!(!read.contains("spend") && !read.contains("publish") && !read.contains("scan"));
    }
}
