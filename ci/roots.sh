# SPDX-License-Identifier: MIT
# Clean Debian roots for ci/packages (Debian 12) and ci/trixie-lane
# (Debian 13): made once into a tar by mmdebstrap, unpacked for a run, and
# entered with chroot.  Sourced, not run; the caller defines die().
#
#   root_tar SUITE TAR PACKAGE...   mmdebstrap --variant=apt SUITE with the
#                                   packages into TAR (its log is TAR.log);
#                                   a half-made tar is never left at TAR
#   root_unpack TAR DIR             a fresh DIR from TAR, with /proc, /sys
#                                   and /dev bound in (rbind), the host's
#                                   resolver, apt's date checks and local
#                                   certificate authorities; everything
#                                   mounted is unmounted (umount -l) when
#                                   the shell exits
#   in_root COMMAND...              run in the root last unpacked, as root,
#                                   with a clean environment

root_tar() {
	local suite=$1 tar=$2 include tmp=${2%.tar}.tmp.tar
	shift 2
	command -v mmdebstrap >/dev/null || die "mmdebstrap missing (ci/setup installs it)"
	include=$(IFS=,; echo "$*")
	mkdir -p "$(dirname "$tar")"
	# mmdebstrap makes a tar of a name that ends in .tar.
	rm -f "$tmp"
	mmdebstrap --variant=apt --include="$include" "$suite" "$tmp" >"$tar.log" 2>&1 ||
		{ tail -30 "$tar.log"; die "mmdebstrap $suite (log: $tar.log)"; }
	mv "$tmp" "$tar"
}

root_dir=""
root_mounts=()
root_release() {
	local i
	for ((i = ${#root_mounts[@]} - 1; i >= 0; i--)); do umount -l "${root_mounts[$i]}" 2>/dev/null || true; done
	root_mounts=()
}
root_unpack() {
	local tar=$1 m
	root_dir=$2
	root_release
	# A run killed before its trap leaves binds here: undo them first, and
	# never let rm cross into a bound /proc, /sys or /dev.
	awk -v d="$root_dir/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null || true; done
	rm -rf --one-file-system "$root_dir"
	mkdir -p "$root_dir"
	tar -C "$root_dir" -xf "$tar"
	trap root_release EXIT
	for m in proc sys dev; do
		mount --rbind "/$m" "$root_dir/$m" && root_mounts+=("$root_dir/$m")
	done
	# The root reaches the network as this machine does: its resolver, the
	# date checks its apt makes of an archive's Release (off where the
	# archive is a snapshot, whose suites with a Valid-Until expire), and
	# the certificate authorities it added to Debian's (a proxy's, for one).
	cp /etc/resolv.conf "$root_dir/etc/resolv.conf"
	apt-config dump | grep -E '^Acquire::Check-(Valid-Until|Date) ' >"$root_dir/etc/apt/apt.conf.d/00machine-dates" || true
	if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null && [ -x "$root_dir/usr/sbin/update-ca-certificates" ]; then
		cp /usr/local/share/ca-certificates/*.crt "$root_dir/usr/local/share/ca-certificates/"
		in_root update-ca-certificates >/dev/null 2>&1 || die "update-ca-certificates in $root_dir"
	fi
}
in_root() {
	chroot "$root_dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"
}
