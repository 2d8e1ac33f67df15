#!/usr/bin/env bash
# install-peers.sh: installs, from Debian (12, bookworm), what the benchmark's
# peer proxies need: nginx and its Lua module with lua-resty-core, lua-cjson
# and lua-resty-string (Debian: lua-nginx-string, for resty.sha256 and
# resty.string). Idempotent: apt-get runs only when something is missing.
# It never leaves an nginx service running: the package's default site
# (port 80) is kept from starting, or stopped if it started anyway.
# Run as root (or with sudo).
set -euo pipefail

# Debian package -> the end of the path of a file it installs that the
# peers use (checked with dpkg -L, so the multiarch directory may vary).
# lua-nginx-string is Debian's packaging of openresty/lua-resty-string 0.11,
# with the modules renamed resty.* -> nginx.* (nginx/sha256.lua,
# nginx/string.lua); gateway.lua requires resty.* first, then nginx.*.
declare -A NEED=(
	[nginx]=/usr/sbin/nginx
	[libnginx-mod-http-ndk]=/usr/lib/nginx/modules/ndk_http_module.so
	[libnginx-mod-http-lua]=/usr/lib/nginx/modules/ngx_http_lua_module.so
	[lua-resty-core]=/usr/share/lua/5.1/resty/core.lua
	[lua-resty-lrucache]=/usr/share/lua/5.1/resty/lrucache.lua
	[lua-cjson]=/lua/5.1/cjson.so
	[lua-nginx-string]=/usr/share/lua/5.1/nginx/sha256.lua
)

missing=()
for pkg in "${!NEED[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$pkg")
	fi
done

if [ "${#missing[@]}" -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-peers: need root to install: ${missing[*]}" >&2
		exit 1
	fi
	echo "install-peers: installing ${missing[*]}"
	# Keep the package's postinst from starting nginx on port 80: a
	# policy-rc.d that says "no" (101), unless one is already there.
	own_policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		own_policy=1
	fi
	cleanup() { if [ -n "$own_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi; }
	trap cleanup EXIT
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y --no-install-recommends "${missing[@]}"; then
		apt-get update
		apt-get install -y --no-install-recommends "${missing[@]}"
	fi
	cleanup
	trap - EXIT
fi

# If the default service runs anyway (a system with systemd, or an older
# install), stop it and keep it from starting at boot. Only the Debian
# service is touched: the master whose pid is in /run/nginx.pid.
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl disable --now nginx.service >/dev/null 2>&1 || true
fi
if [ -s /run/nginx.pid ]; then
	pid=$(cat /run/nginx.pid)
	if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q '^nginx: master process /usr/sbin/nginx'; then
		echo "install-peers: stopping the default nginx service (pid $pid)"
		kill -QUIT "$pid" || true
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
fi

# Check that every file the peer templates use is there.
for pkg in "${!NEED[@]}"; do
	files=$(dpkg -L "$pkg" 2>/dev/null || true)
	f=$(grep -m1 -- "${NEED[$pkg]}\$" <<<"$files" || true)
	if [ -z "$f" ] || [ ! -e "$f" ]; then
		echo "install-peers: $pkg is installed but ${NEED[$pkg]} is missing" >&2
		exit 1
	fi
done
echo "install-peers: ok ($(/usr/sbin/nginx -v 2>&1))"
