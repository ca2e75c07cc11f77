#!/usr/bin/env bash
# run.sh BINARY [LOGDIR]: runs graph_replays in the configurations below,
# one process at a time (they share the GPU), and prints each process's
# RESULT line (and its HANG lines, indented), then a summary per
# configuration. Each process's whole output goes to LOGDIR (default: a
# new directory under /tmp, named at the start).
#
# Time: every process is told --max-seconds 20 (it starts no trial that
# could end later, stops after 3 hung trials, and gives an abort 3 s to
# drain) and is killed at 24 s (25 s with the grace) if it is still running
# anyway; 14 processes: at most about 350 s in all.
set -u

bin=${1:?usage: run.sh BINARY [LOGDIR]}
logdir=${2:-}
if [ -z "$logdir" ]; then
  logdir=$(mktemp -d /tmp/graph_replays.XXXXXX)
fi
mkdir -p "$logdir"
echo "# logs in $logdir"

budget=(--max-seconds 20)
kill_at=24

declare -A hangs trials procs hung_procs missing
order=()
n=0

# run NAME FLAGS...: one process of configuration NAME.
run() {
  local name=$1
  shift
  n=$((n + 1))
  local log
  log="$logdir/$(printf %02d "$n")-$name.log"
  timeout -k 1 "$kill_at" "$bin" "${budget[@]}" "$@" >"$log" 2>&1
  local rc=$?
  if [ -z "${procs[$name]+x}" ]; then
    order+=("$name")
    hangs[$name]=0 trials[$name]=0 procs[$name]=0 hung_procs[$name]=0 missing[$name]=0
  fi
  procs[$name]=$((procs[$name] + 1))
  local result
  result=$(grep '^RESULT ' "$log" | tail -1)
  if [ -z "$result" ]; then
    echo "RESULT-MISSING config=$name rc=$rc log=$log"
    grep -E '^(FATAL|HANG|STOPPED)' "$log" | sed 's/^/  /'
    missing[$name]=$((missing[$name] + 1))
    return
  fi
  echo "$result  # config=$name rc=$rc"
  grep -E '^(HANG|STOPPED|WRONG|OUTPUT)' "$log" | sed 's/^/  /'
  local h t
  h=$(sed -n 's/.* hangs=\([0-9]*\) .*/\1/p' <<<"$result")
  t=$(sed -n 's/.* trials=\([0-9]*\) .*/\1/p' <<<"$result")
  hangs[$name]=$((hangs[$name] + h))
  trials[$name]=$((trials[$name] + t))
  if [ "$h" -gt 0 ]; then hung_procs[$name]=$((hung_procs[$name] + 1)); fi
}

start=$SECONDS
for _ in 1 2 3; do run a-graph --mode graph; done
for _ in 1 2 3; do run b-graph-prewarm --mode graph --prewarm; done
for _ in 1 2; do run c-eager --mode eager; done
for _ in 1 2; do run d-graph-check0 --mode graph --check 0; done
for _ in 1 2; do run e-graph-launches1 --mode graph --launches 1; done
for _ in 1 2; do run f-graph-ranks4 --mode graph --ranks 4; done

echo "# summary ($((SECONDS - start)) s): config: processes with a hang / processes, hung trials / trials run"
for name in "${order[@]}"; do
  extra=""
  if [ "${missing[$name]}" -gt 0 ]; then extra=" (${missing[$name]} without a RESULT line)"; fi
  echo "SUMMARY config=$name hung_processes=${hung_procs[$name]}/${procs[$name]} hangs=${hangs[$name]} trials=${trials[$name]}$extra"
done
