#!/usr/bin/env bash
# A throwaway PostgreSQL server for the test suites, on a port of its own under a temp dir.
#   scripts/postgres.sh start [PORT] [durable]
#                                      installs PostgreSQL with apt if missing, starts it, prints the admin
#                                      URL and the folder; tests run it without fsync, 'durable' keeps the
#                                      server's defaults (fsync, synchronous commit), for benchmarks
#   scripts/postgres.sh stop  DIR      stops the server started in DIR (by its pid) and removes DIR
#   scripts/postgres.sh pause DIR [fast|immediate]
#                                      stops the server started in DIR and keeps its data (an outage); the
#                                      shutdown mode is pg_ctl's (default fast: sessions terminated, 57P01;
#                                      immediate: no checkpoint, crash recovery at the next start)
#   scripts/postgres.sh resume DIR     starts it again, on the same port with the same settings
set -euo pipefail

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

as_postgres() {
  if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
  start)
    port="${2:-54329}"
    fast="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    [ "${3:-}" = "durable" ] && fast=""
    bin="$(find_bin)"
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
      echo "installing PostgreSQL (apt)..." >&2
      DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
      bin="$(find_bin)"
    fi
    dir="$(mktemp -d /tmp/zmodu-pg.XXXXXX)"
    [ "$(id -u)" = "0" ] && chown postgres:postgres "$dir"
    as_postgres "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 >"$dir/initdb.log" 2>&1
    as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 $fast -c max_connections=200" \
      start >&2
    echo "$dir" >"$dir/dir"
    echo "-p $port -k $dir -c listen_addresses=127.0.0.1 $fast -c max_connections=200" >"$dir/opts"
    echo "postgres://postgres@127.0.0.1:$port/postgres $dir"
    ;;
  pause)
    dir="${2:?usage: postgres.sh pause DIR [fast|immediate]}"
    mode="${3:-fast}"
    case "$mode" in fast|immediate) ;; *) echo "pause: the mode is fast or immediate (got $mode)" >&2; exit 2 ;; esac
    as_postgres "$(find_bin)/pg_ctl" -D "$dir/data" -m "$mode" -w -t 60 stop >&2
    ;;
  resume)
    dir="${2:?usage: postgres.sh resume DIR}"
    as_postgres "$(find_bin)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$(cat "$dir/opts")" start >&2
    ;;
  stop)
    dir="${2:?usage: postgres.sh stop DIR}"
    if [ -f "$dir/data/postmaster.pid" ]; then
      pid="$(head -n 1 "$dir/data/postmaster.pid")"
      kill -INT "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: scripts/postgres.sh start [PORT] [durable] | stop DIR | pause DIR [fast|immediate] | resume DIR" >&2
    exit 2
    ;;
esac
