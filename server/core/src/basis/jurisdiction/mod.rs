//! Jurisdictions (filled in by the next commit).
