#!/bin/sh
# Inputs (set by the gpuprov docker adapter):
#   SSH_AUTHORIZED_KEYS       newline-separated OpenSSH public keys for root
#   GPUPROV_BOOT_SCRIPT_B64   optional base64 of a script rendered by renderShellScript; run once, in the background
set -eu

ssh-keygen -A >/dev/null

umask 077
printf '%s\n' "${SSH_AUTHORIZED_KEYS:-}" > /root/.ssh/authorized_keys
unset SSH_AUTHORIZED_KEYS

if [ -n "${GPUPROV_BOOT_SCRIPT_B64:-}" ] && [ ! -e /var/lib/gpuprov/boot.done ]; then
  printf '%s' "$GPUPROV_BOOT_SCRIPT_B64" | base64 -d > /var/lib/gpuprov/boot.sh
  chmod 0700 /var/lib/gpuprov/boot.sh
  ( /bin/bash /var/lib/gpuprov/boot.sh > /var/log/gpuprov-boot.log 2>&1; echo $? > /var/lib/gpuprov/boot.done ) &
fi
unset GPUPROV_BOOT_SCRIPT_B64

exec /usr/sbin/sshd -D -e
