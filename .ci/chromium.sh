#!/usr/bin/env bash
# Install Debian's headless-capable Chromium for the browser tests of MLflow's UI (as root).
# Idempotent: does nothing when a chromium is already on PATH. Prints its path.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
command -v chromium
