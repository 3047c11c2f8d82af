//! The OIDC stand-in (`tests/support/oidc_standin.rs`) as a process, for
//! the end-to-end browser suite: `cargo run -p server --example
//! oidc_standin -- [PORT]` (or `OIDC_STANDIN_PORT`; 0 or nothing picks a
//! free port). Prints the issuer URL on the first line of stdout, then
//! serves until interrupted. The client id and secret are the stand-in's
//! defaults unless `OIDC_STANDIN_CLIENT_ID` / `OIDC_STANDIN_CLIENT_SECRET`
//! say otherwise. Test use only: its signing keys are public.

#[path = "../tests/support/oidc_standin.rs"]
mod oidc_standin;

use std::io::Write as _;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port = match std::env::args().nth(1) {
        Some(port) => port,
        None => std::env::var("OIDC_STANDIN_PORT").unwrap_or_else(|_| "0".to_owned()),
    };
    let port: u16 = port.parse().map_err(|e| format!("port {port:?}: {e}"))?;
    let mut options = oidc_standin::Options {
        port,
        ..oidc_standin::Options::default()
    };
    if let Ok(id) = std::env::var("OIDC_STANDIN_CLIENT_ID") {
        options.client_id = id;
    }
    if let Ok(secret) = std::env::var("OIDC_STANDIN_CLIENT_SECRET") {
        options.client_secret = secret;
    }
    let standin = oidc_standin::try_start(options).await?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", standin.issuer)?;
    stdout.flush()?;
    tokio::signal::ctrl_c().await?;
    Ok(())
}
