#!/bin/bash
# yield-ab.sh: /tmp/ringo-base (sys.Yield through unix.Syscall) against
# /tmp/ringo-raw (unix.RawSyscall), 4 ranks on the 2-core VM, interleaved.
for r in 1 2 3 4; do for b in base raw; do
  echo "$b $(/tmp/ringo-$b bench --ranks 4 -b 16 -e 4096 -f 4 -n 3000 -w 100 -c 0 2>&1 | awk '$1 ~ /^[0-9]+$/ {printf "%s:%s ", $1, $6}')"
done; done
for b in base raw base raw; do
  echo "== perf stat, $b"
  perf stat -e 'syscalls:sys_enter_sched_yield,syscalls:sys_enter_futex,context-switches' -- /tmp/ringo-$b bench --ranks 4 -b 64 -e 64 -n 20000 -w 100 -c 0 2>&1
done
