/**
 * The shell run on the VM by the k3s activities, one SSH round trip each. Every script reads
 * paths under `${GPUPROV_ROOT_PREFIX:-}` (empty on real VMs; the simulated k3s host sets it) and
 * escalates with `sudo -n` when the login user is not root.
 */

const PRELUDE = ['P="${GPUPROV_ROOT_PREFIX:-}"', 'SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo -n"'].join('\n');

/** Marker, lock, cloud-init status, k3s unit state and GPU presence as `key=value` lines. */
export const BOOT_PROBE_SCRIPT = `${PRELUDE}
S="$P/var/lib/gpuprov/k3s-install.status"
L="$P/var/lib/gpuprov/k3s-install.lock"
echo probe=1
if $SUDO test -f "$S"; then $SUDO cat "$S" | sed 's/^/marker./'; else echo marker.state=absent; fi
if $SUDO test -f "$L" && ! $SUDO flock -n "$L" true 2>/dev/null; then echo lock=held; else echo lock=free; fi
if command -v cloud-init >/dev/null 2>&1; then
  echo "cloud_init=$(cloud-init status 2>/dev/null | sed -n 's/^status: *//p' | head -n1)"
else echo cloud_init=absent; fi
if command -v systemctl >/dev/null 2>&1; then echo "unit=$(systemctl is-active k3s 2>/dev/null | head -n1)"; else echo unit=absent; fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then echo gpu=1; else echo gpu=0; fi
`;

/** Run the installer read from stdin as root; its stderr is the install log. */
export const RUN_INSTALLER_COMMAND = 'if [ "$(id -u)" = 0 ]; then bash -s; else sudo -n bash -s; fi';

/** Ask k3s itself whether its API is ready (`ok` on stdout) and print the API port. */
export const READYZ_SCRIPT = `${PRELUDE}
C="$P/etc/rancher/k3s/config.yaml"
echo "api_port=$($SUDO sed -n 's/^https-listen-port: *//p' "$C" 2>/dev/null | head -n1)"
if command -v k3s >/dev/null 2>&1; then
  echo "readyz=$($SUDO k3s kubectl get --raw=/readyz 2>&1 | tr '\\n' ' ' | head -c 300)"
else echo "readyz=k3s is not installed"; fi
`;

export const SECTION = '----gpuprov-section----';

/** API port, the node list and the CoreDNS deployment, separated by {@link SECTION} lines. */
export const VALIDATE_SCRIPT = `${PRELUDE}
C="$P/etc/rancher/k3s/config.yaml"
echo "api_port=$($SUDO sed -n 's/^https-listen-port: *//p' "$C" 2>/dev/null | head -n1)"
echo '${SECTION}'
$SUDO k3s kubectl get --raw=/api/v1/nodes 2>&1
echo
echo '${SECTION}'
$SUDO k3s kubectl get --raw=/apis/apps/v1/namespaces/kube-system/deployments/coredns 2>&1
echo
`;

/** Print the admin kubeconfig k3s wrote (read by the CLI with the user's key; never by the worker). */
export const CAT_KUBECONFIG_SCRIPT = `${PRELUDE}
$SUDO cat "$P/etc/rancher/k3s/k3s.yaml"`;

/** `key=value` lines → map (later keys win). */
export function keyValues(text: string): Map<string, string> {
  const kv = new Map<string, string>();
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) kv.set(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  return kv;
}

/** The API port from a `api_port=` line; 6443 when the config names none. */
export function apiPortOf(text: string): number {
  const n = Number(keyValues(text.split(SECTION)[0] ?? '').get('api_port'));
  return Number.isInteger(n) && n > 0 ? n : 6443;
}
