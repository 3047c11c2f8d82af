//! The operator's account and token commands, run as the built `ledger`
//! binary against a fresh database: create an account, mint a token whose
//! plaintext resolves, list it, revoke it by prefix or by the id `mint`
//! printed, and it resolves no more.

use std::process::{Command, Output};

use server::{accounts, config::DatabaseConfig, store::Store};

const BIN: &str = env!("CARGO_BIN_EXE_ledger");

fn ledger(dir: &std::path::Path, database_url: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(dir)
        .env_clear()
        .env("DATABASE_URL", database_url)
        .args(args)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn now_ms() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

#[tokio::test]
async fn an_operator_creates_an_account_mints_a_token_and_revokes_it_by_prefix() {
    let (database_url, _database) = crate::helpers::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();

    let created = ledger(
        dir.path(),
        &database_url,
        &["accounts", "create", "--label", "ops"],
    );
    assert!(created.status.success(), "{}", stderr(&created));
    let account = stdout(&created).trim().to_owned();
    assert!(account.starts_with("acct_"), "{account:?}");
    assert_eq!(stdout(&created).lines().count(), 1);

    let minted = ledger(
        dir.path(),
        &database_url,
        &[
            "tokens",
            "mint",
            "--account",
            &account,
            "--kind",
            "mcp",
            "--scopes",
            "read,scan",
            "--label",
            "laptop",
        ],
    );
    assert!(minted.status.success(), "{}", stderr(&minted));
    // The plaintext and nothing else on stdout; the details on stderr.
    let out = stdout(&minted);
    assert_eq!(out.lines().count(), 1, "{out:?}");
    let plaintext = out.trim().to_owned();
    assert!(plaintext.starts_with("lm_"), "{plaintext:?}");
    assert!(!stderr(&minted).contains(&plaintext));
    assert!(stderr(&minted).contains(&account));

    let store = Store::open(&database_url, &DatabaseConfig::default())
        .await
        .unwrap();
    let credential = accounts::resolve(&store, now_ms(), &plaintext)
        .await
        .unwrap()
        .expect("the minted token resolves");
    assert_eq!(credential.account_id.as_str(), account);
    assert_eq!(credential.scopes.to_string(), "read,scan");

    let prefix = &plaintext[..11];
    let revoked = ledger(dir.path(), &database_url, &["tokens", "revoke", prefix]);
    assert!(revoked.status.success(), "{}", stderr(&revoked));
    assert_eq!(stdout(&revoked).trim(), credential.token_id.as_str());
    assert_eq!(
        accounts::resolve(&store, now_ms(), &plaintext)
            .await
            .unwrap(),
        None,
        "a revoked token no longer resolves"
    );

    // Revoking it again finds no live token: a refusal, not a success.
    let again = ledger(dir.path(), &database_url, &["tokens", "revoke", prefix]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("no live token"),
        "{}",
        stderr(&again)
    );
    store.close().await;
}

#[tokio::test]
async fn the_token_commands_refuse_bad_input_with_exit_2_and_nothing_on_stdout() {
    let (database_url, _database) = crate::helpers::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let created = ledger(dir.path(), &database_url, &["accounts", "create"]);
    let account = stdout(&created).trim().to_owned();
    for (args, says) in [
        (
            vec![
                "tokens",
                "mint",
                "--account",
                &account,
                "--kind",
                "admin",
                "--scopes",
                "read",
            ],
            "kind: must be mcp or api",
        ),
        (
            vec![
                "tokens",
                "mint",
                "--account",
                &account,
                "--kind",
                "api",
                "--scopes",
                "write",
            ],
            "scopes: unknown scope",
        ),
        (
            vec![
                "tokens",
                "mint",
                "--account",
                "acct_x",
                "--kind",
                "api",
                "--scopes",
                "read",
            ],
            "account: an account id is acct_",
        ),
        (vec!["tokens", "revoke", "lm_"], "prefix: lm_ or lk_"),
        (
            vec!["tokens", "revoke", "tok_nope"],
            "token_id: a token id is tok_",
        ),
        (
            vec!["tokens", "revoke", "3fQ9x2Ab"],
            "token: a token id (tok_",
        ),
    ] {
        let output = ledger(dir.path(), &database_url, &args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(says),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty(), "{args:?}");
    }
}

/// Create an account and mint an MCP token for it with the CLI: the
/// account id, the plaintext, and the token id `mint` names on stderr.
fn account_with_token(dir: &std::path::Path, database_url: &str) -> (String, String, String) {
    let created = ledger(dir, database_url, &["accounts", "create"]);
    assert!(created.status.success(), "{}", stderr(&created));
    let account = stdout(&created).trim().to_owned();
    let minted = ledger(
        dir,
        database_url,
        &[
            "tokens",
            "mint",
            "--account",
            &account,
            "--kind",
            "mcp",
            "--scopes",
            "read",
            "--label",
            "laptop",
        ],
    );
    assert!(minted.status.success(), "{}", stderr(&minted));
    let plaintext = stdout(&minted).trim().to_owned();
    let said = stderr(&minted);
    let at = said.find("tok_").expect("mint names the token id");
    let token_id: String = said[at..]
        .chars()
        .take_while(char::is_ascii_alphanumeric_or_underscore)
        .collect();
    assert_eq!(token_id.len(), "tok_".len() + 26, "{said}");
    (account, plaintext, token_id)
}

trait IdChar {
    fn is_ascii_alphanumeric_or_underscore(&self) -> bool;
}

impl IdChar for char {
    fn is_ascii_alphanumeric_or_underscore(&self) -> bool {
        self.is_ascii_alphanumeric() || *self == '_'
    }
}

#[tokio::test]
async fn the_token_id_mint_prints_is_what_revoke_takes() {
    let (database_url, _database) = crate::helpers::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let (_, plaintext, token_id) = account_with_token(dir.path(), &database_url);
    let store = Store::open(&database_url, &DatabaseConfig::default())
        .await
        .unwrap();
    assert!(
        accounts::resolve(&store, now_ms(), &plaintext)
            .await
            .unwrap()
            .is_some()
    );

    let revoked = ledger(dir.path(), &database_url, &["tokens", "revoke", &token_id]);
    assert!(revoked.status.success(), "{}", stderr(&revoked));
    assert_eq!(stdout(&revoked).trim(), token_id);
    assert_eq!(
        accounts::resolve(&store, now_ms(), &plaintext)
            .await
            .unwrap(),
        None,
        "revoked by its id, the token no longer resolves"
    );

    // The same id again names no live token: exit 1, nothing on stdout.
    let again = ledger(dir.path(), &database_url, &["tokens", "revoke", &token_id]);
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
    assert!(
        stderr(&again).contains(&format!("no live token has the id {token_id}")),
        "{}",
        stderr(&again)
    );
    assert!(stdout(&again).is_empty());
    store.close().await;
}

#[tokio::test]
async fn an_unknown_token_id_is_refused_with_exit_1() {
    let (database_url, _database) = crate::helpers::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let (_, plaintext, _) = account_with_token(dir.path(), &database_url);
    let output = ledger(
        dir.path(),
        &database_url,
        &["tokens", "revoke", "tok_01J9X4A7M3ABCDEFGHJKMNPQRS"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("no live token has the id tok_01J9X4A7M3ABCDEFGHJKMNPQRS"));
    assert!(stdout(&output).is_empty());
    // Nothing else was revoked.
    let store = Store::open(&database_url, &DatabaseConfig::default())
        .await
        .unwrap();
    assert!(
        accounts::resolve(&store, now_ms(), &plaintext)
            .await
            .unwrap()
            .is_some()
    );
    store.close().await;
}

#[tokio::test]
async fn tokens_list_prints_the_live_tokens_that_revoke_takes() {
    let (database_url, _database) = crate::helpers::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let (account, plaintext, token_id) = account_with_token(dir.path(), &database_url);

    let listed = ledger(
        dir.path(),
        &database_url,
        &["tokens", "list", "--account", &account],
    );
    assert!(listed.status.success(), "{}", stderr(&listed));
    let out = stdout(&listed);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out:?}");
    let fields: Vec<&str> = lines[0].split('\t').collect();
    assert_eq!(fields.len(), 7, "{fields:?}");
    assert_eq!(fields[0], token_id);
    assert_eq!(fields[1], &plaintext[..11], "the display prefix");
    assert_eq!(&fields[2..4], ["mcp", "read"]);
    assert!(
        fields[4].ends_with('Z'),
        "created as RFC 3339: {}",
        fields[4]
    );
    assert_eq!(fields[5], "-", "never used");
    assert_eq!(fields[6], "laptop");
    assert!(!out.contains(&plaintext), "never the plaintext");

    // What the list shows, revoke takes: the prefix column.
    let revoked = ledger(dir.path(), &database_url, &["tokens", "revoke", fields[1]]);
    assert!(revoked.status.success(), "{}", stderr(&revoked));
    let after = ledger(
        dir.path(),
        &database_url,
        &["tokens", "list", "--account", &account],
    );
    assert!(after.status.success(), "{}", stderr(&after));
    assert!(stdout(&after).is_empty(), "a revoked token is not live");
    assert!(
        stderr(&after).contains("0 live tokens"),
        "{}",
        stderr(&after)
    );
}

#[tokio::test]
async fn tokens_list_refuses_a_bad_or_unknown_account() {
    let (database_url, _database) = crate::helpers::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let bad = ledger(
        dir.path(),
        &database_url,
        &["tokens", "list", "--account", "acct_x"],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("account: an account id is acct_"));
    let unknown = ledger(
        dir.path(),
        &database_url,
        &[
            "tokens",
            "list",
            "--account",
            "acct_01J9X4A7M3ABCDEFGHJKMNPQRS",
        ],
    );
    assert_eq!(unknown.status.code(), Some(1), "{}", stderr(&unknown));
    assert!(stderr(&unknown).contains("no account acct_01J9X4A7M3ABCDEFGHJKMNPQRS"));
    assert!(stdout(&bad).is_empty() && stdout(&unknown).is_empty());
}

#[test]
fn the_revoke_help_names_both_forms_and_only_commands_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    let help = ledger(
        dir.path(),
        "sqlite::memory:",
        &["tokens", "revoke", "--help"],
    );
    assert!(help.status.success(), "{}", stderr(&help));
    let text = stdout(&help);
    assert!(text.contains("tok_"), "{text}");
    assert!(text.contains("lm_"), "{text}");
    // Every `ledger tokens …` command the help names answers its own --help.
    let mut named: Vec<&str> = text
        .match_indices("ledger tokens ")
        .map(|(at, _)| {
            text[at + "ledger tokens ".len()..]
                .split(|c: char| !c.is_ascii_alphabetic())
                .next()
                .unwrap()
        })
        .collect();
    named.sort_unstable();
    named.dedup();
    // Its own usage line, and the two commands that print what it takes.
    assert_eq!(named, ["list", "mint", "revoke"], "{text}");
    for command in named {
        let sub = ledger(
            dir.path(),
            "sqlite::memory:",
            &["tokens", command, "--help"],
        );
        assert!(
            sub.status.success(),
            "ledger tokens {command}: {}",
            stderr(&sub)
        );
    }
}

#[tokio::test]
async fn minting_for_an_unknown_account_exits_1() {
    let (database_url, _database) = crate::helpers::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let output = ledger(
        dir.path(),
        &database_url,
        &[
            "tokens",
            "mint",
            "--account",
            "acct_01J9X4A7M3ABCDEFGHJKMNPQRS",
            "--kind",
            "mcp",
            "--scopes",
            "read",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("no account acct_01J9X4A7M3ABCDEFGHJKMNPQRS"));
    assert!(stdout(&output).is_empty());
}

/// A grant above the most one grant may be is refused (exit 2, the rule in
/// words, nothing on stdout) and credits nothing. The amount here once
/// saturated the balance at i64::MAX, after which every grant failed with
/// an internal error: the next grant must still work.
#[tokio::test]
async fn a_grant_above_the_maximum_is_refused_with_exit_2_and_the_next_one_works() {
    let (database_url, _database) = crate::helpers::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let created = ledger(dir.path(), &database_url, &["accounts", "create"]);
    assert!(created.status.success(), "{}", stderr(&created));
    let account = stdout(&created).trim().to_owned();
    for usd in ["9999999999999", "10000.000001"] {
        let refused = ledger(
            dir.path(),
            &database_url,
            &["credits", "grant", "--account", &account, "--usd", usd],
        );
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{usd}: {}",
            stderr(&refused)
        );
        assert!(stdout(&refused).is_empty());
        assert!(
            stderr(&refused).contains("a grant is at most 10000.00 USD"),
            "{usd}: {}",
            stderr(&refused)
        );
    }
    let granted = ledger(
        dir.path(),
        &database_url,
        &["credits", "grant", "--account", &account, "--usd", "10000"],
    );
    assert!(granted.status.success(), "{}", stderr(&granted));
    assert_eq!(stdout(&granted).trim(), "10000000000");
}

#[tokio::test]
async fn an_operator_grants_credits_and_switches_follow_the_money_on_and_off() {
    let (database_url, _database) = crate::helpers::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let created = ledger(dir.path(), &database_url, &["accounts", "create"]);
    assert!(created.status.success(), "{}", stderr(&created));
    let account = stdout(&created).trim().to_owned();

    let granted = ledger(
        dir.path(),
        &database_url,
        &["credits", "grant", "--account", &account, "--usd", "2.5"],
    );
    assert!(granted.status.success(), "{}", stderr(&granted));
    assert_eq!(
        stdout(&granted).trim(),
        "2500000",
        "the balance in atomic USDC"
    );
    let shown = ledger(
        dir.path(),
        &database_url,
        &["credits", "show", "--account", &account],
    );
    let shown = stdout(&shown);
    let mut lines = shown.lines();
    assert_eq!(lines.next(), Some("2500000"));
    assert!(
        lines
            .next()
            .unwrap()
            .contains("\tgrant\t2500000\t2500000\t-\toperator grant")
    );

    // Refusals: a bad amount, a bad feature, a bad state, no such account.
    for (args, code) in [
        (
            vec![
                "credits",
                "grant",
                "--account",
                account.as_str(),
                "--usd",
                "-1",
            ],
            2,
        ),
        (
            vec![
                "credits",
                "grant",
                "--account",
                account.as_str(),
                "--usd",
                "0",
            ],
            2,
        ),
        (
            vec![
                "accounts",
                "feature",
                "--account",
                account.as_str(),
                "scams",
                "on",
            ],
            2,
        ),
        (
            vec![
                "accounts",
                "feature",
                "--account",
                account.as_str(),
                "follow_the_money",
                "yes",
            ],
            2,
        ),
        (
            vec![
                "credits",
                "grant",
                "--account",
                "acct_01J9X4A7M3ABCDEFGHJKMNPQRS",
                "--usd",
                "1",
            ],
            1,
        ),
    ] {
        let out = ledger(dir.path(), &database_url, &args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
    }

    let store = Store::open(&database_url, &DatabaseConfig::default())
        .await
        .unwrap();
    for (state, on) in [("on", true), ("off", false)] {
        let out = ledger(
            dir.path(),
            &database_url,
            &[
                "accounts",
                "feature",
                "--account",
                &account,
                "follow_the_money",
                state,
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            store
                .feature_enabled(&account, "follow_the_money")
                .await
                .unwrap(),
            on
        );
    }
    assert_eq!(store.credit_balance(&account).await.unwrap(), 2_500_000);
    store.close().await;
}
