#!/usr/bin/env bash
# hetsim's maxmin network model against real TCP (issue 35, part 3): `make test-emulation`.
#
# Each case is a hetsim scenario of one round (tests/emulation/*.ini). `oracle_check
# export` runs it and writes its message trace: the very tasks the SimGrid oracle replays
# (simgrid_replay reads the file as it is), with hetsim's arrival of every message. This
# script builds a small network of Linux network namespaces, shapes every node's uplink and
# downlink with tc, and tcp_replay plays the trace over real TCP sockets (causally or at
# hetsim's start times: see the cases below). A group of
# messages (a fan-out, a fan-in, a ring all-reduce, a D-PSGD step) passes when its
# completion, measured from its first message's start, is within 3 % of hetsim's. Each
# message's arrival is printed too (how many are within 3 %, the worst), not asserted: see
# docs/results/emulation.md for why a few are later than max-min says.
#
# The network, for nodes 0..N-1 (the largest case's N) and a bridge namespace:
#   PREFIX<i>  eth0 SUBNET.<i+1>/24 ── veth ── p<i> ─┐
#                                                    ├─ br0 in PREFIXbr (no address)
#   PREFIX<j>  eth0 SUBNET.<j+1>/24 ── veth ── p<j> ─┘
# Nothing is made in the host's namespace: veth pairs are created inside PREFIXbr with
# their peer put straight into the node's namespace. Node i's uplink is the egress of its
# eth0, its downlink the egress of p<i> (the bridge's port towards it). Each is an htb:
# a class at the link's rate, and under it a leaf class per peer (rate link/(N-1), ceil
# the link, equal quanta), picked by the peer's address. So the flows through a link
# share it fairly whoever their other bottleneck is, as max-min says; one connection per
# message, so two messages between one pair are two flows, as in hetsim. Each leaf queues
# in a pfifo of 1000 packets (a veth's txqueuelen, Linux's default), more than any
# message of these cases has: no packet is dropped, so no retransmission timeout (200 ms
# at least) lands on a completion; fewer (--queue) drop packets in slow start. There is
# no netem delay: a message's latency is slept by its sender (tcp_replay), as in SimGrid's
# replay.
#
# Header overhead (the goodput factor). hetsim's bandwidths are payload rates. On these
# links (MTU 1500, TCP timestamps on, the Linux default) a full segment carries
# 1500 - 20 (IP) - 20 (TCP) - 12 (timestamp option) = 1448 bytes of payload, and htb
# charges it its length on the veth, 1500 + 14 (Ethernet header) = 1514 bytes: the
# goodput factor is 1448/1514 = 0.9564, and a link of hetsim bandwidth B is shaped at
# B x 1514/1448. Offloads are cut to one segment per packet (gso_max_segs 1) so htb sees
# those frames, not 64 KB super-packets that would make its shares lumpy. Pure ACKs,
# SYNs, FINs (IP packets under 128 bytes) and ARP take a separate unshaped class:
# hetsim's links carry payload one way and have no reverse ACK stream (66 bytes per one
# or two segments), which would otherwise take a share of an uplink that also sends.
#
# TCP: cubic on every socket (a fixed choice, whatever the host's default).
#
# Where it runs: as root with iproute2 (ip, tc) and a kernel with htb and u32. Not root:
# a skip with the reason, exit 0. Root but no namespace can be made (a container without
# CAP_SYS_ADMIN): a skip with the reason, or a failure when HETSIM_EMULATION_REQUIRED=1
# (set it where the suite must run; CI leaves it unset, since a machine that cannot make
# namespaces says nothing about hetsim, and the skip's reason is printed in its log).
#
# Cleanup: every qdisc, link and namespace is removed by name on exit, also on an error
# or INT/TERM (trap), and the script then lists the namespaces to show none is left.
# SIGKILL cannot be caught: the next run removes the namespaces of runs that are gone.
# At the end the suite forces two failures in child runs (a command that fails after the
# network is built, and SIGTERM in the middle of a replay) and checks that their
# namespaces are gone too.
#
# Usage: run.sh [--repeat N] [--only CASE] [--verbose] [--report-only]
#               [--wire-factor F] [--queue PACKETS] [--acks-shaped] [--congestion CC]
#   --repeat N        play every case N times, asserting each; then a table of the median
#                     ratio and its range per group (docs/results/emulation.md)
#   --only CASE       one case (fedavg-3, sync-6, ...), without the cleanup check
#   --verbose         every message's times
#   --report-only     print the figures, assert nothing (for the variations below)
#   --wire-factor F   tc rate = bandwidth x F (default 1514/1448; 1: no overhead allowance)
#   --queue PACKETS   each leaf's pfifo (default 1000)
#   --acks-shaped     no unshaped class for ACKs: they share the links with the data
#   --congestion CC   the sockets' congestion control (default cubic; bbr, reno)
#   --open-loop       every case's tasks at their trace times, as SimGrid's replay
#                     (default: per case, see below and tcp_replay.c)
# The cleanup check's own: --prefix P, --fail-after-setup, --ready-file FILE,
# --no-cleanup-check.
set -uo pipefail

HETSIM=${HETSIM:-./hetsim}
bin=$(dirname "$HETSIM")/tests
here=$(cd "$(dirname "$0")" && pwd)
subnet=10.77.0
tolerance=0.03
wire_factor=1514/1448
repeat=1
only=""
assert=1
prefix="hse$$-"
fail_after_setup=0
ready_file=""
cleanup_check=1
congestion=cubic
verbose=0
queue=1000
ack_class=1
open_loop=""

while [ $# -gt 0 ]; do
  case $1 in
    --repeat) repeat=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --wire-factor) wire_factor=$2; shift 2 ;;
    --report-only) assert=0; shift ;;
    --congestion) congestion=$2; shift 2 ;;
    --verbose) verbose=1; shift ;;
    --queue) queue=$2; shift 2 ;;
    --acks-shaped) ack_class=0; shift ;;
    --open-loop) open_loop=--open-loop; shift ;;
    --prefix) prefix=$2; shift 2 ;;
    --fail-after-setup) fail_after_setup=1; shift ;;
    --ready-file) ready_file=$2; shift 2 ;;
    --no-cleanup-check) cleanup_check=0; shift ;;
    *) echo "run.sh: unknown option '$1' (the options are in the script's header)" >&2; exit 2 ;;
  esac
done

say() { echo "emulation: $*"; }

# The cases: the scenario file, how tcp_replay starts its tasks, and the groups of
# messages compared, as NAME:WHICH with WHICH all, from-last (the messages the last node,
# the server, sends) or to-last (those it receives).
#   causal     a task starts when the tasks that caused it in hetsim have ended here: a
#              ring all-reduce's steps follow each other over the same links, so each
#              step's error is carried into the next, as in a real run (from hetsim's
#              start times, the next step's latency would hide a late hop);
#   open-loop  every task at hetsim's time: FedAvg's fan-out (server uplink, clients'
#              downlinks) and fan-in (clients' uplinks, server downlink) cross different
#              links, and each is checked as hetsim plays it, even where a download
#              arrived late (causal, the fan-in would start from those late arrivals).
cases=(
  "fedavg-3     open-loop fan-out:from-last fan-in:to-last"
  "fedavg-5     open-loop fan-out:from-last fan-in:to-last"
  "sync-3       causal    all-reduce:all"
  "sync-6       causal    all-reduce:all"
  "dpsgd-ring-4 causal    dpsgd-step:all"
  "dpsgd-full-5 causal    dpsgd-step:all"
)

# ---- can it run here? ----

if [ "$(id -u)" -ne 0 ]; then
  say "skipped: not root (network namespaces and tc need root; run: sudo make test-emulation)"
  exit 0
fi
for tool in ip tc; do
  if ! command -v $tool >/dev/null; then
    say "FAIL: '$tool' not found (Debian package iproute2; scripts/install-deps installs it)"
    exit 1
  fi
done
for b in oracle_check tcp_replay; do
  if [ ! -x "$bin/$b" ]; then say "FAIL: $bin/$b not built (make test-emulation builds it)"; exit 1; fi
done
if ! probe=$(ip netns add "${prefix}probe" 2>&1); then
  if [ "${HETSIM_EMULATION_REQUIRED:-0}" = 1 ]; then say "FAIL: root but cannot create a network namespace ($probe)"; exit 1; fi
  say "skipped: cannot create a network namespace here ($probe)"
  exit 0
fi
ip netns del "${prefix}probe"
# A run killed by SIGKILL cannot clean up: the namespaces of runs whose process is gone
# (names hse<PID>-..., hse<PID>f-..., hse<PID>t-...) are removed by name here.
for stale in $(ip netns list | awk '{print $1}' | grep -E '^hse[0-9]+[a-z]?-'); do
  pid=${stale#hse}
  pid=${pid%%[!0-9]*}
  if ! kill -0 "$pid" 2>/dev/null; then
    say "removing $stale, left by run $pid (no longer running)"
    ip netns del "$stale"
  fi
done

# ---- the network ----

nodes=0   # namespaces PREFIX0..PREFIX<nodes-1> built so far
work=""
replayer=""
child=""
shaped=0  # nodes 0..shaped-1 have our qdiscs

# tc and ip start slowly on a loaded machine (60 ms each here): commands for one namespace
# go through one -batch. batch NS tc|ip [-force] < COMMANDS
batch() {
  local ns=$1 tool=$2
  shift 2
  $tool -n "$ns" "$@" -batch -
}

# Removes, by name, every qdisc, link and namespace this run made; then lists what is left.
cleanup() {
  local status=$? i pid left
  trap - EXIT INT TERM
  for pid in $replayer $child; do   # processes this run started, by their id
    if kill -0 "$pid" 2>/dev/null; then kill "$pid"; wait "$pid" 2>/dev/null; fi
  done
  for ((i = 0; i < nodes; i++)); do
    echo "qdisc del dev eth0 root" | batch "${prefix}$i" tc -force 2>/dev/null
  done
  if [ "$nodes" -gt 0 ]; then
    { for ((i = 0; i < nodes; i++)); do echo "qdisc del dev p$i root"; done; } | batch "${prefix}br" tc -force 2>/dev/null
    { for ((i = 0; i < nodes; i++)); do echo "link del p$i"; done   # and its peer, eth0 of node i
      echo "link del br0"; } | batch "${prefix}br" ip -force 2>/dev/null
  fi
  for ((i = 0; i < nodes; i++)); do ip netns del "${prefix}$i" 2>/dev/null; done
  ip netns del "${prefix}br" 2>/dev/null
  [ -n "$work" ] && rm -rf "$work"
  left=$(ip netns list | awk -v p="$prefix" 'index($1, p) == 1 {print $1}')
  if [ -n "$left" ]; then
    say "FAIL: cleanup left namespaces: $(echo $left)"
    status=1
  else
    say "cleanup: namespaces ${prefix}* removed (ip netns list shows none)"
  fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Setup steps: any failure ends the run (and cleanup runs).
run() {
  if ! "$@"; then say "FAIL: $*"; exit 1; fi
}

build_network() {
  local want=$1 i
  run ip netns add "${prefix}br"
  nodes=1   # cleanup looks for p0 (absent: ignored) once the bridge namespace exists
  for ((i = 0; i < want; i++)); do
    run ip netns add "${prefix}$i"
    nodes=$((i + 1))
  done
  { echo "link add br0 type bridge"
    echo "link set br0 up"
    for ((i = 0; i < want; i++)); do
      echo "link add p$i type veth peer name eth0 netns ${prefix}$i"
      echo "link set p$i gso_max_segs 1 master br0 up"
    done; } >"$work/ip.br"
  run batch "${prefix}br" ip <"$work/ip.br"
  for ((i = 0; i < want; i++)); do
    printf 'link set eth0 gso_max_segs 1 up\naddr add %s/24 dev eth0\n' "$subnet.$((i + 1))" >"$work/ip.$i"
    run batch "${prefix}$i" ip <"$work/ip.$i"
  done
}

# shape_link DEV RATE_BITS N SELF MATCH: the tc commands of an htb on DEV, a RATE_BITS
# class with a leaf per peer of SELF among N nodes, picked by the peer's address (MATCH:
# dst or src), and the unshaped class of pure ACKs and ARP.
shape_link() {
  local dev=$1 rate=$2 n=$3 self=$4 match=$5 p leaf
  leaf=$((rate / (n - 1)))
  echo "qdisc add dev $dev root handle 1: htb default 2"
  echo "class add dev $dev parent 1: classid 1:1 htb rate ${rate}bit ceil ${rate}bit quantum 1514"
  echo "class add dev $dev parent 1: classid 1:2 htb rate 1gbit ceil 1gbit quantum 1514"
  if [ "$ack_class" -eq 1 ]; then
    echo "filter add dev $dev parent 1: protocol ip prio 1 u32 match ip protocol 6 0xff match u16 0x0000 0xff80 at 2 flowid 1:2"
  fi
  for ((p = 0; p < n; p++)); do
    [ "$p" -eq "$self" ] && continue
    echo "class add dev $dev parent 1:1 classid 1:$((10 + p)) htb rate ${leaf}bit ceil ${rate}bit quantum 1514"
    echo "qdisc add dev $dev parent 1:$((10 + p)) handle $((10 + p)): pfifo limit $queue"
    echo "filter add dev $dev parent 1: protocol ip prio 2 u32 match ip $match $subnet.$((p + 1))/32 flowid 1:$((10 + p))"
  done
}

# Shapes nodes 0..N-1 from the trace's agent lines (bytes/s of payload), replacing the
# previous case's qdiscs.
shape() {
  local trace=$1 n i up down
  n=$(awk '$1 == "agents" {print $2}' "$trace")
  : >"$work/tc.br"
  while read -r i up down; do
    { [ "$i" -lt "$shaped" ] && echo "qdisc del dev eth0 root"
      shape_link eth0 "$up" "$n" "$i" dst; } >"$work/tc.$i"
    run batch "${prefix}$i" tc <"$work/tc.$i"
    { [ "$i" -lt "$shaped" ] && echo "qdisc del dev p$i root"
      shape_link "p$i" "$down" "$n" "$i" src; } >>"$work/tc.br"
  done < <(awk -v f="$wire_factor" 'BEGIN {split(f, q, "/"); w = q[1] / (q[2] ? q[2] : 1)}
             $1 == "agent" {printf "%d %.0f %.0f\n", $2, $4 * 8 * w, $5 * 8 * w}' "$trace")
  run batch "${prefix}br" tc <"$work/tc.br"
  [ "$n" -gt "$shaped" ] && shaped=$n
}

# Packets the leaf queues of nodes 0..N-1 dropped since the case's qdiscs were made (the
# htb root's own count would repeat them).
drops() {
  local n=$1 i
  { for ((i = 0; i < n; i++)); do tc -n "${prefix}$i" -s qdisc show dev eth0; done
    for ((i = 0; i < n; i++)); do echo "qdisc show dev p$i"; done | tc -n "${prefix}br" -s -batch -
  } | awk '/^qdisc/ {leaf = $2 == "pfifo"} leaf && /dropped/ {sub(",", "", $7); sum += $7} END {print sum + 0}'
}

# ---- the cases ----

work=$(mktemp -d /tmp/hetsim-emulation-XXXXXX)
max_nodes=2
selected=()
for c in "${cases[@]}"; do
  read -r name _ <<<"$c"
  [ -n "$only" ] && [ "$name" != "$only" ] && continue
  selected+=("$c")
  if ! "$bin/oracle_check" export "$here/$name.ini" >"$work/$name.trace"; then
    say "FAIL: oracle_check export $here/$name.ini"
    exit 1
  fi
  n=$(awk '$1 == "agents" {print $2}' "$work/$name.trace")
  [ "$n" -gt "$max_nodes" ] && max_nodes=$n
done
if [ ${#selected[@]} -eq 0 ]; then say "FAIL: no case named '$only'"; exit 2; fi

build_network "$max_nodes"
say "$max_nodes namespaces ${prefix}0..$((max_nodes - 1)) and ${prefix}br, links shaped at bandwidth x $wire_factor," \
  "TCP $congestion, tolerance $tolerance"
if [ "$fail_after_setup" -eq 1 ]; then
  shape "$work/$(read -r name _ <<<"${selected[0]}"; echo "$name").trace"
  say "failing on purpose after the setup (--fail-after-setup)"
  false || exit 1
fi

# compare GROUPS NODES < replay output: one line per group,
#   GROUP MESSAGES HETSIM_S TCP_S RATIO WORST_MESSAGE_RATIO MESSAGES_WITHIN RETRANSMITS
# A group's time runs from its first message's start (hetsim's; here, when that message's
# causes had ended) to its last arrival; a message's ratio is its arrival's, from the
# same origin. GROUPS: NAME:WHICH ..., WHICH all, from-last or to-last.
compare() {
  awk -v groups="$1" -v nodes="$2" -v tol="$tolerance" '
    { from[NR] = $3; to[NR] = $4; start[NR] = $6; h[NR] = $7; tstart[NR] = $8; m[NR] = $10; re[NR] = $11 }
    END {
      ng = split(groups, g, " ")
      for (k = 1; k <= ng; k++) {
        split(g[k], part, ":"); which = part[2]
        h0 = ""; m0 = ""; hl = 0; ml = 0; cnt = 0; worst = 1; rt = 0; within = 0
        for (r = 1; r <= NR; r++) {
          if (!keep(which, r)) continue
          if (h0 == "" || start[r] < h0) h0 = start[r]
          if (m0 == "" || tstart[r] < m0) m0 = tstart[r]
        }
        for (r = 1; r <= NR; r++) {
          if (!keep(which, r)) continue
          cnt++; rt += re[r]
          if (h[r] > hl) hl = h[r]
          if (m[r] > ml) ml = m[r]
          x = (m[r] - m0) / (h[r] - h0)
          if ((x > 1 ? x - 1 : 1 - x) > (worst > 1 ? worst - 1 : 1 - worst)) worst = x
          if (x >= 1 - tol && x <= 1 + tol) within++
        }
        printf "%s %d %.4f %.4f %.4f %.4f %d %d\n", part[1], cnt, hl - h0, ml - m0, (ml - m0) / (hl - h0), worst, within, rt
      }
    }
    function keep(which, r) {
      return which == "all" || (which == "from-last" && from[r] == nodes - 1) || (which == "to-last" && to[r] == nodes - 1)
    }'
}

failed=0
: >"$work/results"
for ((run_index = 1; run_index <= repeat; run_index++)); do
  for c in "${selected[@]}"; do
    read -r name mode groups <<<"$c"
    [ -n "$open_loop" ] && mode=open-loop
    loop=""
    [ "$mode" = open-loop ] && loop=--open-loop
    trace="$work/$name.trace"
    n=$(awk '$1 == "agents" {print $2}' "$trace")
    shape "$trace"
    [ -n "$ready_file" ] && touch "$ready_file"
    "$bin/tcp_replay" $loop --congestion "$congestion" "$prefix" "$subnet" <"$trace" >"$work/out" &
    replayer=$!
    wait "$replayer"
    status=$?
    replayer=""
    if [ $status -ne 0 ]; then
      say "FAIL: $name: tcp_replay exited with $status"
      failed=1
      continue
    fi
    dropped=$(drops "$n")
    if [ "$verbose" -eq 1 ]; then
      awk '{printf "  message %3d %d -> %d %7d B: hetsim %8.4f to %8.4f, TCP %8.4f to %8.4f (first byte %8.4f), %d retransmits\n",
            $2, $3, $4, $5, $6, $7, $8, $10, $9, $11}' "$work/out"
    fi
    while read -r group count hetsim tcp ratio worst within retrans; do
      verdict=ok
      if [ "$assert" -eq 1 ] && ! awk -v r="$ratio" -v t="$tolerance" 'BEGIN {exit !(r >= 1 - t && r <= 1 + t)}'; then
        verdict=FAIL
        failed=1
      fi
      printf 'emulation: %-4s %-13s %-11s %2d nodes %3d messages: hetsim %7.3f s, TCP %7.3f s, ratio %.4f, ' \
        "$verdict" "$name" "$group" "$n" "$count" "$hetsim" "$tcp" "$ratio"
      printf 'messages: %d of %d within, worst %.4f; %d retransmits, %d drops in the case\n' "$within" "$count" "$worst" \
        "$retrans" "$dropped"
      echo "$name $group $n $count $hetsim $ratio $worst $retrans $within $dropped" >>"$work/results"
    done < <(compare "$groups" "$n" <"$work/out")
  done
done

if [ "$repeat" -gt 1 ]; then
  say "over $repeat runs: median ratio (range), messages within $tolerance in the worst run, worst message of all runs," \
    "retransmits and drops summed over the runs"
  echo "| case | group | nodes | messages | hetsim (s) | TCP / hetsim, median | range | messages within 3 %, fewest | worst message | retransmits | drops in the case |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  awk '{ key = $1 " " $2; if (!(key in seen)) { order[++n] = key; seen[key] = 1 }
         nodes[key] = $3; count[key] = $4; h[key] = $5; c = ++runs[key]; r[key, c] = $6
         if (!(key in worst) || ($7 > 1 ? $7 - 1 : 1 - $7) > (worst[key] > 1 ? worst[key] - 1 : 1 - worst[key])) worst[key] = $7
         retrans[key] += $8; dropped[key] += $10
         if (!(key in fewest) || $9 < fewest[key]) fewest[key] = $9 }
       END { for (k = 1; k <= n; k++) { key = order[k]; m = runs[key]
               for (i = 1; i <= m; i++) v[i] = r[key, i]
               for (i = 2; i <= m; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
               med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
               split(key, kk, " ")
               printf "| %s | %s | %d | %d | %.3f | %.4f | %.4f–%.4f | %d of %d | %.4f | %d | %d |\n", kk[1], kk[2],
                 nodes[key], count[key], h[key], med, v[1], v[m], fewest[key], count[key], worst[key], retrans[key],
                 dropped[key] }
       }' "$work/results"
fi

# ---- the cleanup check: forced failures in child runs leave nothing behind ----

if [ "$cleanup_check" -eq 1 ] && [ -z "$only" ]; then
  child_prefix="hse$$f-"
  HETSIM=$HETSIM bash "$0" --prefix "$child_prefix" --fail-after-setup --no-cleanup-check >"$work/child1" 2>&1
  status1=$?
  left1=$(ip netns list | awk -v p="$child_prefix" 'index($1, p) == 1')
  child_prefix2="hse$$t-"
  HETSIM=$HETSIM bash "$0" --prefix "$child_prefix2" --only fedavg-3 --ready-file "$work/ready" --no-cleanup-check \
    >"$work/child2" 2>&1 &
  child=$!
  for ((i = 0; i < 300; i++)); do [ -e "$work/ready" ] && break; sleep 0.1; done
  sleep 1   # into the replay
  built=$(ip netns list | awk -v p="$child_prefix2" 'index($1, p) == 1' | wc -l)
  kill -TERM "$child"
  wait "$child"
  status2=$?
  child=""
  left2=$(ip netns list | awk -v p="$child_prefix2" 'index($1, p) == 1')
  say "cleanup check: a failure after the setup exited $status1 and left [$(echo $left1)];" \
    "SIGTERM during a replay ($built namespaces up) exited $status2 and left [$(echo $left2)]"
  if [ "$status1" -eq 0 ] || [ -n "$left1" ] || [ "$status2" -ne 143 ] || [ -n "$left2" ] || [ "$built" -eq 0 ]; then
    say "FAIL: cleanup check"
    sed 's/^/  child: /' "$work/child1" "$work/child2"
    failed=1
  fi
fi

if [ $failed -ne 0 ]; then say "some cases FAILED"; exit 1; fi
if [ "$assert" -eq 1 ]; then say "every group within $tolerance of hetsim"; fi
exit 0
