#!/bin/bash
# SIMULATED K3S HOST — stands in for `curl -sfL https://get.k3s.io | sh -` (the installer's
# GPUPROV_K3S_INSTALL_CMD). Installs a k3s stand-in as $P/usr/local/bin/k3s (the test double
# k3s-double.mjs, or $GPUPROV_SIM_K3S: k3s-real.mjs with $GPUPROV_SIM_KUBE_APISERVER and
# $GPUPROV_SIM_ETCD), writes the unit file and starts it through the simulated systemctl.
# Knob files in $GPUPROV_SIM_HOST/sim:
#   fail-install-once   the download fails (once)
#   hang-install-once   the download hangs for 10 minutes (once)
set -eu
H="$GPUPROV_SIM_HOST"
P="$GPUPROV_ROOT_PREFIX"
SIM_DIR="$(cd "$(dirname "$0")" && pwd)"
K3S="${GPUPROV_SIM_K3S:-$SIM_DIR/k3s-double.mjs}"
echo "$$" >>"$H/sim/install-count"
if [ -f "$H/sim/fail-install-once" ]; then rm -f "$H/sim/fail-install-once"; echo "simulated download failure" >&2; exit 1; fi
if [ -f "$H/sim/hang-install-once" ]; then rm -f "$H/sim/hang-install-once"; sleep 600; fi
mkdir -p "$P/usr/local/bin" "$P/etc/systemd/system"
cat >"$P/usr/local/bin/k3s" <<WRAP
#!/bin/sh
export GPUPROV_ROOT_PREFIX="$P" GPUPROV_SIM_HOST="$H"
export GPUPROV_SIM_KUBE_APISERVER="${GPUPROV_SIM_KUBE_APISERVER:-}" GPUPROV_SIM_ETCD="${GPUPROV_SIM_ETCD:-}"
exec node "$K3S" "\$@"
WRAP
chmod 0755 "$P/usr/local/bin/k3s"
printf '[Unit]\nDescription=Lightweight Kubernetes (simulated)\n[Service]\nExecStart=%s server\n' "$P/usr/local/bin/k3s" >"$P/etc/systemd/system/k3s.service"
systemctl enable --now k3s
