#!/usr/bin/env bash
# The test command on a fresh Debian machine: installs the headers the native verbs runner builds
# against (with sudo only when not root: containers and CI images run as root without sudo),
# then runs every test. It builds into the same target folder as scripts/demo.sh, so whichever
# runs second reuses the first one's build of polars.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/linkperf-target}"

missing=()
for pkg in libibverbs-dev librdmacm-dev libclang-dev pkg-config; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${missing[@]}"
fi
cargo test --locked --features verbs "$@"
