#!/usr/bin/env bash
# Builds the capability probe and times tests/fixtures/AgentWork.java (16 reps, the median CPU time
# of the second half, in ms) with no agent and with the probe adding the capabilities named in $1.
# Usage (from the workspace root): bench/capability-probe/run.sh all | can_pop_frame | ...
set -euo pipefail
caps=${1:?capabilities: all, or NAME+NAME...}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/target/capability-probe
mkdir -p "$out"
jdk=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}
gcc -shared -fPIC -O2 -I"$jdk/include" -I"$jdk/include/linux" "$root/bench/capability-probe/capprobe.c" -o "$out/libcapprobe.so"
javac -g -d "$out" "$root/tests/fixtures/AgentWork.java"
median() { awk '/^AgentWork rep/ { if ($3 >= 8) print $7 / 1e6 }' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
for _ in 1 2 3; do
    printf 'none %s ms   %s %s ms\n' "$(java -cp "$out" AgentWork 16 5000000 0 0 | median)" \
        "$caps" "$(java -agentpath:"$out/libcapprobe.so=$caps" -cp "$out" AgentWork 16 5000000 0 0 | median)"
done
