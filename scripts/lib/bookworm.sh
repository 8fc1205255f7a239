# A Debian 12 (bookworm) minbase root built once with debootstrap and cached, for
# scripts/check-package (a fresh system to install the .deb into: copy it per run) and
# scripts/container (the base image, `podman import`ed), and the same root with systemd for
# scripts/check-systemd (booted with systemd-nspawn).
#
#   . "$(dirname "$0")/lib/bookworm.sh"      (after lib/common.sh)
#   bookworm_rootfs                          prints the cached root's path, building it first
#                                            when missing (debootstrap --variant=minbase, ~2 min;
#                                            returns 1 with the reason on stderr when it cannot)
#   bookworm_systemd_rootfs                  prints the path of that root plus systemd, systemd-sysv
#                                            and dbus (Debian's system bus and its policy; no
#                                            Recommends), built from it once and cached (~1 min)
#
#   BOOKWORM_CACHE=DIR   the cache (default /var/cache/ble-mqtt-bridge/bookworm: rootfs, stamp,
#                        debootstrap.log, lock, systemd-rootfs, systemd-stamp, systemd.log);
#                        DEBIAN_MIRROR=URL the mirror (default deb.debian.org)

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

bookworm_systemd_rootfs() {
    local base rootfs=$bookworm_cache/systemd-rootfs
    base=$(bookworm_rootfs) || return 1
    (
        exec 9>"$bookworm_cache/lock"
        flock -w 900 9 || { warn "another run holds $bookworm_cache/lock for 15 min"; exit 1; }
        # Rebuilt when the minbase root is newer (a rebuilt cache).
        [ -f "$bookworm_cache/systemd-stamp" ] && [ -x "$rootfs/lib/systemd/systemd" ] \
            && [ ! "$bookworm_cache/stamp" -nt "$bookworm_cache/systemd-stamp" ] && exit 0
        warn "building the Debian bookworm root with systemd in $rootfs (once)"
        rm -rf "$rootfs" "$rootfs.tmp" "$bookworm_cache/systemd-stamp"
        cp -a "$base" "$rootfs.tmp" || { warn "cannot copy $base"; exit 1; }
        # No daemon is started while installing; the resolver of the host for apt.
        printf '#!/bin/sh\nexit 101\n' >"$rootfs.tmp/usr/sbin/policy-rc.d"
        chmod 755 "$rootfs.tmp/usr/sbin/policy-rc.d"
        cp /etc/resolv.conf "$rootfs.tmp/etc/resolv.conf"
        if ! unshare --mount --propagation private /bin/sh -c '
                mount -t proc proc "$1/proc" && exec chroot "$1" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
                    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive /bin/sh -c \
                    "apt-get update -q && apt-get install -y -q --no-install-recommends systemd systemd-sysv dbus \
                     && apt-get clean"' sh "$rootfs.tmp" >"$bookworm_cache/systemd.log" 2>&1; then
            tail -5 "$bookworm_cache/systemd.log" >&2
            warn "apt-get install systemd systemd-sysv dbus in the bookworm root failed (log: $bookworm_cache/systemd.log)"
            exit 1
        fi
        rm -f "$rootfs.tmp/usr/sbin/policy-rc.d" "$rootfs.tmp/var/lib/apt/lists/"*_Packages
        mv "$rootfs.tmp" "$rootfs"
        touch "$bookworm_cache/systemd-stamp"
    ) || return 1
    printf '%s\n' "$rootfs"
}
