//! The built `x402pay` binary as an agent meets it: `-help` answers with the
//! usage and the one command that installs it, which the docs say too, and a
//! bad flag is a usage error (exit 2). Building this test also builds the
//! binary into the target directory, where the server's payment tests and
//! the local-chain tier run it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

/// The one command that installs x402pay alone (docs/x402pay.md).
const INSTALL: &str = "cargo install --locked --path server/x402pay";

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_x402pay"))
        .args(args)
        .env_remove("X402PAY_KEYFILE")
        .env_remove("X402PAY_BEARER")
        .env_remove("X402PAY_RPC_URL")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn help_names_both_commands_and_the_install_command() {
    for flag in ["-help", "--help", "-h"] {
        let (code, out, _) = run(&[flag]);
        assert_eq!(code, 0, "{flag}");
        assert!(out.contains("x402pay mcp-payment"), "{flag}: {out}");
        assert!(out.contains("x402pay mcp-call"), "{flag}: {out}");
        assert!(out.contains(INSTALL), "{flag}: {out}");
    }
}

#[test]
fn the_docs_give_the_same_install_command() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for doc in ["docs/x402pay.md", "README.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        assert!(text.contains(INSTALL), "{doc} says `{INSTALL}`");
    }
}

#[test]
fn an_unknown_flag_is_a_usage_error() {
    let (code, out, err) = run(&["mcp-call", "-surprise", "1"]);
    assert_eq!(code, 2);
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("usage:"), "{err}");
}
