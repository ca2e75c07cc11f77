#!/usr/bin/env bash
# nocuda.sh CMD...: runs CMD with the CUDA toolkit hidden, as a fresh Debian
# machine with only Go sees it: in a private mount namespace, /usr/include
# without the headers of the CUDA packages (Debian's nvidia-cuda-toolkit and
# what it brought: nvidia-cuda-dev, libcupti-dev, thrust, cub, libcu++)
# and their programs in /usr/bin (nvcc, ...) unusable; /usr/local/cuda and
# the nvcc on PATH too, if there are any. Nothing changes outside the
# namespace. Before running CMD it checks that the C compiler no longer
# finds cuda_runtime.h and that no nvcc is on PATH.
#
# Needs root (a mount namespace). Exits 2, saying why, when it cannot make
# one; otherwise with CMD's status. scripts/nocuda_test.go runs make bench
# so; by hand: scripts/nocuda.sh make bench.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: nocuda.sh CMD..." >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
	echo "nocuda: needs root to make a mount namespace" >&2
	exit 2
fi
if ! out=$(unshare -m true 2>&1); then
	echo "nocuda: cannot make a mount namespace (unshare -m: $out)" >&2
	exit 2
fi

tmp=$(mktemp -d /tmp/ringo-nocuda.XXXXXX)
# rmdir, not rm -r, for the mount point of the real /usr/include: mounts
# made in the namespace never show here, but should one, it is left alone.
trap 'rm -rf --one-file-system "$tmp/view"; rmdir "$tmp/include" "$tmp"' EXIT

# The CUDA packages: those built from the toolkit's and the driver's Debian
# sources (and the header libraries the toolkit depends on).
pkgs=$(dpkg-query -W -f '${Package} ${source:Package}\n' 2>/dev/null |
	awk '$2 ~ /^(nvidia-cuda-toolkit|nvidia-graphics-drivers|libthrust|cub|libcudacxx)$/ { print $1 }') || true
files=$(if [ -n "$pkgs" ]; then dpkg -L $pkgs 2>/dev/null; fi | sort -u)

# A view of /usr/include without the packages' headers: a tree of symbolic
# links to the real one (mounted at $tmp/include), which the namespace
# mounts over /usr/include. A directory with hidden files is made in the
# tree, entry by entry; every other entry is one link.
mkdir "$tmp/include" "$tmp/view"
{
	grep '^/usr/include/.' <<<"$files" | while read -r f; do
		[ -d "$f" ] || echo "H ${f#/usr/include/}"
	done
	(cd /usr/include && find . -mindepth 1 -printf 'P %P\n')
} | awk '
	{ p = substr($0, 3) }
	$1 == "H" { hidden[p] = 1; while (sub(/\/[^\/]*$/, "", p)) dirty[p] = 1; next }
	{
		parent = p
		if (!sub(/\/[^\/]*$/, "", parent)) parent = ""
		if (p in hidden || (parent != "" && !(parent in dirty))) next
		print (p in dirty ? "d" : "l"), p
	}' | while read -r op p; do
	if [ "$op" = d ]; then mkdir "$tmp/view/$p"; else ln -s "$tmp/include/$p" "$tmp/view/$p"; fi
done
find "$tmp/view" -mindepth 1 -type d -empty -delete # wholly hidden directories

# The packages' programs, and nvcc wherever PATH finds it.
bins=$(grep -E '^/usr/bin/[^/]+$' <<<"$files" || true)
if p=$(command -v nvcc); then bins+=$'\n'"$(readlink -f "$p")"; fi

# In the namespace: the real /usr/include moves to $tmp/include, the view
# takes its place, /dev/null covers the programs (not executable: neither
# sh's command -v nor exec takes them).
unshare -m bash -c '
set -euo pipefail
tmp=$1 bins=$2
shift 2
mount --make-rprivate /
mount --bind /usr/include "$tmp/include"
mount --bind "$tmp/view" /usr/include
for b in $bins; do
	if [ -f "$b" ]; then mount --bind /dev/null "$b"; fi
done
if [ -d /usr/local/cuda ]; then mount -t tmpfs none /usr/local/cuda; fi
if echo "#include <cuda_runtime.h>" | "${CC:-cc}" -E -x c - >/dev/null 2>&1; then
	echo "nocuda: the C compiler still finds cuda_runtime.h" >&2
	exit 2
fi
if p=$(sh -c "command -v nvcc"); then
	echo "nocuda: nvcc is still on PATH: $p" >&2
	exit 2
fi
echo "nocuda: the CUDA toolkit is hidden (no cuda_runtime.h, no nvcc): $*" >&2
"$@"' nocuda "$tmp" "$bins" "$@"
