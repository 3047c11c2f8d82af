//! Value types every layer may use: money ([`Usd`]), currency conversion
//! ([`fx`]), time (parsing and writing it), and how they read to people
//! ([`format`]). They sit below the domain and the surfaces alike, so
//! `config` can price things and a REST edge can parse a bound without
//! importing the modules that act on them.

pub mod format;
pub mod fx;
pub mod kept;
pub mod money;
pub mod time;

pub use kept::KeptJson;
pub use money::Usd;
pub use time::{TimeBound, parse_time, rfc3339};
