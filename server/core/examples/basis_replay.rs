//! The replay of `ledger basis --jurisdiction J [--method M]` without the
//! server crate around it, for benchmarks that need a release build quickly:
//! `cargo run --release -p ledger-core --example basis_replay -- us fifo IN.csv > OUT.csv`
//! (docs/benchmarks.md). It does what `server/src/cli.rs` does: read the
//! taxpayer's CSV, assess it, write the CSV. `plain` instead of a
//! jurisdiction runs the single-pool replay `ledger basis` ran before
//! jurisdictions (read_events, replay, write_report), for comparison.

use std::{
    error::Error,
    io::{BufReader, BufWriter, Write},
};

use ledger_core::basis::{
    Method,
    books::UnlabelledTransfers,
    csv_io::{read_books, read_events, write_assessment, write_report},
    jurisdiction::{Jurisdiction, Taxpayer, Zone, assess_in},
    replay,
};

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [jurisdiction, method, input] = args.as_slice() else {
        return Err(
            "usage: basis_replay us|uk|ca|de|au|plain fifo|lifo|hifo|lofo|average|default IN.csv"
                .into(),
        );
    };
    let method = (method != "default")
        .then(|| method.parse::<Method>())
        .transpose()?;
    let file = BufReader::new(std::fs::File::open(input)?);
    let mut out = BufWriter::new(std::io::stdout().lock());
    if jurisdiction == "plain" {
        let events = read_events(file)?;
        let replay = replay(&events, method.unwrap_or_default());
        write_report(&mut out, &replay)?;
        out.flush()?;
        return Ok(());
    }
    let jurisdiction: Jurisdiction = jurisdiction.parse()?;
    let books = read_books(file)?;
    let zone = match jurisdiction {
        Jurisdiction::Us => Zone::Utc,
        other => other.zone(),
    };
    let taxpayer = Taxpayer {
        zone,
        ..Taxpayer::of(jurisdiction)
    };
    let assessment = assess_in(
        jurisdiction,
        &taxpayer,
        &books.events,
        method,
        UnlabelledTransfers::default(),
    )?;
    write_assessment(&mut out, &assessment, &books.lines, zone)?;
    out.flush()?;
    eprintln!(
        "{} rows, {} open",
        assessment.rows.len(),
        assessment.holdings.len()
    );
    Ok(())
}
