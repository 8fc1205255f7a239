# A Debian 12 (bookworm) minbase root built once with debootstrap and cached, for
# scripts/check-package (a fresh system to install the .deb into: copy it per run) and
# scripts/container (the base image, `podman import`ed).
#
#   . "$(dirname "$0")/lib/bookworm.sh"      (after lib/common.sh)
#   bookworm_rootfs                          prints the cached root's path, building it first
#                                            when missing (debootstrap --variant=minbase, ~2 min;
#                                            returns 1 with the reason on stderr when it cannot)
#
#   BOOKWORM_CACHE=DIR   the cache (default /var/cache/ble-mqtt-bridge/bookworm: rootfs, stamp,
#                        debootstrap.log, lock); DEBIAN_MIRROR=URL the mirror (default deb.debian.org)

bookworm_cache=${BOOKWORM_CACHE:-/var/cache/ble-mqtt-bridge/bookworm}

bookworm_rootfs() {
    local mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian} rootfs=$bookworm_cache/rootfs
    mkdir -p "$bookworm_cache" || { warn "cannot create $bookworm_cache"; return 1; }
    (
        # One run at a time builds the root; others wait for it.
        exec 9>"$bookworm_cache/lock"
        flock -w 900 9 || { warn "another run holds $bookworm_cache/lock for 15 min"; exit 1; }
        [ -f "$bookworm_cache/stamp" ] && [ -x "$rootfs/usr/bin/apt-get" ] && exit 0
        command -v debootstrap >/dev/null 2>&1 || ensure_packages debootstrap >&2 || exit 1
        warn "building the Debian bookworm root in $rootfs (debootstrap --variant=minbase, once)"
        rm -rf "$rootfs" "$rootfs.tmp" "$bookworm_cache/stamp"
        if ! debootstrap --variant=minbase bookworm "$rootfs.tmp" "$mirror" >"$bookworm_cache/debootstrap.log" 2>&1; then
            tail -5 "$bookworm_cache/debootstrap.log" >&2
            warn "debootstrap bookworm failed (log: $bookworm_cache/debootstrap.log)"
            exit 1
        fi
        rm -rf "$rootfs.tmp/var/cache/apt/archives/"*.deb "$rootfs.tmp/var/lib/apt/lists/"*_Packages
        # The point release and its security updates, as an installed system has them.
        printf '%s\n' "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
            "deb ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main" \
            >"$rootfs.tmp/etc/apt/sources.list"
        mv "$rootfs.tmp" "$rootfs"
        touch "$bookworm_cache/stamp"
    ) || return 1
    printf '%s\n' "$rootfs"
}
