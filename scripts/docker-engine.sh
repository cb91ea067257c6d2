#!/usr/bin/env bash
# A private Docker engine for the tests, and the docker cloud's image built without any image registry.
#
#   scripts/docker-engine.sh image        build gpuprov/sshd:1 once (debootstrap from the Debian mirror apt uses,
#                                         docker import, a classic build FROM it) and save it under the cache;
#                                         prints the tarball's path. Cached by a hash of docker/sshd and the base's package list.
#   scripts/docker-engine.sh start DIR [TAR]
#                                         start dockerd with its data root (a tmpfs), exec root, pid file, socket and
#                                         bridge under DIR (vfs, no iptables), load TAR into it unless it has the image;
#                                         prints unix://DIR/docker.sock. Idempotent.
#   scripts/docker-engine.sh stop DIR     stop that dockerd (and its containerd), delete its bridge, unmount and
#                                         remove DIR
#
# GPUPROV_DOCKERD names another dockerd binary (e.g. a newer one unpacked with dpkg-deb -x).
# Never touches /var/run/docker.sock or docker0: another engine may use them. Needs root (dockerd does).
# Set-up times go to stderr as "docker set-up: ..." lines.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${GPUPROV_CACHE_DIR:-$HOME/.cache/gpuprov}/docker"
DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || DOCKER="$(command -v docker)"
# What the image needs at run time; debootstrap installs it, so the build runs no apt at all.
INCLUDE=openssh-server,ca-certificates,curl,iproute2,procps,sudo
SUITE=bookworm

timed() { printf 'docker set-up: %s %ss\n' "$1" "$2" >&2; }

# The Debian mirror apt uses (deb822 `URIs:` or one-line `deb URI suite`), not the security archive.
debian_mirror() {
  grep -hE '^[[:space:]]*(URIs:|deb[[:space:]])' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
    grep -oE 'https?://[^[:space:]]+' | grep -v -e security -e nodesource -e packages.cloud | grep -E '/debian/?$' | head -n 1 || true
}

bridge_of() { printf 'gpd%s' "$(printf '%s' "$1" | sha256sum | cut -c1-10)"; }

# A /24 in 10.213.0.0/16 that no route on this host uses yet.
free_subnet() {
  local n
  for n in $(seq 1 250); do
    ip -4 route show | grep -q "^10\.213\.$n\." || { printf '10.213.%s' "$n"; return 0; }
  done
  echo "no free 10.213.x.0/24 for the bridge" >&2
  return 1
}

start() {
  local dir="$1" tar="${2:-}" t0
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  "$DOCKER" -H "unix://$dir/docker.sock" version >/dev/null 2>&1 || start_dockerd "$dir"
  if [ -n "$tar" ] && ! "$DOCKER" -H "unix://$dir/docker.sock" image inspect gpuprov/sshd:1 >/dev/null 2>&1; then
    t0=$SECONDS
    "$DOCKER" -H "unix://$dir/docker.sock" load -q -i "$tar" >/dev/null
    timed "image load" $((SECONDS - t0))
  fi
  printf 'unix://%s/docker.sock\n' "$dir"
}

start_dockerd() {
  local dir="$1" t0=$SECONDS br net
  br="$(bridge_of "$dir")"
  if ! ip link show "$br" >/dev/null 2>&1; then
    net="$(free_subnet)"
    ip link add "$br" type bridge
    ip addr add "$net.1/24" dev "$br"
  fi
  ip link set "$br" up
  # vfs copies every layer in full: in memory that is seconds, on a busy disk (and its removal) a minute.
  mkdir -p "$dir/data"
  mountpoint -q "$dir/data" || mount -t tmpfs -o "size=${GPUPROV_DOCKERD_TMPFS_SIZE:-6g}" tmpfs "$dir/data"
  "${GPUPROV_DOCKERD:-dockerd}" --storage-driver vfs --iptables=false --ip6tables=false --ip-masq=false -b "$br" \
    --data-root "$dir/data" --exec-root "$dir/exec" --pidfile "$dir/dockerd.pid" \
    -H "unix://$dir/docker.sock" >"$dir/dockerd.log" 2>&1 </dev/null &
  local i
  for i in $(seq 1 60); do
    "$DOCKER" -H "unix://$dir/docker.sock" version >/dev/null 2>&1 && break
    if ! kill -0 $! 2>/dev/null; then
      tail -n 20 "$dir/dockerd.log" >&2
      echo "dockerd exited; log: $dir/dockerd.log" >&2
      return 1
    fi
    [ "$i" -lt 60 ] || { echo "dockerd did not answer in 30 s; log: $dir/dockerd.log" >&2; return 1; }
    sleep 0.5
  done
  timed "dockerd start" $((SECONDS - t0))
}

stop() {
  local dir="$1" pid i
  [ -d "$dir" ] || return 0
  dir="$(cd "$dir" && pwd)"
  for pidfile in "$dir/dockerd.pid" "$dir/exec/containerd/containerd.pid"; do
    pid="$(cat "$pidfile" 2>/dev/null || true)"
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || continue
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 40); do
      kill -0 "$pid" 2>/dev/null || break
      [ "$i" -lt 40 ] || kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
    done
  done
  ip link del "$(bridge_of "$dir")" 2>/dev/null || true
  # Container /dev/shm and similar mounts outlive a killed engine.
  awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n 1 umount -l 2>/dev/null || true
  rm -rf "$dir"
}

image() {
  local hash base_hash out base tmp t0
  hash="$({ cat "$ROOT/docker/sshd/Dockerfile" "$ROOT/docker/sshd/entrypoint.sh"; printf '%s %s' "$SUITE" "$INCLUDE"; } | sha256sum | cut -c1-16)"
  out="$CACHE/sshd-$hash.tar"
  if [ -s "$out" ]; then
    printf 'docker set-up: image cached (%s)\n' "$out" >&2
    printf '%s\n' "$out"
    return 0
  fi
  mkdir -p "$CACHE"
  base_hash="$(printf '%s %s' "$SUITE" "$INCLUDE" | sha256sum | cut -c1-16)"
  base="$CACHE/base-$SUITE-$base_hash.tar"
  tmp="$(mktemp -d /tmp/gpuprov-docker-image.XXXXXX)"
  # shellcheck disable=SC2064 # expand $tmp now
  trap "stop '$tmp/engine'; rm -rf '$tmp'" EXIT
  if ! [ -s "$base" ]; then
    local mirror
    mirror="$(debian_mirror)"
    [ -n "$mirror" ] || { echo "no Debian mirror in /etc/apt/sources.list*" >&2; return 1; }
    t0=$SECONDS
    debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$tmp/rootfs" "$mirror" >"$tmp/debootstrap.log" 2>&1 ||
      { tail -n 20 "$tmp/debootstrap.log" >&2; return 1; }
    rm -rf "$tmp/rootfs/var/cache/apt/archives/"*.deb "$tmp/rootfs/var/lib/apt/lists/"*
    tar -C "$tmp/rootfs" -c . >"$base.tmp"
    mv "$base.tmp" "$base"
    timed debootstrap $((SECONDS - t0))
  fi
  local host
  host="$(start "$tmp/engine")"
  t0=$SECONDS
  "$DOCKER" -H "$host" import - gpuprov/base:"$SUITE" <"$base" >/dev/null
  timed import $((SECONDS - t0))
  t0=$SECONDS
  DOCKER_BUILDKIT=0 "$DOCKER" -H "$host" build -q --network host --build-arg BASE=gpuprov/base:"$SUITE" \
    -t gpuprov/sshd:1 "$ROOT/docker/sshd" >/dev/null
  timed build $((SECONDS - t0))
  t0=$SECONDS
  "$DOCKER" -H "$host" save gpuprov/sshd:1 >"$out.tmp"
  mv "$out.tmp" "$out"
  timed save $((SECONDS - t0))
  printf '%s\n' "$out"
}

case "${1:-}" in
  image) image ;;
  start) start "${2:?start DIR [TAR]}" "${3:-}" ;;
  stop) stop "${2:?stop DIR}" ;;
  *)
    echo "usage: $0 image | start DIR [TAR] | stop DIR" >&2
    exit 2
    ;;
esac
