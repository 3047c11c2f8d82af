//! The replay of `ledger basis --jurisdiction J [--method M]` without the
//! server crate around it, for benchmarks that need a release build quickly:
//! `cargo run --release -p ledger-core --example basis_replay -- us fifo IN.csv > OUT.csv`
//! (docs/benchmarks.md). It does what `server/src/cli.rs` does: read the
//! taxpayer's CSV, assess it, write the CSV.

use std::io::{BufReader, BufWriter, Write};

use ledger_core::basis::{
    Method,
    books::UnlabelledTransfers,
    csv_io::{read_books, write_assessment},
    jurisdiction::{Jurisdiction, Taxpayer, Zone, assess_in},
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [jurisdiction, method, input] = args.as_slice() else {
        eprintln!(
            "usage: basis_replay us|uk|ca|de|au|plain fifo|lifo|hifo|lofo|average|default IN.csv"
        );
        std::process::exit(2);
    };
    if jurisdiction == "plain" {
        // The single-pool replay `ledger basis` ran before jurisdictions
        // (read_events, replay, write_report), for comparison.
        let file = std::fs::File::open(input).expect("input");
        let events = ledger_core::basis::csv_io::read_events(BufReader::new(file)).expect("valid");
        let replay = ledger_core::basis::replay(&events, method.parse().expect("method"));
        let mut out = BufWriter::new(std::io::stdout().lock());
        ledger_core::basis::csv_io::write_report(&mut out, &replay).expect("write");
        out.flush().expect("flush");
        return;
    }
    let jurisdiction: Jurisdiction = jurisdiction.parse().expect("jurisdiction");
    let method = (method != "default").then(|| method.parse::<Method>().expect("method"));
    let file = std::fs::File::open(input).expect("input");
    let books = read_books(BufReader::new(file)).expect("valid input");
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
    )
    .expect("method allowed");
    let mut out = BufWriter::new(std::io::stdout().lock());
    write_assessment(&mut out, &assessment, &books.lines, zone).expect("write");
    out.flush().expect("flush");
    eprintln!(
        "{} rows, {} open",
        assessment.rows.len(),
        assessment.holdings.len()
    );
}
