#!/usr/bin/env bash
# Checks the Zed extension crate natively: format, lints, unit tests. Zed itself builds the wasm.
set -euo pipefail
cd "$(dirname "$0")/../zed-extension"
if ! command -v cargo >/dev/null 2>&1; then
  if [ -n "${CI:-}" ]; then echo "cargo not found: CI must have Rust" >&2; exit 1; fi
  echo "skipping the Zed extension checks: cargo not found"
  exit 0
fi
cargo fmt --check
cargo clippy --quiet --all-targets -- -D warnings
cargo test --quiet --lib
