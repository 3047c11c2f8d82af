//! The replay of `ledger basis --jurisdiction J [--method M]` without the
//! server crate around it, for benchmarks that need a release build quickly:
//! `cargo run --release -p ledger-core --example basis_replay -- us fifo IN.csv > OUT.csv`
//! (docs/benchmarks.md). It does what `server/src/cli.rs` does: read the
//! taxpayer's CSV, assess it, write the CSV. `plain` instead of a
//! jurisdiction runs the single-pool replay `ledger basis` ran before
//! jurisdictions (read_events, replay, write_report), for comparison.
//! `ledger basis` streams ([`ledger_core::basis::stream`]); `BASIS_REPLAY=books`
//! in the environment runs the books' path it replaced (read_books,
//! assess_in, write_assessment: every row held), whose output is the same
//! byte for byte.

use std::{
    error::Error,
    io::{BufReader, BufWriter, Write},
};

use ledger_core::basis::{
    Method,
    books::UnlabelledTransfers,
    csv_io::{read_books, read_events, write_assessment, write_report},
    jurisdiction::{Jurisdiction, Taxpayer, Zone, assess_in},
    replay, stream,
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
    let zone = match jurisdiction {
        Jurisdiction::Us => Zone::Utc,
        other => other.zone(),
    };
    let taxpayer = Taxpayer {
        zone,
        ..Taxpayer::of(jurisdiction)
    };
    if std::env::var("BASIS_REPLAY").as_deref() != Ok("books") {
        // As `ledger basis` does: a 64 KiB read buffer, stdout unbuffered
        // here (the stream buffers its own output).
        let start = std::time::Instant::now();
        let file = BufReader::with_capacity(1 << 16, file.into_inner());
        let compact = stream::read(file)?;
        let read = start.elapsed();
        drop(out);
        let outcome =
            compact.assess_to(std::io::stdout().lock(), jurisdiction, &taxpayer, method)?;
        eprintln!(
            "{} rows, {} moves; read {:.2} s, replay and write {:.2} s (wall)",
            outcome.rows,
            outcome.moves,
            read.as_secs_f64(),
            (start.elapsed() - read).as_secs_f64()
        );
        return Ok(());
    }
    let books = read_books(file)?;
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
