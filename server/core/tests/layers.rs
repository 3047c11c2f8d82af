//! The layering this crate exists for, checked where a newcomer would
//! break it: adding a database, HTTP, Leptos or async-runtime crate to
//! `ledger-core`, or HTTP and Leptos to `ledger-store`, fails here with the
//! reason, before review has to catch it (docs/architecture.md).

#![allow(clippy::unwrap_used)]

use std::path::Path;

/// The names under `[dependencies]` of the manifest at `dir/Cargo.toml`.
fn dependencies(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let mut names = Vec::new();
    let mut in_deps = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]"
                || line.starts_with("[target.") && line.ends_with(".dependencies]");
            continue;
        }
        if in_deps
            && !line.starts_with('#')
            && let Some((name, _)) = line.split_once('=')
        {
            names.push(name.trim().to_owned());
        }
    }
    names
}

fn refused_in(dir: &Path, refused: &[&str]) -> Vec<String> {
    dependencies(dir)
        .into_iter()
        .filter(|name| {
            refused.iter().any(|r| {
                name == r
                    || name.starts_with(&format!("{r}-"))
                    || name.starts_with(&format!("{r}_"))
            })
        })
        .collect()
}

#[test]
fn the_core_crate_depends_on_no_database_http_leptos_or_runtime_crate() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    let deps = dependencies(core);
    assert!(
        deps.contains(&"serde".to_owned()),
        "the manifest was read: {deps:?}"
    );
    let found = refused_in(
        core,
        &[
            "sqlx",
            "axum",
            "http",
            "hyper",
            "tower",
            "reqwest",
            "leptos",
            "tokio",
            "ledger-store",
            "server",
        ],
    );
    assert!(
        found.is_empty(),
        "ledger-core must stay pure, found {found:?}"
    );
}

#[test]
fn the_store_crate_depends_on_no_http_or_leptos_crate() {
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("../store");
    let deps = dependencies(&store);
    assert!(
        deps.contains(&"sqlx".to_owned()),
        "the manifest was read: {deps:?}"
    );
    let found = refused_in(
        &store,
        &[
            "axum", "http", "hyper", "tower", "reqwest", "leptos", "server", "app",
        ],
    );
    assert!(
        found.is_empty(),
        "ledger-store must not reach HTTP or Leptos, found {found:?}"
    );
}
