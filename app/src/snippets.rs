//! Every client snippet Ledger shows, in one place: the home page, the Keys
//! page (filled in with a freshly minted token) and `/llms.txt` all take
//! them from here, so no two can disagree.
//!
//! The snippets are the client guide's (docs/contract/guide.txt), character
//! for character, with two substitutions only: the guide's example URL
//! becomes this server's, and its placeholder token `lm_...` a minted one
//! where a page has one. Their details are deliberate and tested against
//! the guide:
//!
//! - Claude Desktop passes the header as `Authorization:${LEDGER_AUTH}`, no
//!   space in the argument, the value (with its space) in `env`: Claude
//!   Desktop on Windows and Cursor mangle spaces inside `args`
//!   (mcp-remote's README); and `--transport http-only`, since the endpoint
//!   speaks Streamable HTTP only.
//! - `.mcp.json` reads the token from the environment
//!   (`${LEDGER_MCP_TOKEN}`), so the file can be committed; Cursor reads the
//!   same variable (`${env:LEDGER_MCP_TOKEN}`).
//!
//! Pure string functions: the server's discovery documents use them too,
//! and `app` stays free of the server.

/// What the guide writes where a token goes.
pub const TOKEN_PLACEHOLDER: &str = "lm_...";

/// The environment variable `.mcp.json` and Cursor read the token from.
pub const TOKEN_VARIABLE: &str = "LEDGER_MCP_TOKEN";

/// The MCP endpoint: anonymous callers are first-class here.
pub fn mcp_url(public_url: &str) -> String {
    format!("{public_url}/mcp")
}

/// The same endpoint for hosts that start OAuth only on a 401.
pub fn account_url(public_url: &str) -> String {
    format!("{public_url}/mcp/account")
}

/// Which URL a host takes, said wherever the connect URL is shown.
pub fn which_url(public_url: &str) -> String {
    format!(
        "Hosts that start OAuth on a 401 (Claude.ai connectors, Claude Code's \"Connect\") take \
         {account}: it answers a caller without a token 401 with the OAuth challenge. {mcp} \
         stays anonymous-first: a caller without a token is served anonymously (paying per \
         call) and never asked to sign in, so such a host would never start OAuth there.",
        account = account_url(public_url),
        mcp = mcp_url(public_url),
    )
}

/// Claude Code: `claude mcp add` with the bearer header.
pub fn claude_code(mcp_url: &str, token: &str) -> String {
    format!(
        "claude mcp add --transport http ledger {mcp_url} \\\n  --header \"Authorization: Bearer {token}\""
    )
}

/// Claude Code's project-shared `.mcp.json`: the token comes from the
/// environment, never the file.
pub fn mcp_json(mcp_url: &str) -> String {
    format!(
        "{{\n  \"mcpServers\": {{\n    \"ledger\": {{\n      \"type\": \"http\",\n      \"url\": \"{mcp_url}\",\n      \"headers\": {{ \"Authorization\": \"Bearer ${{{TOKEN_VARIABLE}}}\" }}\n    }}\n  }}\n}}"
    )
}

/// Claude Desktop's `claude_desktop_config.json`, through mcp-remote.
pub fn claude_desktop(mcp_url: &str, token: &str) -> String {
    format!(
        "{{\n  \"mcpServers\": {{\n    \"ledger\": {{\n      \"command\": \"npx\",\n      \"args\": [\n        \"mcp-remote\",\n        \"{mcp_url}\",\n        \"--transport\", \"http-only\",\n        \"--header\", \"Authorization:${{LEDGER_AUTH}}\"\n      ],\n      \"env\": {{ \"LEDGER_AUTH\": \"Bearer {token}\" }}\n    }}\n  }}\n}}"
    )
}

/// Cursor's `.cursor/mcp.json`: the token from the environment.
pub fn cursor(mcp_url: &str) -> String {
    format!(
        "{{\n  \"mcpServers\": {{\n    \"ledger\": {{\n      \"url\": \"{mcp_url}\",\n      \"headers\": {{ \"Authorization\": \"Bearer ${{env:{TOKEN_VARIABLE}}}\" }}\n    }}\n  }}\n}}"
    )
}

/// The guide's whole session with curl: initialize, the initialized
/// notification, tools/list, a call.
pub fn curl_session(mcp_url: &str, token: &str) -> String {
    let headers =
        "-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'";
    format!(
        "URL={mcp_url}\n\
         AUTH=\"Authorization: Bearer {token}\"     # or leave the -H out to be anonymous\n\
         \n\
         # 1. initialize — capture the session id from the response headers\n\
         SID=$(curl -sS -D - -o /dev/null \"$URL\" -H \"$AUTH\" \\\n  \
         {headers} \\\n  \
         -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"curl\",\"version\":\"0\"}}}}}}' \\\n  \
         | awk 'tolower($1)==\"mcp-session-id:\" {{print $2}}' | tr -d '\\r')\n\
         \n\
         # 2. the initialized notification (no id, no reply)\n\
         curl -sS \"$URL\" -H \"$AUTH\" -H \"Mcp-Session-Id: $SID\" \\\n  \
         {headers} \\\n  \
         -d '{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}'\n\
         \n\
         # 3. list the tools\n\
         curl -sS \"$URL\" -H \"$AUTH\" -H \"Mcp-Session-Id: $SID\" \\\n  \
         {headers} \\\n  \
         -d '{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}}'\n\
         \n\
         # 4. call one\n\
         curl -sS \"$URL\" -H \"$AUTH\" -H \"Mcp-Session-Id: $SID\" \\\n  \
         {headers} \\\n  \
         -d '{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{{\"name\":\"quote_wallet\",\"arguments\":{{\"address\":\"7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU\",\"scope\":\"preview\"}}}}}}'"
    )
}

/// Ledger's own quickest check (not in the guide): one anonymous `ping`,
/// no session.
pub fn curl_ping(mcp_url: &str) -> String {
    format!(
        "URL={mcp_url}\n\
         curl -sS \"$URL\" -H 'Content-Type: application/json' \\\n  \
         -H 'Accept: application/json, text/event-stream' \\\n  \
         -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"ping\",\"arguments\":{{}}}}}}'"
    )
}

/// An API key on the REST API (Ledger's own).
pub fn curl_api(public_url: &str, token: &str) -> String {
    format!("curl -sS {public_url}/v1/ping \\\n  -H \"Authorization: Bearer {token}\"")
}

/// One snippet to show: an anchor id, a heading, a sentence saying where
/// it goes, the code block's label and the code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snippet {
    pub id: &'static str,
    pub title: &'static str,
    pub intro: &'static str,
    pub label: &'static str,
    pub code: String,
}

/// The token snippets, in the guide's order: Claude Code, `.mcp.json`,
/// Claude Desktop, Cursor. `token` is a minted token or
/// [`TOKEN_PLACEHOLDER`].
pub fn token_snippets(mcp_url: &str, token: &str) -> Vec<Snippet> {
    vec![
        Snippet {
            id: "claude-code",
            title: "Claude Code",
            intro: "A remote Streamable HTTP server with a bearer header (--scope user makes it \
                    available in every project, the default local in this one):",
            label: "shell",
            code: claude_code(mcp_url, token),
        },
        Snippet {
            id: "mcp-json",
            title: "Claude Code, project-shared .mcp.json",
            intro: "The token taken from the environment (LEDGER_MCP_TOKEN) so the file can be \
                    committed:",
            label: "json",
            code: mcp_json(mcp_url),
        },
        Snippet {
            id: "claude-desktop",
            title: "Claude Desktop (through mcp-remote)",
            intro: "claude_desktop_config.json, under Settings → Developer → Edit Config. The \
                    header goes through env, written without a space after the colon on purpose \
                    (Claude Desktop on Windows and Cursor mangle spaces inside args); drop the two \
                    --header entries and the env block to connect anonymously. Restart Desktop \
                    after editing.",
            label: "json",
            code: claude_desktop(mcp_url, token),
        },
        Snippet {
            id: "cursor",
            title: "Cursor",
            intro: ".cursor/mcp.json in the project (or ~/.cursor/mcp.json globally), with \
                    LEDGER_MCP_TOKEN set to the token in your environment:",
            label: "json",
            code: cursor(mcp_url),
        },
    ]
}

/// The OAuth snippets: the URL that refuses anonymous callers, so a host
/// starts its OAuth flow instead of connecting anonymously.
pub fn oauth_snippets(public_url: &str) -> Vec<Snippet> {
    let url = account_url(public_url);
    vec![
        Snippet {
            id: "oauth-claude-ai",
            title: "Claude.ai and Claude Desktop",
            intro: "Settings → Connectors → Add custom connector, with this URL:",
            label: "connect",
            code: url.clone(),
        },
        Snippet {
            id: "oauth-claude-code",
            title: "Claude Code",
            intro: "Then pick Connect in /mcp:",
            label: "connect",
            code: format!("claude mcp add --transport http ledger {url}"),
        },
        Snippet {
            id: "oauth-cursor",
            title: "Cursor (~/.cursor/mcp.json)",
            intro: "No header: Cursor runs the OAuth flow itself.",
            label: "connect",
            code: format!(
                "{{\n  \"mcpServers\": {{\n    \"ledger\": {{ \"url\": \"{url}\" }}\n  }}\n}}"
            ),
        },
        Snippet {
            id: "oauth-mcp-remote",
            title: "mcp-remote",
            intro: "Any stdio-only host: mcp-remote opens the browser for the sign-in.",
            label: "connect",
            code: format!("npx -y mcp-remote {url}"),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUIDE: &str = include_str!("../../docs/contract/guide.txt");
    const GUIDE_URL: &str = "https://ledger.missionsix.net/mcp";

    #[test]
    fn every_token_snippet_is_the_guide_s_verbatim() {
        let snippets = token_snippets(GUIDE_URL, TOKEN_PLACEHOLDER);
        assert_eq!(snippets.len(), 4);
        for snippet in snippets {
            assert!(
                GUIDE.contains(&format!("\n\n{}\n\n", snippet.code)),
                "{} is not in the guide, whole:\n{}",
                snippet.id,
                snippet.code
            );
        }
    }

    #[test]
    fn the_curl_session_is_the_guide_s_verbatim() {
        let code = curl_session(GUIDE_URL, TOKEN_PLACEHOLDER);
        assert!(GUIDE.contains(&format!("\n\n{code}\n\n")), "{code}");
    }

    #[test]
    fn a_minted_token_replaces_only_the_placeholder() {
        let url = "https://ledger.example/mcp";
        let token = "lm_3fQ9x2AbCdEf";
        let desktop = claude_desktop(url, token);
        assert_eq!(
            desktop,
            claude_desktop(GUIDE_URL, TOKEN_PLACEHOLDER)
                .replace(GUIDE_URL, url)
                .replace(TOKEN_PLACEHOLDER, token)
        );
        // No space inside an argument: the header rides in env.
        assert!(desktop.contains("\"--header\", \"Authorization:${LEDGER_AUTH}\""));
        assert!(desktop.contains("\"--transport\", \"http-only\""));
        assert!(desktop.contains(&format!("\"LEDGER_AUTH\": \"Bearer {token}\"")));
        // Files that may be committed never hold the plaintext.
        for file in [mcp_json(url), cursor(url)] {
            assert!(!file.contains("lm_"), "{file}");
            assert!(file.contains(TOKEN_VARIABLE), "{file}");
        }
        assert!(claude_code(url, token).contains(&format!("Authorization: Bearer {token}")));
    }

    #[test]
    fn the_url_note_names_both_endpoints() {
        let note = which_url("https://ledger.example");
        assert!(
            note.contains("https://ledger.example/mcp/account"),
            "{note}"
        );
        assert!(
            note.contains("https://ledger.example/mcp stays anonymous-first"),
            "{note}"
        );
        assert!(note.contains("Claude.ai connectors"), "{note}");
        assert!(note.contains("Claude Code's \"Connect\""), "{note}");
        assert!(!note.contains("  "), "{note}");
    }

    #[test]
    fn snippets_snapshot() {
        let url = "https://ledger.example/mcp";
        let mut all = token_snippets(url, "lm_3fQ9x2AbCdEf");
        all.extend(oauth_snippets("https://ledger.example"));
        let text: String = all
            .iter()
            .map(|s| format!("## {} ({})\n{}\n{}\n\n", s.title, s.id, s.intro, s.code))
            .collect();
        let text = format!(
            "{text}## curl session\n{}\n\n## curl ping\n{}\n\n## curl api\n{}\n\n## which url\n{}\n",
            curl_session(url, "lm_3fQ9x2AbCdEf"),
            curl_ping(url),
            curl_api("https://ledger.example", "lk_3fQ9x2AbCdEf"),
            which_url("https://ledger.example"),
        );
        insta::assert_snapshot!("snippets", text);
    }
}
