# Sourced by the scripts in .ci (and end2end/run.sh): what they share.
#
#   apt_get ARGS...   apt-get as root (through sudo when not root), without
#                     questions, waiting for another package manager instead
#                     of failing at once on its lock.
#   step NAME         a progress line: the time since the script started, and
#                     how long the previous step took.
#   steps_done        the last step's time and the total.

# How long apt_get waits for a lock held by another apt-get, dpkg or
# unattended-upgrades before giving up, in seconds.
LEDGER_APT_LOCK_TIMEOUT=${LEDGER_APT_LOCK_TIMEOUT:-900}

# apt's own `-o DPkg::Lock::Timeout` makes `install` wait for dpkg's lock
# (/var/lib/dpkg/lock-frontend); `update` takes /var/lib/apt/lists/lock
# without waiting (apt 2.6, Debian 12), so a lock refusal is also retried
# here every 5 s until the same deadline.
apt_get() {
    local sudo=() err rc deadline=$((SECONDS + LEDGER_APT_LOCK_TIMEOUT))
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    err=$(mktemp)
    while :; do
        rc=0
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get -o DPkg::Lock::Timeout="$LEDGER_APT_LOCK_TIMEOUT" "$@" 2>"$err" || rc=$?
        if [ "$rc" -ne 0 ] && [ "$SECONDS" -lt "$deadline" ] \
            && grep -qE 'Could not get lock|Unable to lock' "$err"; then
            echo "    apt-get $1: another package manager holds its lock; waiting ($((deadline - SECONDS)) s left)" >&2
            sleep 5
            continue
        fi
        cat "$err" >&2
        rm -f "$err"
        return "$rc"
    done
}

_steps_start=$SECONDS
_step_start=
_step_name=

_elapsed() {
    local s=$1
    printf '%d:%02d' $((s / 60)) $((s % 60))
}

_step_end() {
    if [ -n "$_step_name" ]; then
        printf '    [time] %s: %s\n' "$_step_name" "$(_elapsed $((SECONDS - _step_start)))"
    fi
}

step() {
    _step_end
    _step_name=$1
    _step_start=$SECONDS
    printf '\n==> [%s] %s (%s)\n' "$(_elapsed $((SECONDS - _steps_start)))" "$1" "$(date +%H:%M:%S)"
}

steps_done() {
    _step_end
    _step_name=
    printf '==> done in %s\n' "$(_elapsed $((SECONDS - _steps_start)))"
}
