#!/usr/bin/env bash
# Four interleaved rounds on the 2-core VM, 2 ranks, float sum, out of place: Open MPI's all-reduce, ringo on
# its own buffers, ringo with its buffers in windows (-R); outputs NAME.ROUND.
set -u
go build -o bin/ringo ./cmd/ringo
for r in 1 2 3 4; do
  mpirun.openmpi --allow-run-as-root -np 2 build/anchors/mpi_allreduce -b 2M -e 32M -f 2 -n 20 -w 5 -c 0 >mpi.$r 2>&1
  bin/ringo bench --ranks 2 -b 2M -e 32M -f 2 -n 20 -w 5 -c 0 >own.$r 2>&1
  bin/ringo bench --ranks 2 -b 2M -e 32M -f 2 -n 20 -w 5 -c 0 -R >win.$r 2>&1
done
