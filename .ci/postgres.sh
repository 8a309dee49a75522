#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster under /tmp on a free loopback port, for the registry's store tests.
# Usage: source .ci/postgres.sh; then GMA_TEST_POSTGRES_URL is set and gma_postgres_stop stops the cluster.
# initdb refuses to run as root, so as root the cluster runs as the unprivileged user 'postgres'.

gma_postgres_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

gma_postgres_start() {
  local bin
  bin=$(gma_postgres_bin)
  if [ -z "$bin" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "ci: no PostgreSQL server binaries; installing Debian's postgresql package"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    bin=$(gma_postgres_bin)
  fi
  if [ -z "$bin" ]; then
    echo "ci: no PostgreSQL server found; the PostgreSQL store tests will be skipped" >&2
    return 0
  fi
  GMA_PG_DIR=$(mktemp -d /tmp/gma-pg.XXXXXX)
  local port password run
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  password=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  echo "$password" > "$GMA_PG_DIR/pw"
  run=()
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres "$GMA_PG_DIR"
    run=(runuser -u postgres --)
  fi
  "${run[@]}" "$bin/initdb" -D "$GMA_PG_DIR/data" -U gma --pwfile="$GMA_PG_DIR/pw" --auth=scram-sha-256 \
    -E UTF8 >"$GMA_PG_DIR/initdb.log" 2>&1 || { cat "$GMA_PG_DIR/initdb.log" >&2; return 1; }
  "${run[@]}" "$bin/pg_ctl" -D "$GMA_PG_DIR/data" -l "$GMA_PG_DIR/server.log" -w \
    -o "-p $port -k $GMA_PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null \
    || { cat "$GMA_PG_DIR/server.log" >&2; return 1; }
  GMA_PG_RUN=("${run[@]}")
  GMA_PG_BIN=$bin
  PGPASSWORD=$password "$bin/createdb" -h 127.0.0.1 -p "$port" -U gma gma
  export GMA_TEST_POSTGRES_URL="jdbc:postgresql://127.0.0.1:$port/gma?user=gma&password=$password"
  echo "ci: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port for the store tests"
}

gma_postgres_stop() {
  if [ -n "${GMA_PG_DIR:-}" ] && [ -d "$GMA_PG_DIR/data" ]; then
    "${GMA_PG_RUN[@]}" "$GMA_PG_BIN/pg_ctl" -D "$GMA_PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$GMA_PG_DIR"
  fi
}
