//! The taxpayer's books over several wallets (filled in by the next commit).
