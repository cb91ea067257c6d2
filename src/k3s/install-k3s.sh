#!/bin/bash
# gpuprov k3s installer. Runs as the VM's boot script (cloud-init / vendor startup hook) or
# pushed over SSH (`bash -s`). Idempotent: safe to run twice, or by both routes at once.
#
#  - holds a host-wide flock for its whole run;
#  - records state=running|done|failed in $STATE_DIR/k3s-install.status (key=value lines);
#  - owns $K3S_ETC/config.yaml, rendered from a TLS-SAN list (public IP from the AWS/GCP
#    metadata services, K3S_TLS_SANS, and the SANs already there), restarting k3s only when
#    the file changed;
#  - installs k3s, and where a GPU is present the NVIDIA container runtime + device plugin.
#
# Environment (all optional):
#   K3S_TLS_SANS              extra SANs, comma or space separated (e.g. the public host)
#   K3S_API_PORT              API port (default 6443)
#   GPUPROV_K3S_TAKEOVER=1    a lock held longer than the wait belongs to a hung install: stop it
#   GPUPROV_LOCK_WAIT         seconds to wait for the lock (default 900)
#   GPUPROV_ROOT_PREFIX       prefix for every path this script writes (tests)
#   GPUPROV_K3S_INSTALL_CMD   replaces the k3s download+install step (tests)
#   GPUPROV_NVIDIA_INSTALL_CMD replaces the NVIDIA container toolkit install (tests)
#   GPUPROV_METADATA          "off" skips the metadata services (clouds without them)
#   GPUPROV_METADATA_BASE     metadata service base URL (default http://169.254.169.254; tests)
set -uo pipefail

P="${GPUPROV_ROOT_PREFIX:-}"
STATE_DIR="$P/var/lib/gpuprov"
STATUS="$STATE_DIR/k3s-install.status"
LOCK="$STATE_DIR/k3s-install.lock"
OWNER="$STATE_DIR/k3s-install.owner"
K3S_ETC="$P/etc/rancher/k3s"
CONFIG="$K3S_ETC/config.yaml"
MANIFESTS="$P/var/lib/rancher/k3s/server/manifests"
API_PORT="${K3S_API_PORT:-6443}"
LOCK_WAIT="${GPUPROV_LOCK_WAIT:-900}"

log() { echo "gpuprov-k3s: $*" >&2; }

mkdir -p "$STATE_DIR" "$K3S_ETC"

write_status() { # state [extra key=value lines...]
  local tmp="$STATUS.$$.tmp"
  {
    echo "state=$1"
    echo "updated=$(date +%s)"
    echo "started=${STARTED:-$(date +%s)}"
    echo "pid=$$"
    shift
    for kv in "$@"; do echo "$kv"; done
  } >"$tmp" && mv -f "$tmp" "$STATUS"
}

# Stop a process and its descendants (by pid: the hung installer that holds the lock).
kill_tree() {
  local pid="$1" child
  for child in $(pgrep -P "$pid" 2>/dev/null); do kill_tree "$child"; done
  kill -TERM "$pid" 2>/dev/null || true
}

exec 9>>"$LOCK"
if ! flock -w "$( [ "${GPUPROV_K3S_TAKEOVER:-0}" = 1 ] && echo 5 || echo "$LOCK_WAIT" )" 9; then
  if [ "${GPUPROV_K3S_TAKEOVER:-0}" = 1 ] && holder="$(cat "$OWNER" 2>/dev/null)" && [ -n "$holder" ]; then
    log "lock held by a hung install (pid $holder): stopping it"
    kill_tree "$holder"
    flock -w 30 9 || { log "could not take the install lock"; exit 75; }
  else
    log "could not take the install lock within ${LOCK_WAIT}s"
    exit 75
  fi
fi
echo $$ >"$OWNER"

STARTED="$(date +%s)"
DONE=0
trap '[ "$DONE" = 1 ] || write_status failed "error=installer exited before finishing (see log)"' EXIT
trap 'exit 143' TERM INT HUP
write_status running

# --- TLS SANs ---------------------------------------------------------------------------
metadata_ip() {
  [ "${GPUPROV_METADATA:-on}" = off ] && return 0
  local tok ip base="${GPUPROV_METADATA_BASE:-http://169.254.169.254}"
  tok="$(curl -fsS -m 2 -X PUT "$base/latest/api/token" -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' 2>/dev/null)" || tok=""
  if [ -n "$tok" ]; then
    ip="$(curl -fsS -m 2 -H "X-aws-ec2-metadata-token: $tok" "$base/latest/meta-data/public-ipv4" 2>/dev/null)" || ip=""
    [ -n "$ip" ] && { echo "$ip"; return 0; }
  fi
  ip="$(curl -fsS -m 2 -H 'Metadata-Flavor: Google' \
    "$base"/computeMetadata/v1/instance/network-interfaces/0/access-configs/0/external-ip 2>/dev/null)" || ip=""
  [ -n "$ip" ] && echo "$ip"
  return 0
}

existing_sans() {
  [ -f "$CONFIG" ] || return 0
  awk '/^tls-san:/{on=1; next} on && /^  - /{gsub(/^  - "?|"$/, ""); print; next} on{on=0}' "$CONFIG"
}

SANS="$( { metadata_ip; existing_sans; echo "${K3S_TLS_SANS:-}" | tr ', ' '\n\n'; } | sed '/^$/d' | sort -u )"

render_config() {
  echo "# Written by gpuprov (install-k3s.sh); re-rendered on every run."
  echo "write-kubeconfig-mode: \"0600\""
  echo "https-listen-port: $API_PORT"
  if [ -n "$SANS" ]; then
    echo "tls-san:"
    while IFS= read -r s; do echo "  - \"$s\""; done <<<"$SANS"
  fi
}

NEW_CONFIG="$(render_config)"
CHANGED=0
if [ ! -f "$CONFIG" ] || [ "$(cat "$CONFIG")" != "$NEW_CONFIG" ]; then
  printf '%s\n' "$NEW_CONFIG" >"$CONFIG.tmp" && mv -f "$CONFIG.tmp" "$CONFIG"
  CHANGED=1
  log "config.yaml rendered (SANs: $(echo "$SANS" | paste -sd, -))"
fi

# --- GPU --------------------------------------------------------------------------------
GPU=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then GPU=1; fi

install_nvidia_runtime() {
  if [ -n "${GPUPROV_NVIDIA_INSTALL_CMD:-}" ]; then bash -c "$GPUPROV_NVIDIA_INSTALL_CMD" 9>&-; return; fi
  command -v nvidia-container-runtime >/dev/null 2>&1 && return 0
  curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey |
    gpg --dearmor --yes -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg &&
  curl -fsSL https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list |
    sed 's#deb https://#deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://#' \
    >/etc/apt/sources.list.d/nvidia-container-toolkit.list &&
  DEBIAN_FRONTEND=noninteractive apt-get update -q &&
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q nvidia-container-toolkit
}

render_gpu_manifest() {
  cat <<'EOF'
# Written by gpuprov: k3s applies files in this directory on start.
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: nvidia
handler: nvidia
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
  namespace: kube-system
spec:
  selector:
    matchLabels:
      name: nvidia-device-plugin-ds
  template:
    metadata:
      labels:
        name: nvidia-device-plugin-ds
    spec:
      runtimeClassName: nvidia
      tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
      priorityClassName: system-node-critical
      containers:
        - name: nvidia-device-plugin-ctr
          image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
          securityContext:
            allowPrivilegeEscalation: false
            capabilities:
              drop: ["ALL"]
          volumeMounts:
            - name: device-plugin
              mountPath: /var/lib/kubelet/device-plugins
      volumes:
        - name: device-plugin
          hostPath:
            path: /var/lib/kubelet/device-plugins
EOF
}

if [ "$GPU" = 1 ]; then
  install_nvidia_runtime || { log "NVIDIA container runtime install failed"; exit 1; }
  mkdir -p "$MANIFESTS"
  if [ "$(cat "$MANIFESTS/gpuprov-nvidia.yaml" 2>/dev/null)" != "$(render_gpu_manifest)" ]; then
    render_gpu_manifest >"$MANIFESTS/gpuprov-nvidia.yaml"
    CHANGED=1 # containerd picks up the nvidia runtime only on (re)start
  fi
fi

# Children must not inherit the lock (fd 9): a k3s server started from here would hold it forever.
# --- k3s --------------------------------------------------------------------------------
k3s_installed() { command -v k3s >/dev/null 2>&1 && systemctl cat k3s >/dev/null 2>&1; }

if ! k3s_installed; then
  log "installing k3s"
  if [ -n "${GPUPROV_K3S_INSTALL_CMD:-}" ]; then
    bash -c "$GPUPROV_K3S_INSTALL_CMD" 9>&- || { log "k3s install failed"; exit 1; }
  else
    curl -sfL https://get.k3s.io | INSTALL_K3S_EXEC=server sh -s - 9>&- || { log "k3s install failed"; exit 1; }
  fi
elif [ "$CHANGED" = 1 ]; then
  log "config changed: restarting k3s"
  systemctl restart k3s 9>&- || { log "k3s restart failed"; exit 1; }
elif ! systemctl is-active --quiet k3s; then
  log "k3s not running: starting it"
  systemctl start k3s 9>&- || { log "k3s start failed"; exit 1; }
fi

DONE=1
write_status done "gpu=$GPU" "api_port=$API_PORT" "sans=$(echo "$SANS" | paste -sd, -)"
rm -f "$OWNER"
log "done"
