#!/usr/bin/env bash
# run.sh OUT [STAGE...] — runs the GPU bundle on the GPU machine and writes
# logs and tables into OUT. Stages (default: all of them, in this order):
#   info    the machine: GPUs, driver, links
#   test    the cuda-tagged tests of the root package (RINGO_TESTS: -test.run pattern)
#   bench   ringo bench on GPUs 0,1 (RINGO_BENCH_FLAGS)
#   nccl    nccl-tests' all_reduce_perf -g 2 on the NCCL PyTorch ships (same flags)
#   compare the two tables side by side
set -uo pipefail
out=${1:?usage: run.sh OUT [STAGE...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
stages=${*:-info test bench nccl compare}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export RINGO_TIMEOUT=${RINGO_TIMEOUT:-60s}
flags=${RINGO_BENCH_FLAGS:--b 8 -e 8G -f 2 -n 20 -w 5 -c 1}
status=0
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
		grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|_test.go' "$out/tests.log" | grep -v '=== RUN' | tail -40
		;;
	bench)
		"$here/ringo" bench --gpus 0,1 $flags >"$out/ringo.txt" 2>"$out/ringo.err" || status=1
		tail -3 "$out/ringo.err"
		;;
	nccl)
		lib=$(python3 -c 'import nvidia.nccl as m, os; print(os.path.join(m.__path__[0], "lib"))')
		LD_LIBRARY_PATH=$lib "$here/all_reduce_perf" -g 2 $flags >"$out/nccl.txt" 2>&1 || status=1
		grep -E '^# (nccl-tests|Out of|Avg)' "$out/nccl.txt"
		;;
	compare)
		"$here/ringo" compare -a nccl -b ringo "$out/nccl.txt" "$out/ringo.txt" | tee "$out/compare.txt"
		;;
	*)
		echo "unknown stage $stage"
		status=2
		;;
	esac
done
exit $status
