//! What each token scope allows, in the words people read before they
//! grant it. One source: the OAuth consent page (the server hands these to
//! [`crate::account::ConsentPage`] for the scopes asked), the Keys page's
//! mint form, and docs/oauth.md (a server test holds the document to these
//! exact texts). The decision itself, which scopes each action needs, is
//! the server's `auth::Action` table; these words describe that table, and
//! the server's tests hold each refusal to it.
//!
//! Each text begins with the client guide's own words ("read your watched
//! wallets, reports and positions"; "start scans on your behalf") and says
//! after them what else the scope carries, so nothing a token can do is
//! left out of what the person approved.

/// The `read` scope.
pub const READ: &str = "read your watched wallets, reports and positions (ledgers too), your \
    payments, credit balance and share links; add and remove the wallets you watch, and label \
    any address (your labels name it in your reports)";

/// The `scan` scope: everything that spends money or publishes. Only a
/// scan needs `scan` alone; what also shows what `read` shows (research
/// results name your labels, a share link reads a wallet) needs both.
pub const SCAN: &str = "start scans on your behalf; with read as well, spend your research \
    credits (follow the money), buy more with its own payment, and publish or revoke share links";

/// What no scope allows.
pub const NEVER: &str = "It will never be able to change your sign-in methods, keys or billing.";
