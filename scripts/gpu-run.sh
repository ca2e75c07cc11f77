#!/usr/bin/env bash
# run.sh OUT [STAGE...] — runs the GPU bundle on the GPU machine and writes
# logs and tables into OUT. Stages (default: info test bench nccl compare):
#   info    the machine: GPUs, driver, links
#   test    the cuda-tagged tests of the root package (RINGO_TESTS: -test.run pattern)
#   race    the GPU rank-process tests (IPC, shared memory, sockets, kills,
#           ranks sharing a GPU) under the race detector: ringo-race.test,
#           whose rank processes are itself (RINGO_RACE_TESTS: -test.run)
#   capi    the cuda-tagged tests of capi/ and lib/gpu_smoke (ringo's libnccl.so.2 from C)
#   bench   ringo bench on GPUs 0,1 (RINGO_BENCH_FLAGS)
#   nccl    nccl-tests' all_reduce_perf -g 2 on the NCCL PyTorch ships (same flags)
#   lib     the same all_reduce_perf on ringo's libnccl.so.2 (same flags), then
#           every type and operation (-d all -o all) with checking
#   compare ringo bench's table beside NCCL's, and ringo's library's (when run)
#   tune    ringo tune for the protocols in RINGO_TUNE_PROTOS (default LL128),
#           the others kept from tune/h200x2.json, into OUT/tune.json
#   protos  ringo bench and all_reduce_perf side by side at their defaults and
#           with each protocol forced (NCCL: Ring+LL/LL128/Simple), unchecked
#           (RINGO_PROTOS_FLAGS), then ringo's default checked up to 1 GiB,
#           into OUT/protos/; ringo's tuner reads OUT/tune.json when the tune
#           stage wrote it
#   variants ringo bench with each plan variant beside the ring (RINGO_VARIANT;
#           RINGO_VARIANT_FLAGS), into OUT/variants/; ringo topo (text, JSON)
#   precision the precision variants beside the ring on the same type, with
#           random inputs and each size's error against the exact sum (-error):
#           float with bf16wire, half and bfloat16 with fp32wire, into
#           OUT/precision/ (RINGO_PRECISION_FLAGS)
#   perf    every nccl-tests *_perf in the bundle on NCCL and on ringo's library:
#           the same flags, then every type and op (RINGO_ALL_FLAGS), into
#           OUT/perf/ with a comparison per collective
#   procs   ringo bench with one process per GPU (-procs) over CUDA IPC and,
#           with NCCL_P2P_DISABLE=1, over shared memory; NCCL's all_reduce_perf
#           with NCCL_P2P_DISABLE=1 beside the latter
#   net     the socket transport over loopback TCP, at defaults and with the
#           seed article's NCCL_NSOCKS_PERTHREAD=4 NCCL_SOCKET_NTHREADS=2:
#           ringo tcp (raw TCP, both ways) for the ceiling, ringo's host ranks
#           (NCCL_SHM_DISABLE=1) and GPU ranks, one process per GPU
#           (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1), and NCCL's all_reduce_perf
#           forced onto its socket transport, into OUT/net.txt (RINGO_NET_FLAGS)
#   torch   bench/pytorch: collectives.py on NCCL and on ringo's library
#           (LD_PRELOAD), ddp_train.py on both (RINGO_DDP_STEPS), compare.py
#   fault   bench/pytorch/fault.py: a rank killed mid-training, on ringo (must
#           fail within 60 s), then on NCCL for contrast (RINGO_NCCL_FAULT_TIMEOUT)
#   one     a world of one: all_reduce_perf -g 1 on NCCL and on ringo's library,
#           without and with CUDA graphs (-G 20), times side by side
#           (RINGO_ONE_FLAGS), then every *_perf -g 1 with every type and op,
#           checked, on ringo's library; into OUT/one/
#   shared  ranks sharing GPU 0 (one H200 is enough): ringo bench --gpus 0,0
#           and 0,0,0,0; lib/gpu_smoke with 1, 2 and 4 ranks; bench/pytorch on
#           2 and 4 torchrun ranks on one GPU — collectives.py on ringo, and
#           ddp_train.py on ringo beside Gloo with CUDA tensors (losses bit for
#           bit on 2 ranks, within 1e-3 on 4; RINGO_SHARED_STEPS,
#           RINGO_SHARED_BENCH_FLAGS); into
#           OUT/shared/
#   p2p-tests point-to-point on ringo's library with ranks sharing GPU 0 (one
#           H200 is enough): lib/gpu_smoke with 2 and 4 ranks, then nccl-tests'
#           sendrecv, alltoall, alltoallv, gather, scatter and hypercube
#           *_perf, -g 2 each and -g 4 each but hypercube (its rounds would
#           share a group), every datatype (RINGO_P2P_FLAGS), with
#           RINGO_NCCL_TESTS_GPUS=1 (scripts/nccl-tests-gpus.h puts nccl-tests'
#           devices 0…3 on GPU 0); one line per run with its #wrong; into
#           OUT/p2p/
#   p2p-torch bench/pytorch on ringo (LD_PRELOAD) with 2 and 4 torchrun
#           ranks on GPU 0: p2p.py (send/recv, isend/irecv, batch_isend_irecv,
#           all_to_all_single with equal and unequal splits, all_to_all,
#           gather, scatter, each checked), moe.py (expert parallelism over
#           all_to_all_single) on ringo beside Gloo with CUDA tensors (losses
#           bit for bit on 2 ranks, within 1e-5 on 4; RINGO_MOE_STEPS),
#           pipeline.py (torch.distributed.pipelining, GPipe, checked against
#           the unsplit model); then a summary line per check; into OUT/p2p/
#   shrink  bench/pytorch/shrink.py on ringo (LD_PRELOAD): 4 ranks on GPU 0,
#           one kills itself (kill -9) at a seeded step, the survivors
#           shrink (shrink_group, NCCL_SHRINK_ABORT) and train on, then a
#           replacement joins (ncclCommGrow through ctypes) and the 4 train
#           to the end; the loss per step and the recovery and grow times
#           (with NCCL_DEBUG=INFO for INIT and BOOTSTRAP: the teardown's
#           phases and the roots' events are in its log); then
#           TestGPUProcessesShrink;
#           into OUT/shrink/ (NCCL for contrast needs 2 GPUs: not here)
set -uo pipefail
out=${1:?usage: run.sh OUT [STAGE...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mkdir -p "$out"
stages=${*:-info test bench nccl compare}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export RINGO_TIMEOUT=${RINGO_TIMEOUT:-60s}
export RINGO_NVTX_INJECTION=$here/libnvtx-inject.so # TestGPUNVTX's recorder, built with the bundle
flags=${RINGO_BENCH_FLAGS:--b 8 -e 8G -f 2 -n 20 -w 5 -c 1}
allflags=${RINGO_ALL_FLAGS:--b 8 -e 1M -f 8 -n 1 -w 1 -c 1}
nccl_lib() { python3 -c 'import nvidia.nccl as m, os; print(os.path.join(m.__path__[0], "lib"))'; }
status=0
summary() { grep -E '^(--- |PASS|FAIL|ok|panic)|_test.go' "$1" | tail -40; }
for stage in $stages; do
	echo "=== $stage"
	case $stage in
	info)
		nvidia-smi -L | tee "$out/info.txt"
		nvidia-smi topo -m >>"$out/info.txt" 2>&1
		nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >>"$out/info.txt"
		;;
	test)
		t=${RINGO_TEST_TIMEOUT:-540}
		timeout "$t" "$here/ringo.test" -test.v -test.timeout "$((t - 10))s" -test.run "${RINGO_TESTS:-GPU}" >"$out/tests.log" 2>&1 || status=1
		summary "$out/tests.log"
		;;
	race)
		timeout 400 "$here/ringo-race.test" -test.v -test.timeout 390s \
			-test.run "${RINGO_RACE_TESTS:-TestGPUProcesses|TestGPUProcessKilled|TestGPUSharedGPU}" >"$out/race.log" 2>&1 || status=1
		summary "$out/race.log"
		grep -c "WARNING: DATA RACE" "$out/race.log" | sed 's/^/data races reported: /'
		;;
	capi)
		# Go runs a package's tests in its directory; they find the
		# library in build/lib.
		[ -e "$repo/build/lib" ] || ln -s gpu/lib "$repo/build/lib"
		(cd "$repo/capi" && timeout 120 "$here/capi.test" -test.v -test.timeout 110s) >"$out/capi.log" 2>&1 || status=1
		summary "$out/capi.log"
		timeout 120 "$here/lib/gpu_smoke" >>"$out/capi.log" 2>&1 || status=1
		tail -2 "$out/capi.log"
		;;
	bench)
		"$here/ringo" bench --gpus 0,1 $flags >"$out/ringo.txt" 2>"$out/ringo.err" || status=1
		tail -3 "$out/ringo.err"
		;;
	nccl)
		LD_LIBRARY_PATH=$(nccl_lib) "$here/all_reduce_perf" -g 2 $flags >"$out/nccl.txt" 2>&1 || status=1
		grep -E '^# (nccl-tests|Out of|Avg)' "$out/nccl.txt"
		;;
	lib)
		LD_LIBRARY_PATH=$here/lib "$here/all_reduce_perf" -g 2 $flags >"$out/lib.txt" 2>&1 || status=1
		grep -E '^# (nccl-tests|Out of|Avg)' "$out/lib.txt"
		LD_LIBRARY_PATH=$here/lib timeout 300 "$here/all_reduce_perf" -g 2 -d all -o all -b 8 -e 4M -f 4 -n 2 -w 1 -c 1 >"$out/lib-all.txt" 2>&1 || status=1
		grep -E '^# (Out of|Avg)' "$out/lib-all.txt"
		;;
	compare)
		if [ -s "$out/ringo.txt" ]; then
			"$here/ringo" compare -a nccl -b ringo "$out/nccl.txt" "$out/ringo.txt" | tee "$out/compare.txt"
		fi
		if [ -s "$out/lib.txt" ]; then
			"$here/ringo" compare -a nccl -b libnccl-ringo "$out/nccl.txt" "$out/lib.txt" | tee "$out/compare-lib.txt"
		fi
		;;
	tune)
		timeout 400 "$here/ringo" tune --gpus 0,1 -protos "${RINGO_TUNE_PROTOS:-LL128}" -base "$repo/tune/h200x2.json" \
			-o "$out/tune.json" 2>&1 | tee "$out/tune.log" || status=1
		;;
	protos)
		mkdir -p "$out/protos"
		pf=${RINGO_PROTOS_FLAGS:--b 8 -e 8G -f 2 -n 20 -w 5}
		[ -s "$out/tune.json" ] && export RINGO_TUNE_FILE=$out/tune.json
		for p in default LL LL128 Simple; do
			re="" ne=""
			[ $p = default ] || re="NCCL_PROTO=$p" ne="NCCL_ALGO=Ring NCCL_PROTO=$p"
			env $re timeout 300 "$here/ringo" bench --gpus 0,1 $pf -c 0 >"$out/protos/ringo-$p.txt" 2>&1 || status=1
			env $ne LD_LIBRARY_PATH=$(nccl_lib) timeout 300 "$here/all_reduce_perf" -g 2 $pf -c 0 >"$out/protos/nccl-$p.txt" 2>&1 || status=1
			"$here/ringo" compare -a "nccl-$p" -b "ringo-$p" "$out/protos/nccl-$p.txt" "$out/protos/ringo-$p.txt" >"$out/protos/compare-$p.txt" || status=1
			echo "$p: $(grep -h '^# geometric' "$out/protos/compare-$p.txt" | tr -s ' ' | tr '\n' ' ')"
		done
		timeout 300 "$here/ringo" bench --gpus 0,1 -b 8 -e 1G -f 4 -n 2 -w 1 -c 1 >"$out/protos/ringo-default-checked.txt" 2>&1 || status=1
		grep -E '^# (Out of|Avg)' "$out/protos/ringo-default-checked.txt"
		;;
	variants)
		mkdir -p "$out/variants"
		"$here/ringo" topo >"$out/variants/topo.txt" 2>&1 || status=1
		"$here/ringo" topo -json >"$out/variants/topo.json" 2>&1 || status=1
		cat "$out/variants/topo.txt"
		vf=${RINGO_VARIANT_FLAGS:--b 8 -e 64M -f 2 -n 20 -w 5 -c 1}
		[ -s "$out/tune.json" ] && export RINGO_TUNE_FILE=$out/tune.json
		for v in ring oneshot; do
			for p in default LL; do
				pe=""
				[ $p = default ] || pe="NCCL_PROTO=$p"
				env $pe RINGO_VARIANT=$v timeout 200 "$here/ringo" bench --gpus 0,1 $vf >"$out/variants/$v-$p.txt" 2>&1 || status=1
				echo "$v $p: $(grep -hE '^# (Out of|Avg)' "$out/variants/$v-$p.txt" | tr -s ' ' | tr '\n' ' ')"
			done
		done
		"$here/ringo" compare -a ring -b oneshot "$out/variants/ring-default.txt" "$out/variants/oneshot-default.txt" | tail -40
		;;
	precision)
		mkdir -p "$out/precision"
		pf=${RINGO_PRECISION_FLAGS:--b 64K -e 1G -f 4 -n 20 -w 5 -c 1}
		for run in ring:float bf16wire:float ring:half fp32wire:half ring:bfloat16 fp32wire:bfloat16; do
			v=${run%%:*} d=${run#*:}
			RINGO_VARIANT=$v timeout 200 "$here/ringo" bench --gpus 0,1 -error -d "$d" $pf >"$out/precision/$v-$d.txt" 2>&1 || status=1
			echo "$v $d: $(grep -hE '^# (Out of|Avg)' "$out/precision/$v-$d.txt" | tr -s ' ' | tr '\n' ' ')"
		done
		for d in float half bfloat16; do
			v=fp32wire
			[ $d = float ] && v=bf16wire
			"$here/ringo" compare -a "ring-$d" -b "$v-$d" "$out/precision/ring-$d.txt" "$out/precision/$v-$d.txt" | tee "$out/precision/compare-$d.txt"
		done
		;;
	perf)
		mkdir -p "$out/perf"
		for b in "$here"/*_perf; do
			t=$(basename "$b" _perf)
			for side in nccl ringo; do
				lib=$(nccl_lib)
				[ $side = ringo ] && lib=$here/lib
				LD_LIBRARY_PATH=$lib timeout 300 "$b" -g 2 $flags >"$out/perf/$t-$side.txt" 2>&1 || status=1
				LD_LIBRARY_PATH=$lib timeout 300 "$b" -g 2 -d all -o all $allflags >"$out/perf/$t-$side-all.txt" 2>&1 || status=1
				for f in "$out/perf/$t-$side.txt" "$out/perf/$t-$side-all.txt"; do
					echo "$(basename "$f" .txt): $(grep -hE '^# (Out of|Avg)' "$f" | tr -s ' ' | tr '\n' ' ')$(grep -hiE 'fail|error' "$f" | head -1)"
				done
			done
			"$here/ringo" compare -a nccl -b ringo "$out/perf/$t-nccl.txt" "$out/perf/$t-ringo.txt" >"$out/perf/$t-compare.txt" || status=1
		done
		;;
	procs)
		"$here/ringo" bench --gpus 0,1 --procs $flags >"$out/procs-p2p.txt" 2>&1 || status=1
		NCCL_P2P_DISABLE=1 "$here/ringo" bench --gpus 0,1 --procs $flags >"$out/procs-shm.txt" 2>&1 || status=1
		NCCL_P2P_DISABLE=1 LD_LIBRARY_PATH=$(nccl_lib) "$here/all_reduce_perf" -g 2 $flags >"$out/nccl-shm.txt" 2>&1 || status=1
		for f in procs-p2p procs-shm nccl-shm; do
			echo "$f: $(grep -hE '^# (Out of|Avg)' "$out/$f.txt" | tr -s ' ' | tr '\n' ' ')"
		done
		"$here/ringo" compare -a nccl-shm -b ringo-shm "$out/nccl-shm.txt" "$out/procs-shm.txt"
		;;
	net)
		nf=${RINGO_NET_FLAGS:--b 1M -e 1G -f 4 -n 5 -w 2 -c 1}
		tuned="NCCL_NSOCKS_PERTHREAD=4 NCCL_SOCKET_NTHREADS=2"
		{
			for s in 4 8; do "$here/ringo" tcp -streams $s -t 5s; done
			echo "--- ringo, host buffers, 2 processes, sockets over lo, defaults"
			NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo timeout 300 "$here/ringo" bench --ranks 2 $nf 2>&1
			echo "--- ringo, host buffers, 2 processes, sockets over lo, $tuned"
			env $tuned NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo timeout 300 "$here/ringo" bench --ranks 2 $nf 2>&1
			echo "--- ringo, GPU buffers, one process per GPU, NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1, defaults"
			NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 timeout 300 "$here/ringo" bench --gpus 0,1 --procs $nf 2>&1
			echo "--- ringo, GPU buffers, one process per GPU, NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1, $tuned"
			env $tuned NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 timeout 300 "$here/ringo" bench --gpus 0,1 --procs $nf 2>&1
			echo "--- NCCL, GPU buffers, -g 2, NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1, defaults"
			NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 LD_LIBRARY_PATH=$(nccl_lib) timeout 300 "$here/all_reduce_perf" -g 2 $nf 2>&1
			echo "--- NCCL, GPU buffers, -g 2, NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1, $tuned"
			env $tuned NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 LD_LIBRARY_PATH=$(nccl_lib) timeout 300 "$here/all_reduce_perf" -g 2 $nf 2>&1
		} >"$out/net.txt" || status=1
		grep -E '^(---|slower|# Avg)|^ +[0-9]+ ' "$out/net.txt" | tail -60
		;;
	torch)
		py=$repo/bench/pytorch
		steps=${RINGO_DDP_STEPS:-200}
		run() { timeout 240 torchrun --standalone --nproc_per_node 2 "$@"; }
		{
			echo "--- collectives.py on NCCL"
			run "$py/collectives.py" || status=1
			echo "--- collectives.py on ringo"
			LD_PRELOAD=$here/lib/libnccl.so.2 run "$py/collectives.py" || status=1
			run "$py/ddp_train.py" --steps "$steps" --out "$out/ddp-nccl.csv" || status=1
			LD_PRELOAD=$here/lib/libnccl.so.2 run "$py/ddp_train.py" --steps "$steps" --out "$out/ddp-ringo.csv" || status=1
			python3 "$py/compare.py" "$out/ddp-nccl.csv" "$out/ddp-ringo.csv" || status=1
		} >"$out/torch.log" 2>&1
		grep -E '^(OK|FAIL|---|all collectives|rank [0-9]|steps|  step|median)|Error|error|\.csv' "$out/torch.log" | tail -40
		;;
	fault)
		py=$repo/bench/pytorch
		echo "--- ringo"
		LD_PRELOAD=$here/lib/libnccl.so.2 timeout 400 python3 "$py/fault.py" --timeout 60 2>&1 | tee "$out/fault.txt"
		[ "${PIPESTATUS[0]}" = 0 ] || status=1
		echo "--- NCCL, for contrast"
		timeout 400 python3 "$py/fault.py" --timeout "${RINGO_NCCL_FAULT_TIMEOUT:-20}" 2>&1 | tee -a "$out/fault.txt"
		;;
	one)
		mkdir -p "$out/one"
		of=${RINGO_ONE_FLAGS:--b 8 -e 256M -f 8 -n 200 -w 20 -c 1}
		for side in nccl ringo; do
			lib=$(nccl_lib)
			[ $side = ringo ] && lib=$here/lib
			LD_LIBRARY_PATH=$lib timeout 120 "$here/all_reduce_perf" -g 1 $of >"$out/one/$side.txt" 2>&1 || status=1
			LD_LIBRARY_PATH=$lib timeout 120 "$here/all_reduce_perf" -g 1 $of -G 20 >"$out/one/$side-graph.txt" 2>&1 || status=1
		done
		for b in "$here"/*_perf; do
			LD_LIBRARY_PATH=$here/lib timeout 120 "$b" -g 1 -d all -o all $allflags >"$out/one/$(basename "$b" _perf)-all.txt" 2>&1 || status=1
			echo "$(basename "$b") -g 1 -d all -o all on ringo: $(grep -hE '^# (Out of|Avg)' "$out/one/$(basename "$b" _perf)-all.txt" | tr -s ' ' | tr '\n' ' ')"
		done
		for g in "" -graph; do
			echo "--- all_reduce_perf -g 1 $of ${g:+-G 20}"
			"$here/ringo" compare -times -a nccl -b ringo "$out/one/nccl$g.txt" "$out/one/ringo$g.txt" | tee "$out/one/compare$g.txt"
		done
		;;
	shared)
		mkdir -p "$out/shared"
		py=$repo/bench/pytorch
		steps=${RINGO_SHARED_STEPS:-60}
		for g in 0,0 0,0,0,0; do
			timeout 200 "$here/ringo" bench --gpus $g ${RINGO_SHARED_BENCH_FLAGS:--b 8 -e 256M -f 4 -n 5 -w 2 -c 1} >"$out/shared/bench-$g.txt" 2>&1 || status=1
			echo "ringo bench --gpus $g: $(grep -hE '^# (Out of|Avg)' "$out/shared/bench-$g.txt" | tr -s ' ' | tr '\n' ' ')"
		done
		for n in 1 2 4; do
			LD_LIBRARY_PATH=$here/lib timeout 120 "$here/lib/gpu_smoke" $n >"$out/shared/smoke-$n.txt" 2>&1 || status=1
			echo "gpu_smoke $n ranks: $(tail -1 "$out/shared/smoke-$n.txt")"
		done
		for n in 2 4; do
			run() { timeout 300 torchrun --standalone --nproc_per_node $n "$@"; }
			{
				echo "--- collectives.py, $n ranks on one GPU, on ringo"
				LD_PRELOAD=$here/lib/libnccl.so.2 run "$py/collectives.py" || status=1
				echo "--- ddp_train.py, $n ranks on one GPU, on ringo and on Gloo"
				LD_PRELOAD=$here/lib/libnccl.so.2 run "$py/ddp_train.py" --steps "$steps" --out "$out/shared/ddp-ringo-$n.csv" || status=1
				run "$py/ddp_train.py" --backend gloo --steps "$steps" --out "$out/shared/ddp-gloo-$n.csv" || status=1
				rtol=1e-3
				[ $n = 2 ] && rtol=0
				python3 "$py/compare.py" --rtol $rtol "$out/shared/ddp-gloo-$n.csv" "$out/shared/ddp-ringo-$n.csv" || status=1
			} >"$out/shared/torch-$n.log" 2>&1
			grep -E '^(FAIL|---|all collectives|steps|  step|median)|Error|error' "$out/shared/torch-$n.log" | tail -20
		done
		;;
	p2p-tests)
		mkdir -p "$out/p2p"
		pf=${RINGO_P2P_FLAGS:--b 8 -e 64M -f 4 -n 5 -w 1 -c 1 -d all}
		for n in 2 4; do
			LD_LIBRARY_PATH=$here/lib timeout 90 "$here/lib/gpu_smoke" $n >"$out/p2p/smoke-$n.txt" 2>&1 || status=1
			echo "gpu_smoke $n ranks on one GPU: $(grep -h 'point-to-point' "$out/p2p/smoke-$n.txt") $(tail -1 "$out/p2p/smoke-$n.txt")"
		done
		for t in sendrecv alltoall alltoallv gather scatter hypercube; do
			for g in 2 4; do
				[ $t = hypercube ] && [ $g = 4 ] && continue
				f=$out/p2p/$t-g$g.txt
				RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$here/lib timeout 40 "$here/${t}_perf" -g $g $pf >"$f" 2>&1 || status=1
				# The #wrong columns (out of place, in place: N/A where nccl-tests does not check),
				# one column earlier where a test prints no redop (hypercube_perf).
				awk -v name="${t}_perf -g $g" '
					/^ +[0-9]+ +[0-9]+ / { rows++; o = ($4 ~ /^-?[0-9]+$/) ? -1 : 0; a = $(9 + o); b = $(13 + o)
						if (a != 0) w1 += a; if (b != "N/A" && b != 0) w2 += b; if (b == "N/A") na = 1 }
					/^# Out of bounds/ { oob = $0 } /^# Avg bus/ { avg = $NF }
					END { printf "%s: %d rows, #wrong out of place %d, in place %s; %s; avg busbw %s\n", name, rows, w1, na ? "N/A" : w2 + 0, oob ? oob : "no summary", avg }' "$f"
				grep -hiE 'failure|error|fail' "$f" | head -2
			done
		done
		;;
	p2p-torch)
		mkdir -p "$out/p2p"
		py=$repo/bench/pytorch
		steps=${RINGO_MOE_STEPS:-30}
		for n in 2 4; do
			run() { timeout "$1" torchrun --standalone --nproc_per_node $n "${@:2}"; }
			{
				echo "--- p2p.py, $n ranks on one GPU, on ringo"
				LD_PRELOAD=$here/lib/libnccl.so.2 run 120 "$py/p2p.py" || status=1
				echo "--- moe.py, $n ranks on one GPU, on ringo and on Gloo"
				LD_PRELOAD=$here/lib/libnccl.so.2 run 90 "$py/moe.py" --steps "$steps" --out "$out/p2p/moe-ringo-$n.csv" || status=1
				run 90 "$py/moe.py" --backend gloo --steps "$steps" --out "$out/p2p/moe-gloo-$n.csv" || status=1
				rtol=1e-5
				[ $n = 2 ] && rtol=0
				python3 "$py/compare.py" --rtol $rtol "$out/p2p/moe-gloo-$n.csv" "$out/p2p/moe-ringo-$n.csv" || status=1
				echo "--- pipeline.py, $n stages on one GPU, on ringo"
				LD_PRELOAD=$here/lib/libnccl.so.2 run 90 "$py/pipeline.py" || status=1
			} >"$out/p2p/torch-$n.log" 2>&1
		done
		for n in 2 4; do # the summary, one line per check
			grep -hE '^(---|OK|FAIL|p2p.py|  failed|steps|  step|median|losses)|Error|error' "$out/p2p/torch-$n.log" | grep -v '^rank' | tail -50
		done
		;;
	shrink)
		mkdir -p "$out/shrink"
		py=$repo/bench/pytorch
		echo "--- shrink.py, 4 ranks on GPU 0, on ringo"
		CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} LD_PRELOAD=$here/lib/libnccl.so.2 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP \
			timeout 400 python3 "$py/shrink.py" --seed "${RINGO_SHRINK_SEED:-1}" >"$out/shrink/torch.log" 2>&1 || status=1
		grep -E '^(seed|OK|FAIL|grow:)|recovered|grown|replacement|kill -9|caught|done|Error|error' "$out/shrink/torch.log" | tail -40
		echo "--- TestGPUProcessesShrink"
		RINGO_TEST_GPUS=0 timeout 400 "$here/ringo.test" -test.run 'TestGPUProcessesShrink' -test.v >"$out/shrink/test.log" 2>&1 || status=1
		summary "$out/shrink/test.log"
		;;
	*)
		echo "unknown stage $stage"
		status=2
		;;
	esac
done
exit $status
