#!/bin/bash
R=${R:-8}; FL=${FL:--b 8 -e 512 -f 2 -n 1000 -w 100 -c 0}
for r in $(seq $R); do
  for v in ${VS:-M P}; do echo "$v $(/tmp/ringo-$v bench --ranks 2 $FL 2>&1 | awk '$1 ~ /^[0-9]+$/ {printf "%s ", $6}')"; done
  echo "mpi $(mpirun.openmpi --allow-run-as-root -np 2 /work/main/build/anchors/mpi_allreduce $FL 2>&1 | awk '$1 ~ /^[0-9]+$/ {printf "%s ", $6}')"
done
