//! The operator's account and token commands, run as the built `ledger`
//! binary against a fresh database: create an account, mint a token whose
//! plaintext resolves, revoke it by prefix, and it resolves no more.

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
