#!/usr/bin/env bash
# Runs before `npm test` (the `pretest` script): installs the system programs the tests drive,
# Debian's redis-server (rate-limit / idempotency tests against a real Redis), chromium (the
# docs page browser test), curl, jq and script(1), when they are missing. Needs root or sudo the first time only.
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# The README's curl examples (test/cli/readme.test.ts) use curl and jq; the terminal tests use script(1).
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v script >/dev/null 2>&1 || missing+=(bsdutils)
if [ -z "${CHROMIUM_PATH:-}" ] && ! [ -x /usr/bin/chromium ]; then missing+=(chromium); fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
  echo "The tests need: ${missing[*]} (Debian packages). Install them, or run npm test as root once." >&2
  exit 1
fi
echo "Installing ${missing[*]} for the tests..." >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
