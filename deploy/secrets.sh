#!/usr/bin/env bash
# Makes the compose cluster's credentials, once, in deploy/.secrets/
# (gitignored, mode 0700); up.sh runs it before starting the cluster. What
# is there already is kept, so the cluster and the CLI keep working across
# restarts; remove deploy/.secrets/ (with the cluster down) to start over.
#
#   authority/     the signing keys and the CA (lockstep auth init): never
#                  mounted into a container
#   nats-N/        nats-N's server certificate and trust.conf (operator mode)
#   etcd-N/        etcd-N's server (and peer) certificate
#   SERVICE/       admission, placement, gang, drain: one identity per kind
#   node-NN/       one node identity per agent (lockstep auth enroll-node)
#   admin/         admin's creds and certificate, for the host's CLI and tests
#
# Every identity directory holds NAME.creds, NAME.crt, NAME.key, ca.crt and a
# config.yaml whose current context names them; a container reads it through
# LOCKSTEP_CONFIG, and admin/config.yaml adds the host's URLs:
#   LOCKSTEP_CONFIG=deploy/.secrets/admin/config.yaml lockstep queue
#
# Usage: deploy/secrets.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# The CLI that issues them: build.sh's, else one built from this checkout.
cli=$LOCKSTEP
if [[ ! -x $cli ]]; then
  cli=$(mktemp -d)/lockstep
  trap 'rm -rf "$(dirname "$cli")"' EXIT
  (cd "$ROOT" && go build -o "$cli" ./cmd/lockstep)
fi
authority=$SECRETS/authority
mkdir -p "$SECRETS"
chmod 700 "$SECRETS"
if [[ ! -f $authority/ca.crt ]]; then
  log "creating the compose cluster's authority and CA in $authority"
fi
"$cli" auth init --dir "$authority" >/dev/null

# Host names every server certificate carries besides the server's own:
# the host reaches the servers through ports published on its loopback.
loopback=localhost,127.0.0.1

# config DIR NAME [NATS ETCD]: DIR/config.yaml, one context naming NAME's
# files (relative to the file) and, for the host, the cluster's URLs.
config() {
  local dir=$1 name=$2
  {
    echo "# Written by deploy/secrets.sh: $name on the compose cluster."
    echo "current-context: compose"
    echo "contexts:"
    echo "  compose:"
    if (($# > 2)); then
      echo "    nats: $3"
      echo "    etcd: $4"
    fi
    echo "    creds: $name.creds"
    echo "    tlsCA: ca.crt"
    echo "    tlsCert: $name.crt"
    echo "    tlsKey: $name.key"
    echo "    etcdCA: ca.crt"
    echo "    etcdCert: $name.crt"
    echo "    etcdKey: $name.key"
  } >"$dir/config.yaml.tmp"
  mv "$dir/config.yaml.tmp" "$dir/config.yaml"
}

made=()
for i in 1 2 3; do
  name=nats-$i dir=$SECRETS/nats-$i
  if [[ ! -f $dir/$name.crt ]]; then
    "$cli" auth server-cert "$name" --dir "$authority" --hosts "$name,$loopback" --out "$dir" >/dev/null
    made+=("$name")
  fi
  [[ -f $dir/trust.conf ]] || "$cli" auth nats-config --dir "$authority" --out "$dir/trust.conf" >/dev/null
  name=etcd-$i dir=$SECRETS/etcd-$i
  if [[ ! -f $dir/$name.crt ]]; then
    "$cli" auth server-cert "$name" --dir "$authority" --hosts "$name,$loopback" --out "$dir" >/dev/null
    made+=("$name")
  fi
done

# identity SUBCOMMAND NAME [ROLE]: issue NAME's creds and certificate.
identity() {
  local sub=$1 name=$2 role=${3:-} dir=$SECRETS/$2
  if [[ -f $dir/$name.creds ]]; then
    return
  fi
  "$cli" auth "$sub" "$name" --dir "$authority" --out "$dir" ${role:+--role "$role"} >/dev/null
  made+=("$name")
}
for svc in admission placement gang drain; do
  identity issue "$svc" "$svc"
  config "$SECRETS/$svc" "$svc"
done
for n in 01 02 03 04 05 06 07 08; do
  identity enroll-node "node-$n"
  config "$SECRETS/node-$n" "node-$n"
done
identity issue admin admin
config "$SECRETS/admin" admin "$NATS_HOST_URLS" "$ETCD_HOST_URLS"
if ((${#made[@]})); then
  log "issued credentials in $SECRETS for: ${made[*]}"
fi
