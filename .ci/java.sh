#!/usr/bin/env bash
# Install Debian's headless Java runtime for the Spark batch-scoring tests (as root). Spark 4 needs Java 17+.
# Idempotent: does nothing when java is already on PATH. Prints its version.
set -euo pipefail
if ! command -v java >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless >/dev/null
fi
java -version 2>&1 | head -n 1
