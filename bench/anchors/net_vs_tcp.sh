#!/usr/bin/env bash
# net_vs_tcp.sh: ringo's socket transport between two "hosts" next to raw
# TCP (iperf3) between the same hosts, in one run.
#
#   bench/anchors/net_vs_tcp.sh [ringo bench flags, default -b 1M -e 512M -f 2 -n 10 -w 3]
#
# The hosts are two network namespaces joined by a veth pair (needs root and
# iproute2; installs iperf3 when missing). Rank 0 runs in one, rank 1 in the
# other, launched as torchrun would (RANK, WORLD_SIZE, MASTER_ADDR,
# MASTER_PORT), both told apart by NCCL_HOSTID so they use the net
# transport, NCCL_SOCKET_IFNAME naming the veth. First iperf3 moves data
# both ways at once (a client and a server per direction) over as many TCP
# streams as ringo opens per connection: a 2-rank ring sends one buffer each
# way per all-reduce, so ringo's busbw is its per-direction rate and
# compares with iperf3's slower direction. Outputs in build/anchors/net/.
#
# Environment: STREAMS (default: ringo's sockets per connection, 4), and
# NCCL_SOCKET_NTHREADS / NCCL_NSOCKS_PERTHREAD, passed to ringo.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=build/anchors/net
mkdir -p "$OUT"
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(-b 1M -e 512M -f 2 -n 10 -w 3)
STREAMS=${STREAMS:-$(( ${NCCL_SOCKET_NTHREADS:-1} * ${NCCL_NSOCKS_PERTHREAD:-1} ))}
if [ -z "${NCCL_SOCKET_NTHREADS:-}${NCCL_NSOCKS_PERTHREAD:-}" ]; then STREAMS=4; fi

if [ "$(id -u)" -ne 0 ]; then
	echo "net_vs_tcp: network namespaces need root" >&2
	exit 2
fi
if ! command -v iperf3 >/dev/null; then
	echo "net_vs_tcp: installing iperf3" >&2
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends iperf3 >/dev/null
fi
[ -x bin/ringo ] || { echo "net_vs_tcp: bin/ringo missing: run make build" >&2; exit 2; }

A=ringo-bench-a B=ringo-bench-b
cleanup() { ip netns del $A 2>/dev/null || true; ip netns del $B 2>/dev/null || true; }
trap cleanup EXIT
cleanup
ip netns add $A && ip netns add $B
ip -n $A link set lo up && ip -n $B link set lo up
ip link add rbva netns $A type veth peer name rbvb netns $B
ip -n $A addr add 10.199.1.1/24 dev rbva && ip -n $A link set rbva up
ip -n $B addr add 10.199.1.2/24 dev rbvb && ip -n $B link set rbvb up

echo "# === iperf3: a->b and b->a at once, $STREAMS streams each, 10 s (one iperf3 process per end: iperf3 3.12 is single-threaded)"
ip netns exec $B iperf3 -s -1 -p 5201 >"$OUT/iperf3-server-b.log" 2>&1 &
ip netns exec $A iperf3 -s -1 -p 5202 >"$OUT/iperf3-server-a.log" 2>&1 &
for _ in $(seq 50); do
	ip netns exec $B ss -ltn | grep -q ':5201 ' && ip netns exec $A ss -ltn | grep -q ':5202 ' && break
	sleep 0.1
done
ip netns exec $A iperf3 -c 10.199.1.2 -p 5201 -P "$STREAMS" -t 10 -J >"$OUT/iperf3-ab.json" &
ip netns exec $B iperf3 -c 10.199.1.1 -p 5202 -P "$STREAMS" -t 10 -J >"$OUT/iperf3-ba.json"
wait
rate() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 8e9)' "$1"; }
up=$(rate "$OUT/iperf3-ab.json")
down=$(rate "$OUT/iperf3-ba.json")
printf "# iperf3 per direction, both at once: %.2f GB/s a->b, %.2f GB/s b->a\n" "$up" "$down"

echo "# === ringo: 2 ranks, one per namespace, bin/ringo bench ${flags[*]}"
common=(WORLD_SIZE=2 MASTER_ADDR=10.199.1.1 MASTER_PORT=29477 NCCL_SOCKET_IFNAME=rbva,rbvb)
ip netns exec $B env "${common[@]}" RANK=1 NCCL_HOSTID=$B bin/ringo bench -format csv "${flags[@]}" >"$OUT/ringo-rank1.out" 2>&1 &
r1=$!
rc=0
ip netns exec $A env "${common[@]}" RANK=0 NCCL_HOSTID=$A bin/ringo bench -format csv "${flags[@]}" >"$OUT/ringo.csv" || rc=$?
wait $r1 || rc=$?

awk -F, -v up="$up" -v down="$down" '
BEGIN {
	tcp = up < down ? up : down
	printf "# === ringo socket transport vs raw TCP (iperf3 both ways at once, slower direction: %.2f GB/s), all-reduce float sum\n", tcp
	printf "#%13s%12s%12s%12s%8s\n", "size (B)", "time (us)", "busbw GB/s", "TCP GB/s", "ratio"
}
$2 ~ /^[0-9]+$/ { printf "%14s%12s%12s%12.2f%8.2f\n", $2, $7, $9, tcp, $9 / tcp }' "$OUT/ringo.csv" | tee "$OUT/compare.out"
exit $rc
