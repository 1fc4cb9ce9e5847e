#!/usr/bin/env bash
# Install (Debian package), start and provision the PostgreSQL server the distributed tests use.
# Idempotent: safe to run on a machine where it already runs. Prints the URL to use.
set -euo pipefail
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
version=$(ls /usr/lib/postgresql | sort -n | tail -n 1)
if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main"' | grep -q .; then
    pg_createcluster "$version" main >/dev/null
fi
if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" && $4 == "online"' | grep -q .; then
    pg_ctlcluster "$version" main start
fi
for _ in $(seq 1 30); do
    su postgres -c "psql -qtAc 'select 1'" >/dev/null 2>&1 && break
    sleep 1
done
su postgres -c "psql -qtAc \"select 1 from pg_roles where rolname = 'fairops'\"" | grep -q 1 ||
    su postgres -c "psql -qc \"create role fairops login password 'fairops' createdb\""
su postgres -c "psql -qtAc \"select 1 from pg_database where datname = 'fairops'\"" | grep -q 1 ||
    su postgres -c "psql -qc 'create database fairops owner fairops'"
echo "postgresql+psycopg://fairops:fairops@127.0.0.1:5432/fairops"
