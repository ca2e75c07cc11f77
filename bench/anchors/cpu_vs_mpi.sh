#!/usr/bin/env bash
# cpu_vs_mpi.sh: ringo's CPU all-reduce next to Open MPI's MPI_Allreduce and
# Gloo's (PyTorch's CPU backend).
#
#   bench/anchors/cpu_vs_mpi.sh [-b 8 -e 128M -f 2 -n 20 -w 5 -c 1 ...]
#   bench/anchors/cpu_vs_mpi.sh --deps     only install Open MPI and PyTorch if missing
#
# Installs Open MPI (Debian: openmpi-bin, libopenmpi-dev) when its wrapper,
# header or launcher is missing and Debian's python3-torch when no python3
# imports torch, builds mpi_allreduce.c with mpicc.openmpi into
# build/anchors/, and runs ROUNDS rounds: each runs it under mpirun.openmpi
# with NP ranks, then ringo's benchmark twice (the sizes to SPLIT_BYTES
# first, every library, then the larger ones) — on buffers of its own (Go
# slices, as any caller's) and with -R (buffers from ringo.HostAlloc
# registered as windows, which collectives read and write in place, as
# nccl-tests' -R does with NCCL's registered buffers) — all with the same
# flags; the first round runs gloo_allreduce.py with NP ranks too. It saves
# every run's output in build/anchors/ (NAME.out.ROUND), keeps for each
# library and size the run of median time (NAME.out), and prints the
# comparisons of their out-of-place columns (each ringo run against each
# library), matched by size. GLOO=0 leaves Gloo out, WINDOWS=0 the -R run.
#
# Environment:
#   NP               ranks for both benchmarks (default 2)
#   RINGO_BENCH_CMD  ringo's benchmark command, the flags are appended
#                    (default: bin/ringo bench --ranks $NP); the -R run
#                    appends -R to it
#   MPIRUN_ARGS      extra mpirun arguments (default: none)
#   GLOO             0: no Gloo run (default 1)
#   WINDOWS          0: no ringo -R run (default 1)
#   ROUNDS           rounds of the runs of Open MPI and ringo, one after
#                    the other; each size is compared at the median
#                    run of each (default 5; every run's output is kept)
#   SPLIT_BYTES      each round runs the sizes up to this first, every
#                    library, then the others (default 65536)
#   SMALL_ITERS      iterations of each size up to SPLIT_BYTES, a tenth of
#                    it as warm-up, for every library, in place of the
#                    flags' -n and -w (default 1000, as OSU's
#                    micro-benchmarks time small messages; 0: the flags')
#
# Exit status: non-zero when either benchmark fails (including #wrong > 0);
# the comparison is still printed from whatever rows both produced.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

NP=${NP:-2}
RINGO_BENCH_CMD=${RINGO_BENCH_CMD:-"bin/ringo bench --ranks $NP"}
MPIRUN_ARGS=${MPIRUN_ARGS:-}
GLOO=${GLOO:-1}
WINDOWS=${WINDOWS:-1}
ROUNDS=${ROUNDS:-5}
SPLIT_BYTES=${SPLIT_BYTES:-65536}
SMALL_ITERS=${SMALL_ITERS:-1000}
OUT=build/anchors

# Open MPI's own wrapper and launcher: plain mpicc and mpirun are Debian
# alternatives that MPICH (installed for the launcher tests) may hold.
MPICC=mpicc.openmpi
MPIRUN=mpirun.openmpi

# have_openmpi reports whether Open MPI's wrapper, launcher and header
# (libopenmpi-dev) are installed.
have_openmpi() {
	command -v $MPICC >/dev/null 2>&1 && command -v $MPIRUN >/dev/null 2>&1 || return 1
	local d
	for d in $($MPICC -showme:incdirs 2>/dev/null); do
		[ -f "$d/mpi.h" ] && return 0
	done
	return 1
}

# ensure_mpi installs Open MPI's compiler wrapper, header and launcher when
# missing.
ensure_mpi() {
	if have_openmpi; then
		return 0
	fi
	local sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "cpu_vs_mpi: mpicc/mpirun missing; install openmpi-bin and libopenmpi-dev (needs root or sudo)" >&2
			return 1
		fi
		sudo=(sudo)
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "cpu_vs_mpi: mpicc/mpirun missing and no apt-get; install Open MPI by hand" >&2
		return 1
	fi
	echo "cpu_vs_mpi: installing Open MPI (openmpi-bin libopenmpi-dev)" >&2
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openmpi-bin libopenmpi-dev
}

# torch_python prints a python3 that imports torch (the PATH's, else
# Debian's /usr/bin/python3, where python3-torch installs), or nothing.
torch_python() {
	local py
	for py in python3 /usr/bin/python3; do
		if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import torch.distributed' >/dev/null 2>&1; then
			command -v "$py"
			return 0
		fi
	done
}

# ensure_torch installs Debian's python3-torch (Gloo's side) when no python3
# imports torch.
ensure_torch() {
	if [ -n "$(torch_python)" ]; then
		return 0
	fi
	local sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || { echo "cpu_vs_mpi: no python3 imports torch; install python3-torch (needs root or sudo), or GLOO=0" >&2; return 1; }
		sudo=(sudo)
	fi
	command -v apt-get >/dev/null 2>&1 || { echo "cpu_vs_mpi: no python3 imports torch and no apt-get; install PyTorch by hand, or GLOO=0" >&2; return 1; }
	echo "cpu_vs_mpi: installing Debian's python3-torch (Gloo)" >&2
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-torch
}

if [ "${1:-}" = "--deps" ]; then
	ensure_mpi
	[ "$GLOO" = 0 ] || ensure_torch
	exit 0
fi

case "$NP" in
'' | *[!0-9]* | 0)
	echo "cpu_vs_mpi: NP=$NP: want a positive number of ranks" >&2
	exit 2
	;;
esac
case "$ROUNDS" in
'' | *[!0-9]* | 0)
	echo "cpu_vs_mpi: ROUNDS=$ROUNDS: want a positive number of rounds" >&2
	exit 2
	;;
esac
case "$SPLIT_BYTES" in
'' | *[!0-9]*)
	echo "cpu_vs_mpi: SPLIT_BYTES=$SPLIT_BYTES: want a number of bytes" >&2
	exit 2
	;;
esac
case "$SMALL_ITERS" in
'' | *[!0-9]*)
	echo "cpu_vs_mpi: SMALL_ITERS=$SMALL_ITERS: want a number of iterations" >&2
	exit 2
	;;
esac

flags=("$@")
if [ ${#flags[@]} -eq 0 ]; then
	flags=(-b 8 -e 128M -f 2 -n 20 -w 5 -c 1)
fi

ensure_mpi
mkdir -p "$OUT"

$MPICC -O2 -Wall -Wextra -std=c11 -o "$OUT/mpi_allreduce" bench/anchors/mpi_allreduce.c -lm

mpi_out=$OUT/mpi_allreduce.out
ringo_out=$OUT/ringo.out
win_out=$OUT/ringo-windows.out
gloo_out=$OUT/gloo_allreduce.out
mpi_rc=0
ringo_rc=0
win_rc=0
gloo_rc=0

# size N prints N — digits, with K, M or G for 2^10, 2^20, 2^30, as
# nccl-tests reads its sizes — in bytes, or nothing for anything else.
size() {
	local n=${1%[KkMmGg]} mult=1
	case "$n" in '' | *[!0-9]*) return ;; esac
	case "$1" in
	*[Kk]) mult=1024 ;;
	*[Mm]) mult=$((1024 * 1024)) ;;
	*[Gg]) mult=$((1024 * 1024 * 1024)) ;;
	esac
	echo $((n * mult))
}

# The sweep runs in two parts, the sizes up to SPLIT_BYTES, then the
# others, so that each library's small sizes — quick, and where the VM's
# state decides most — run seconds apart from the others' rather than a
# minute (Open MPI's largest sizes take that long). segments holds each
# part's flags, one string each: the flags as given, whole, when they do
# not name -b, -e and a factor -f of 2 or more plainly, or when every size
# falls on one side. The small part runs SMALL_ITERS iterations a size:
# twenty calls of half a microsecond last 10 µs, which one interrupt
# doubles.
segments=("${flags[*]}")
b= e= f=2 bi= ei=
for ((i = 0; i + 1 < ${#flags[@]}; i++)); do
	case "${flags[i]}" in
	-b) bi=$i b=$(size "${flags[i + 1]}") ;;
	-e) ei=$i e=$(size "${flags[i + 1]}") ;;
	-f) f=${flags[i + 1]} ;;
	esac
done
case "$f" in '' | *[!0-9]*) f=0 ;; esac
if [ -n "$b" ] && [ -n "$e" ] && [ "$b" -gt 0 ] && [ "$f" -ge 2 ] && [ "$b" -le "$SPLIT_BYTES" ] && [ "$e" -gt "$SPLIT_BYTES" ]; then
	last=$b
	while [ $((last * f)) -le "$SPLIT_BYTES" ]; do last=$((last * f)); done
	small=("${flags[@]}") large=("${flags[@]}")
	small[ei + 1]=$last
	large[bi + 1]=$((last * f))
	if [ "$SMALL_ITERS" -gt 0 ]; then
		small+=(-n "$SMALL_ITERS" -w $((SMALL_ITERS / 10)))
	fi
	segments=("${small[*]}" "${large[*]}")
fi

# Each round runs, part by part, Open MPI, ringo and ringo -R one after
# the other, so that a change of the machine's state between runs (the
# 2-core development VM's cross-core latency moves by 3× every few
# minutes) falls on every library alike; Gloo runs once, in the first
# round, over the whole sweep.
for round in $(seq "$ROUNDS"); do
	: >"$mpi_out.$round"
	: >"$ringo_out.$round"
	[ "$WINDOWS" = 0 ] || : >"$win_out.$round"
	for seg in "${segments[@]}"; do
		read -ra sf <<<"$seg"
		echo "# === Open MPI, round $round of $ROUNDS: $MPIRUN -np $NP $OUT/mpi_allreduce ${sf[*]}"
		# shellcheck disable=SC2086 # MPIRUN_ARGS is a list of words
		$MPIRUN --allow-run-as-root --oversubscribe -np "$NP" $MPIRUN_ARGS "$OUT/mpi_allreduce" "${sf[@]}" |
			tee -a "$mpi_out.$round" || mpi_rc=$?
		echo

		echo "# === ringo, round $round of $ROUNDS: $RINGO_BENCH_CMD ${sf[*]}"
		# The command is a shell fragment (it may set variables or use a wrapper).
		bash -c "$RINGO_BENCH_CMD \"\$@\"" ringo-bench "${sf[@]}" | tee -a "$ringo_out.$round" || ringo_rc=$?
		echo

		if [ "$WINDOWS" != 0 ]; then
			echo "# === ringo -R (buffers in host windows), round $round of $ROUNDS: $RINGO_BENCH_CMD -R ${sf[*]}"
			bash -c "$RINGO_BENCH_CMD -R \"\$@\"" ringo-bench "${sf[@]}" | tee -a "$win_out.$round" || win_rc=$?
			echo
		fi
	done

	if [ "$GLOO" != 0 ] && [ "$round" = 1 ]; then
		ensure_torch
		py=$(torch_python)
		echo "# === Gloo: $py bench/anchors/gloo_allreduce.py --np $NP ${flags[*]}"
		"$py" bench/anchors/gloo_allreduce.py --np "$NP" "${flags[@]}" | tee "$gloo_out" || gloo_rc=$?
		echo
	fi
done

# median OUT IN... writes to OUT, for each size of the inputs' data rows
# (lines that start with a number), the row whose out-of-place time
# (field 6) is the median of the inputs' — the lower of the middle two
# for an even count — so a row's time and bandwidth come from one run.
median() {
	local out=$1
	shift
	awk -v rounds=$# '
function row(f) { return f ~ /^[0-9]+$/ && NF >= 9 }
row($1) { s = $1; if (!(s in k)) order[++n] = s; k[s]++; t[s, k[s]] = $6 + 0; line[s, k[s]] = $0 }
END {
	printf "# per size, the run of median out-of-place time of %d\n", rounds
	for (i = 1; i <= n; i++) {
		s = order[i]; m = k[s]
		for (a = 1; a <= m; a++) idx[a] = a
		for (a = 2; a <= m; a++)
			for (b = a; b > 1 && t[s, idx[b]] < t[s, idx[b - 1]]; b--) { x = idx[b]; idx[b] = idx[b - 1]; idx[b - 1] = x }
		print line[s, idx[int((m + 1) / 2)]]
	}
}' "$@" >"$out"
}

median "$mpi_out" $(seq -f "$mpi_out.%g" "$ROUNDS")
median "$ringo_out" $(seq -f "$ringo_out.%g" "$ROUNDS")
[ "$WINDOWS" = 0 ] || median "$win_out" $(seq -f "$win_out.%g" "$ROUNDS")

# compare NAME OUT RC LABEL ROUT RRC prints ringo's run LABEL (its output
# ROUT, its exit status RRC) against library NAME (its output OUT, its
# exit status RC). Data rows are the lines that start with a number;
# fields 1 size, 3 type, 6 time, 8 busbw (out-of-place). Ratios ringo/NAME:
# busbw above 1 means ringo is faster, time below 1 means ringo is faster.
# A busbw printed as 0.00 gives no ratio; the time ratio is the one to read
# there.
compare() {
awk -v np="$NP" -v name="$1" -v mpi_rc="$3" -v label="$4" -v ringo_rc="$6" '
function ratio(a, b) { return (b > 0 && a > 0) ? sprintf("%.2f", a / b) : "-" }
function row(f) { return f ~ /^[0-9]+$/ && NF >= 9 }
FILENAME == ARGV[1] && row($1) { if (!($1 in mtime)) { msize[++nm] = $1; mtype[$1] = $3 } mtime[$1] = $6; mbw[$1] = $8 }
FILENAME == ARGV[2] && row($1) { if (!($1 in rtime)) { rsize[++nr] = $1; rtype[$1] = $3 } rtime[$1] = $6; rbw[$1] = $8 }
END {
	# Sizes in the order MPI printed them, then any only ringo printed.
	n = 0
	for (i = 1; i <= nm; i++) order[++n] = msize[i]
	for (i = 1; i <= nr; i++) if (!(rsize[i] in mtime)) order[++n] = rsize[i]
	type = nm ? mtype[msize[1]] : (nr ? rtype[rsize[1]] : "?")
	printf "# === %s vs %s: out-of-place, %s sum, %d ranks (ratio ringo/%s: busbw > 1 or time < 1 means ringo is faster)\n", label, name, type, np, name
	printf "#%13s%12s%12s%8s%12s%12s%8s\n", "size", name " busbw", "ringo busbw", "ratio", name " time", "ringo time", "ratio"
	printf "#%13s%12s%12s%8s%12s%12s%8s\n", "(B)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", ""
	lbw = 0; lt = 0; kbw = 0; kt = 0
	for (i = 1; i <= n; i++) {
		s = order[i]
		mb = (s in mbw) ? mbw[s] : "-"; rb = (s in rbw) ? rbw[s] : "-"
		mt = (s in mtime) ? mtime[s] : "-"; rt = (s in rtime) ? rtime[s] : "-"
		both = (s in mbw) && (s in rbw)
		bwr = both ? ratio(rb + 0, mb + 0) : "-"
		tr = both ? ratio(rt + 0, mt + 0) : "-"
		printf "%14s%12s%12s%8s%12s%12s%8s\n", s, mb, rb, bwr, mt, rt, tr
		if (bwr != "-") { lbw += log(rb / mb); kbw++ }
		if (tr != "-") { lt += log(rt / mt); kt++ }
	}
	if (kbw) printf "# geometric mean of busbw ratio ringo/%s : %.2f (%d sizes)\n", name, exp(lbw / kbw), kbw
	if (kt) printf "# geometric mean of time ratio ringo/%s  : %.2f (%d sizes)\n", name, exp(lt / kt), kt
	if (mpi_rc != 0) printf "# %s benchmark exited with status %d\n", name, mpi_rc
	if (ringo_rc != 0) printf "# ringo benchmark exited with status %d\n", ringo_rc
}' "$2" "$5"
}

: >"$OUT/compare.out"
for lib in MPI Gloo; do
	[ "$lib" = Gloo ] && [ "$GLOO" = 0 ] && continue
	out=$mpi_out rc=$mpi_rc
	[ "$lib" = Gloo ] && out=$gloo_out rc=$gloo_rc
	compare "$lib" "$out" "$rc" ringo "$ringo_out" "$ringo_rc" | tee -a "$OUT/compare.out"
	echo | tee -a "$OUT/compare.out"
	if [ "$WINDOWS" != 0 ]; then
		compare "$lib" "$out" "$rc" "ringo -R" "$win_out" "$win_rc" | tee -a "$OUT/compare.out"
		echo | tee -a "$OUT/compare.out"
	fi
done

echo "# outputs: $mpi_out $([ "$GLOO" != 0 ] && echo "$gloo_out ")$ringo_out $([ "$WINDOWS" != 0 ] && echo "$win_out ")$OUT/compare.out (each round's: NAME.out.ROUND)"
if [ "$mpi_rc" -ne 0 ] || [ "$gloo_rc" -ne 0 ] || [ "$ringo_rc" -ne 0 ] || [ "$win_rc" -ne 0 ]; then
	exit 1
fi
