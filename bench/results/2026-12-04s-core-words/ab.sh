#!/bin/bash
R=${R:-6}; NP=${NP:-4}; FL=${FL:--b 8 -e 2048 -f 2 -n 1000 -w 100 -c 0}
for r in $(seq $R); do
  for v in ${VS:-A B}; do echo "$v $(/tmp/ringo-$v bench --ranks $NP $FL 2>&1 | awk '$1 ~ /^[0-9]+$/ {printf "%s ", $6}')"; done
  [ -n "$MPI" ] && echo "mpi $(mpirun.openmpi --allow-run-as-root --oversubscribe -np $NP /work/main/build/anchors/mpi_allreduce $FL 2>&1 | awk '$1 ~ /^[0-9]+$/ {printf "%s ", $6}')"
done
