#!/usr/bin/env bash
# The twentieth session's second GPU call: issue 20's point-to-point checks on this code (run.sh's
# p2p-tests and p2p-torch stages: gpu_smoke, every point-to-point *_perf with every datatype,
# PyTorch's send/recv, all-to-all, gather/scatter, MoE beside Gloo and the GPipe pipeline), then
# send/recv against the GPU's copy and the 4-rank all-to-all against its send/recv, 3 interleaved
# rounds. Ranks share GPU 0. Logs go into one archive (8 files at most come back).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd build && tar -xJf slim9.tar.xz && cd ..
g=build/gpu W=$OUT/work
mkdir -p $W
t0=$(date +%s); el() { echo "($(( $(date +%s) - t0 )) s)"; }
bash $g/run.sh $W p2p-tests 2>&1 | tail -14
echo "p2p-tests $(el)"
RINGO_MOE_STEPS=20 timeout 240 bash $g/run.sh $W p2p-torch 2>&1 | tail -14
echo "p2p-torch $(el)"
for r in 1 2 3; do
	for gpus in 0 0,0 0,0,0,0; do
		echo "### round $r --gpus $gpus sendrecv" >>$OUT/bw.txt
		timeout 60 $g/ringo bench --gpus $gpus -coll sendrecv -b 64M -e 256M -f 2 -n 20 -w 5 -c 0 >>$OUT/bw.txt 2>&1
	done
	echo "### round $r --gpus 0,0,0,0 alltoall" >>$OUT/bw.txt
	timeout 60 $g/ringo bench --gpus 0,0,0,0 -coll alltoall -b 256M -e 1G -f 4 -n 10 -w 3 -c 0 >>$OUT/bw.txt 2>&1
done
echo "bandwidth $(el)"
tar -czf $OUT/work.tar.gz -C $OUT work && rm -rf $W
awk '/^### /{l=$3" "$5" "$6} $1 ~ /^[0-9]+$/ && NF >= 10 {print l, $1, $6, $8}' $OUT/bw.txt | sort -k2,2 -k3,3 -k4n | awk '{k=$2" "$3" "$4; v[k]=v[k]" "$5"us/"$6"GB/s"; o[k]=1} END {for (k in o) print k":"v[k]}' | sort
