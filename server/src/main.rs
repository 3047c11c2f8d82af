//! The `ledger` binary: see `ledger --help`.

fn main() -> std::process::ExitCode {
    server::cli::main()
}
