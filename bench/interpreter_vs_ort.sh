#!/usr/bin/env bash
# Latency of onnxslim's interpreter against ONNX Runtime (tools/oracle) in
# the same run, on every fetched real model with the same inputs: one thread
# each (ours --threads 1, ORT one intra-op thread), and all threads (ours by
# --threads 0, one per core; ORT with one intra-op thread per core, its default
# on this machine). ORT's graph optimizer is on, as a user would run it (its
# one-thread time with it off is shown too); ours is shown both on the model
# as given (what folding and the model check's reference run) and with
# `run -O`, the default pipeline applied in memory first (what the model
# check's candidate runs, and the counterpart of ORT's optimizer).
#
# The machines are shared and noisy: their speed drifts by half and more
# over minutes, and their cores are not equally fast at a given moment (on
# the 2-vCPU bench machine one ran a sub-millisecond model 1.35x as long as
# the other, for minutes, then not). So every figure is measured in rounds
# that take turns between ORT, ours and ours -O, each a median over enough
# runs to last about a quarter of a second:
# - one thread: in a round all three run pinned to the same core (taskset),
#   the rounds going round the cores;
# - all threads: a round runs each twice in mirrored order (ORT, ours,
#   ours -O, ours -O, ours, ORT), and takes each one's mean, so that which
#   core a process's main thread lands on (the scheduler's choice, for ORT
#   as for us) weighs on both alike.
# A time is the median of its rounds, and a ratio (ours / ORT, lower is
# better) the median of the rounds' ratios. Models whose one-thread ORT run
# takes under 20 ms get three times ROUNDS rounds (their rounds are short,
# and their ratios the noisiest).
#
# usage: bench/interpreter_vs_ort.sh [BUILD_DIR] [ROUNDS] [MODEL...]
#   (MODEL...: the real models' names to measure; all of them by default)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
rounds="${2:-5}"
onnxslim="$build/tools/onnxslim"
cache="${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}"
[ -x "$onnxslim" ] || { echo "error: $onnxslim not built: run scripts/build.sh" >&2; exit 1; }
source "$root/tests/oracle/oracle_env.sh"

cores=$(nproc)
# The median of the numbers on stdin.
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
ortMs() { node -e 'const l=require("fs").readFileSync(0,"utf8");console.log(JSON.parse(l.trim().split("\n").pop()).median_ms)'; }
oursMs() { sed -n 's/^latency_ms: \([0-9.]*\).*/\1/p'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", a / b}'; }
mean() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", (a + b) / 2}'; }

printf "%-12s %8s %8s | %8s %6s %8s %6s | %8s | %8s %6s %8s %6s   (all = %s threads, %s rounds)\n" \
  model "ort-1t" "noopt-1t" "ours-1t" "ratio" "-O 1t" "ratio" "ort-all" "ours-all" "ratio" "-O all" "ratio" \
  "$cores" "$rounds (x3 under 20 ms)"
names=("${@:3}")
[ ${#names[@]} -gt 0 ] || names=($(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name)' "$spec"))
for name in "${names[@]}"; do
  model="$cache/$name.onnx"
  [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  out="$tmp/$name"; mkdir -p "$out"
  # ort THREADS RUNS [ARGS], ours THREADS [ARGS]: a median latency in ms;
  # $pin (a taskset prefix, or nothing) places the process.
  pin=()
  ort() { "${pin[@]}" node "$oracle" "$model" --out "$out/ort$1" --spec "$spec:$name" --seed 7 --threads "$1" "${@:3}" --bench "$2" --quiet | ortMs; }
  # Runs per measurement: about a quarter of a second of ORT's one-thread time.
  probe=$(ort 1 3)
  runs=$(awk -v ms="$probe" 'BEGIN {n = int(250 / (ms + 0.001)); print (n < 10 ? 10 : (n > 1000 ? 1000 : n))}')
  modelRounds=$(awk -v ms="$probe" -v r="$rounds" 'BEGIN {print (ms < 20 ? 3 * r : r)}')
  inputs=()
  for f in "$out/ort1/inputs"/*.pb; do inputs+=(--input "$f"); done
  ours() { "${pin[@]}" "$onnxslim" run "$model" "${inputs[@]}" --output-dir "$out/ours" -q --bench "$runs" --threads "$@" | oursMs; }
  declare -A col=()
  for ((r = 0; r < modelRounds; r++)); do
    pin=(taskset -c $((r % cores)))
    o1=$(ort 1 "$runs"); u1=$(ours 1); uO1=$(ours 1 -O)
    pin=()
    oa=$(ort "$cores" "$runs"); ua=$(ours 0); uOa=$(ours 0 -O)
    uOa=$(mean "$uOa" "$(ours 0 -O)"); ua=$(mean "$ua" "$(ours 0)"); oa=$(mean "$oa" "$(ort "$cores" "$runs")")
    col[ort1]+="$o1 "; col[ours1]+="$u1 "; col[oursO1]+="$uO1 "
    col[ortAll]+="$oa "; col[oursAll]+="$ua "; col[oursOAll]+="$uOa "
    col[r1]+="$(ratio "$u1" "$o1") "; col[rO1]+="$(ratio "$uO1" "$o1") "
    col[ra]+="$(ratio "$ua" "$oa") "; col[rOa]+="$(ratio "$uOa" "$oa") "
  done
  col[noopt]="$(ort 1 "$runs" --no-optimize)"
  declare -A med=()
  for k in "${!col[@]}"; do med[$k]=$(tr ' ' '\n' <<<"${col[$k]}" | grep . | median); done
  printf "%-12s %8.3f %8.3f | %8.3f %5.2fx %8.3f %5.2fx | %8.3f | %8.3f %5.2fx %8.3f %5.2fx\n" "$name" \
    "${med[ort1]}" "${med[noopt]}" "${med[ours1]}" "${med[r1]}" "${med[oursO1]}" "${med[rO1]}" \
    "${med[ortAll]}" "${med[oursAll]}" "${med[ra]}" "${med[oursOAll]}" "${med[rOa]}"
  unset col med
done
