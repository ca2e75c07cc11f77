export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
timeout 200 build/exp/copy_rate 50 >$OUT/copy_rate-2.txt 2>&1; echo "rc=$?"; cat $OUT/copy_rate-2.txt
