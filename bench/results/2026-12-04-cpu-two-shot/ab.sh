#!/usr/bin/env bash
# ab.sh RANKS ROUNDS "label:ENV=.. ENV=.." ... -- bench flags
# (DIGITS=2: the medians to two decimals)
ranks=$1 rounds=$2; shift 2
cfgs=(); while [ "$1" != "--" ]; do cfgs+=("$1"); shift; done; shift
for i in $(seq $rounds); do
  for c in "${cfgs[@]}"; do
    label=${c%%:*} envs=${c#*:}
    env $envs ${envs##*BIN=} bench --ranks $ranks "$@" 2>&1 | grep -v '^#' | awk -v l=$label '{print l, $1, $6, $10}'
  done
done | tee ${RAW:-/dev/null} | DIGITS=${DIGITS:-1} python3 -c '
import os,sys,statistics as st,collections
f="%14." + os.environ["DIGITS"] + "f"
d=collections.defaultdict(list)
for line in sys.stdin:
    l,sz,t1,t2=line.split(); d[(l,int(sz))]+= [float(t1)]
labels=sorted({k[0] for k in d},key=lambda x:x); sizes=sorted({k[1] for k in d})
print("%10s"%"size"+"".join("%14s"%l for l in labels))
for s in sizes:
    print("%10d"%s+"".join(f%st.median(d[(l,s)]) if (l,s) in d else "%14s"%"-" for l in labels))
'
