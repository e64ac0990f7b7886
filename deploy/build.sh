#!/usr/bin/env bash
# Builds the compose cluster's images without any registry: every image is
# FROM scratch, made of static (CGO_ENABLED=0) binaries built here.
#
#   lockstep/lockstep:local      lockstep (this checkout) + static busybox
#   lockstep/nats-server:VER     nats-server, pinned in tools/nats/go.mod
#   lockstep/etcd:VER            etcd + etcdctl, pinned in tools/etcd/go.mod
#   lockstep/jaeger:V2VER        Jaeger v2 all-in-one, pinned in tools/jaeger/go.mod
#   lockstep/prometheus:V3VER    Prometheus server, pinned in tools/prometheus/go.mod
#                                (no web UI assets: those need npm)
#
# Cache-friendly: third-party binaries are built once per version into
# build/bin/NAME-VERSION; lockstep is rebuilt every time (Go's build cache
# makes an unchanged tree a relink); an image is rebuilt only when the hash
# of its build context changes (kept in the image label dev.lockstep.inputs).
# The copy of lockstep inside the infrastructure images is only there for
# `lockstep healthcheck`, so it does not count towards their hash except
# through cmd/lockstep/healthcheck.go: changing Lockstep does not restart
# NATS or etcd.
#
# Usage: deploy/build.sh [--rebuild] [--no-jaeger] [--no-prometheus]
#   --rebuild        rebuild every binary and image from scratch
#   --no-jaeger      skip the Jaeger image (its first build takes minutes)
#   --no-prometheus  skip the Prometheus image (its first build takes minutes)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rebuild=0 jaeger=1 prometheus=1
for arg in "$@"; do
  case $arg in
    --rebuild) rebuild=1 ;;
    --no-jaeger) jaeger=0 ;;
    --no-prometheus) prometheus=0 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $arg (see --help)" ;;
  esac
done

command -v go >/dev/null || die "go is not installed"
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed)"

export CGO_ENABLED=0 GOOS=linux
GOARCH=$(docker info -f '{{.Architecture}}' | sed 's/x86_64/amd64/; s/aarch64/arm64/')
export GOARCH
mkdir -p "$BUILD/bin" "$BUILD/ctx"
started=$SECONDS

# tool_version MODULE_DIR MODULE: the pinned version of MODULE.
tool_version() { (cd "$DEPLOY/tools/$1" && go list -m -f '{{.Version}}' "$2"); }

# build_tool MODULE_DIR PACKAGE NAME VERSION [LDFLAGS]: build a pinned
# third-party binary once per version.
build_tool() {
  local dir=$1 pkg=$2 name=$3 ver=$4 ldflags=${5:-} out=$BUILD/bin/$3-$4
  if [[ -x $out && $rebuild == 0 ]]; then
    return
  fi
  log "building $name $ver (static; the first build of a version takes a while)"
  local t=$SECONDS
  (cd "$DEPLOY/tools/$dir" && go build -trimpath -buildvcs=false -ldflags "-s -w $ldflags" -o "$out.tmp" "$pkg")
  mv "$out.tmp" "$out"
  log "built $name $ver in $((SECONDS - t))s"
}

# busybox: Debian's static busybox, for the agents' shell and coreutils.
fetch_busybox() {
  local out=$BUILD/busybox/busybox
  if [[ -x $out && $rebuild == 0 ]]; then
    return
  fi
  log "fetching busybox-static from Debian"
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  if ! (cd "$tmp" && apt-get download -q busybox-static >/dev/null 2>&1); then
    # A fresh machine may have no package lists yet.
    if [[ $(id -u) == 0 ]]; then
      apt-get update -qq >/dev/null
      (cd "$tmp" && apt-get download -q busybox-static >/dev/null 2>&1) ||
        die "apt-get download busybox-static failed"
    else
      die "apt-get download busybox-static failed (try: sudo apt-get update)"
    fi
  fi
  dpkg-deb -x "$tmp"/busybox-static_*.deb "$tmp/root"
  mkdir -p "$BUILD/busybox"
  cp "$tmp/root/bin/busybox" "$out.tmp"
  "$out.tmp" true || die "the downloaded busybox does not run here"
  mv "$out.tmp" "$out"
  dpkg-deb -f "$tmp"/busybox-static_*.deb Version >"$BUILD/busybox/VERSION"
}

# context NAME: a fresh, empty build context with a rootfs skeleton.
context() {
  local ctx=$BUILD/ctx/$1
  rm -rf "$ctx"
  mkdir -p "$ctx/rootfs/usr/local/bin" "$ctx/rootfs/tmp"
  chmod 1777 "$ctx/rootfs/tmp"
  echo "$ctx"
}

# image TAG NAME [EXTRA_HASH_INPUT]: docker build deploy/images/NAME.Dockerfile
# with build/ctx/NAME unless an image with the same input hash exists.
# Files listed in build/ctx/NAME.nohash are left out of the hash.
image() {
  local tag=$1 name=$2 extra=${3:-} ctx=$BUILD/ctx/$2 hash have
  hash=$( {
    sha256sum "$DEPLOY/images/$name.Dockerfile" | cut -d' ' -f1
    echo "$extra"
    (cd "$ctx" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
      --exclude-from=<(cat "$ctx.nohash" 2>/dev/null || true) -cf - .) | sha256sum
  } | sha256sum | cut -c1-16)
  have=$(docker image inspect -f '{{index .Config.Labels "dev.lockstep.inputs"}}' "$tag" 2>/dev/null || true)
  if [[ $have == "$hash" && $rebuild == 0 ]]; then
    log "image $tag is up to date ($hash)"
    return
  fi
  log "docker build $tag ($hash)"
  local out
  # (The legacy builder is all an engine without buildx has; its
  # deprecation notice is noise here, so output is shown only on failure.)
  if ! out=$(docker build -q -t "$tag" --label "dev.lockstep.inputs=$hash" \
    -f "$DEPLOY/images/$name.Dockerfile" "$ctx" 2>&1); then
    printf '%s\n' "$out" >&2
    die "docker build $tag failed"
  fi
}

# --- binaries -------------------------------------------------------------
nats_ver=$(tool_version nats github.com/nats-io/nats-server/v2)
etcd_ver=$(tool_version etcd go.etcd.io/etcd/server/v3)
etcdctl_ver=$(tool_version etcd go.etcd.io/etcd/etcdctl/v3)
jaeger_ver=$(tool_version jaeger github.com/jaegertracing/jaeger)
# Jaeger's module tags pair v1.N with the v2 release they ship (v1.76.0 is
# v2.13.0); its CHANGELOG says which, and the image is tagged with that.
jaeger_dir=$(cd "$DEPLOY/tools/jaeger" && go mod download github.com/jaegertracing/jaeger &&
  go list -m -f '{{.Dir}}' github.com/jaegertracing/jaeger)
jaeger_release=$(sed -n "s|^$jaeger_ver / \(v2[^ ]*\) .*|\1|p" "$jaeger_dir/CHANGELOG.md")
[[ -n $jaeger_release ]] || die "no v2 release for jaeger $jaeger_ver in its CHANGELOG"
# Prometheus's module tags are v0.3MM.P for release v3.MM.P; its VERSION
# file says which, and the image is tagged with that.
prometheus_ver=$(tool_version prometheus github.com/prometheus/prometheus)
prometheus_dir=$(cd "$DEPLOY/tools/prometheus" && go mod download github.com/prometheus/prometheus &&
  go list -m -f '{{.Dir}}' github.com/prometheus/prometheus)
prometheus_release=v$(cat "$prometheus_dir/VERSION")
# The compose file names these tags; keep the two in step.
for tag in "lockstep/nats-server:$nats_ver" "lockstep/etcd:$etcd_ver" "lockstep/jaeger:$jaeger_release" \
  "lockstep/prometheus:$prometheus_release"; do
  grep -q "image: $tag\$" "$DEPLOY/docker-compose.yml" ||
    die "docker-compose.yml does not use $tag: update it with the version in deploy/tools"
done

lockstep_ver=$(cd "$ROOT" && git describe --tags --always --dirty 2>/dev/null || echo dev)
log "building lockstep $lockstep_ver (static)"
(cd "$ROOT" && go build -trimpath -ldflags "-s -w -X main.version=$lockstep_ver" -o "$LOCKSTEP.tmp" ./cmd/lockstep)
mv "$LOCKSTEP.tmp" "$LOCKSTEP"
build_tool nats github.com/nats-io/nats-server/v2 nats-server "$nats_ver"
build_tool etcd go.etcd.io/etcd/server/v3 etcd "$etcd_ver"
build_tool etcd go.etcd.io/etcd/etcdctl/v3 etcdctl "$etcdctl_ver"
if [[ $jaeger == 1 ]]; then
  build_tool jaeger github.com/jaegertracing/jaeger/cmd/jaeger jaeger "$jaeger_ver" \
    "-X github.com/jaegertracing/jaeger/internal/version.latestVersion=$jaeger_release"
fi
if [[ $prometheus == 1 ]]; then
  build_tool prometheus github.com/prometheus/prometheus/cmd/prometheus prometheus "$prometheus_ver" \
    "-X github.com/prometheus/common/version.Version=${prometheus_release#v} -X github.com/prometheus/common/version.Branch=HEAD"
fi
fetch_busybox

# --- images ---------------------------------------------------------------
healthcheck_hash=$(sha256sum "$ROOT/cmd/lockstep/healthcheck.go" | cut -d' ' -f1)

ctx=$(context lockstep)
mkdir -p "$ctx/rootfs/bin" "$ctx/rootfs/etc" "$ctx/rootfs/var/lib/lockstep"
cp "$LOCKSTEP" "$ctx/rootfs/usr/local/bin/lockstep"
cp "$BUILD/busybox/busybox" "$ctx/rootfs/bin/busybox"
for applet in $("$BUILD/busybox/busybox" --list); do
  [[ $applet == busybox ]] || ln -s busybox "$ctx/rootfs/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$ctx/rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$ctx/rootfs/etc/group"
image lockstep/lockstep:local lockstep "busybox $(cat "$BUILD/busybox/VERSION")"

# Infrastructure images: their own binary plus lockstep for health checks.
infra() {
  local name=$1 tag=$2
  shift 2
  ctx=$(context "$name")
  for bin in "$@"; do
    cp "$BUILD/bin/$bin" "$ctx/rootfs/usr/local/bin/${bin%-v*}"
  done
  cp "$LOCKSTEP" "$ctx/rootfs/usr/local/bin/lockstep"
  echo ./rootfs/usr/local/bin/lockstep >"$ctx.nohash"
  image "$tag" "$name" "healthcheck.go $healthcheck_hash"
}
infra nats-server "lockstep/nats-server:$nats_ver" "nats-server-$nats_ver"
infra etcd "lockstep/etcd:$etcd_ver" "etcd-$etcd_ver" "etcdctl-$etcdctl_ver"
if [[ $jaeger == 1 ]]; then
  infra jaeger "lockstep/jaeger:$jaeger_release" "jaeger-$jaeger_ver"
fi
if [[ $prometheus == 1 ]]; then
  infra prometheus "lockstep/prometheus:$prometheus_release" "prometheus-$prometheus_ver"
fi
log "images ready in $((SECONDS - started))s"
