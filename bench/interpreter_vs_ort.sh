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
# With CORPUS set to a corpus manifest (scripts/bench-corpus.sh writes
# .cache/bench-models/corpus.json; bench/corpus/README.md), the models are
# that manifest's instead: each one's file, and its inputs as the manifest
# says (the entry's shapes, symbolic dims included, values and ranges, and
# its input_files where given). A model that fails there (in ORT or in ours)
# gets a FAILED row and the run goes on; after the table, a summary: how
# many models are at or under 1.2x ORT on one thread and at or under 1.0x on
# all threads, and the worst ones.
#
# usage: [CORPUS=corpus.json] bench/interpreter_vs_ort.sh [BUILD_DIR] [ROUNDS] [MODEL...]
#   (MODEL...: the real models' (or the corpus's) names to measure; all of
#   them by default)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
rounds="${2:-5}"
onnxslim="$build/tools/onnxslim"
cache="${ONNXSLIM_MODEL_CACHE:-$root/.cache/models}"
corpus="${CORPUS:-}"
[ -x "$onnxslim" ] || { echo "error: $onnxslim not built: run scripts/build.sh" >&2; exit 1; }
source "$root/tests/oracle/oracle_env.sh"

cores=$(nproc)
# The median of the numbers on stdin.
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
ortMs() { node -e 'const l=require("fs").readFileSync(0,"utf8");console.log(JSON.parse(l.trim().split("\n").pop()).median_ms)'; }
oursMs() { sed -n 's/^latency_ms: \([0-9.]*\).*/\1/p'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", a / b}'; }
mean() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", (a + b) / 2}'; }

# The models: name, file and input files (tab-separated, one model a line);
# from the corpus manifest (paths relative to its directory), else the real
# models of tests/models/models.json in the cache.
declare -A file=() given=()
if [ -n "$corpus" ]; then
  [ -f "$corpus" ] || { echo "error: corpus manifest $corpus missing: run scripts/bench-corpus.sh" >&2; exit 1; }
  spec="$corpus"
  table=$(node -e '
    const path = require("path"), f = process.argv[1], dir = path.dirname(path.resolve(f));
    for (const m of require(path.resolve(f)).models)
      console.log([m.name, m.file, ...(m.input_files || [])].map((p, i) => i ? path.resolve(dir, p) : p).join("\t"))' "$corpus")
else
  table=$(node -e 'for (const m of require(process.argv[1]).models) console.log(m.name + "\t" + process.argv[2] + "/" + m.name + ".onnx")' "$spec" "$cache")
fi
order=()
while IFS=$'\t' read -r name path rest; do
  [ -n "$name" ] || continue
  order+=("$name"); file[$name]="$path"; given[$name]="${rest:-}"
done <<<"$table"
names=("${@:3}")
[ ${#names[@]} -gt 0 ] || names=("${order[@]}")
width=12
if [ -n "$corpus" ]; then
  for name in "${names[@]}"; do ((${#name} > width)) && width=${#name}; done
fi

printf "%-${width}s %8s %8s | %8s %6s %8s %6s | %8s | %8s %6s %8s %6s   (all = %s threads, %s rounds)\n" \
  model "ort-1t" "noopt-1t" "ours-1t" "ratio" "-O 1t" "ratio" "ort-all" "ours-all" "ratio" "-O all" "ratio" \
  "$cores" "$rounds (x3 under 20 ms)"
# measure NAME: the model's row.
measure() {
  local name="$1"
  model="${file[$name]:-}"
  [ -n "$model" ] || { echo "error: no model '$name' in ${corpus:-$spec}" >&2; exit 1; }
  if [ -n "$corpus" ]; then
    [ -f "$model" ] || { echo "error: $model missing: run scripts/bench-corpus.sh" >&2; exit 1; }
  else
    [ -f "$model" ] || { echo "error: $model missing: run scripts/fetch-models.sh" >&2; exit 1; }
  fi
  out="$tmp/$name"; mkdir -p "$out"
  # The inputs the manifest gives as files (the others come from --spec).
  feed=()
  local f
  if [ -n "${given[$name]}" ]; then
    local -a files
    IFS=$'\t' read -r -a files <<<"${given[$name]}"
    for f in "${files[@]}"; do feed+=(--input "$f"); done
  fi
  # ort THREADS RUNS [ARGS], ours THREADS [ARGS]: a median latency in ms;
  # $pin (a taskset prefix, or nothing) places the process.
  pin=()
  ort() { "${pin[@]}" node "$oracle" "$model" --out "$out/ort$1" --spec "$spec:$name" ${feed[@]+"${feed[@]}"} --seed 7 --threads "$1" "${@:3}" --bench "$2" --quiet | ortMs; }
  # Runs per measurement: about a quarter of a second of ORT's one-thread
  # time, at least 10 (3 for a model whose run takes over a second).
  probe=$(ort 1 3)
  runs=$(awk -v ms="$probe" 'BEGIN {n = int(250 / (ms + 0.001)); m = ms > 1000 ? 3 : 10; print (n < m ? m : (n > 1000 ? 1000 : n))}')
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
  printf "%-${width}s %8.3f %8.3f | %8.3f %5.2fx %8.3f %5.2fx | %8.3f | %8.3f %5.2fx %8.3f %5.2fx\n" "$name" \
    "${med[ort1]}" "${med[noopt]}" "${med[ours1]}" "${med[r1]}" "${med[oursO1]}" "${med[rO1]}" \
    "${med[ortAll]}" "${med[oursAll]}" "${med[ra]}" "${med[oursOAll]}" "${med[rOa]}"
  unset col med
}

if [ -z "$corpus" ]; then
  for name in "${names[@]}"; do measure "$name"; done
  exit 0
fi

# The corpus: a model that fails gets a FAILED row (with the error's last
# line); the rows measured go to the summary.
rows="$tmp/rows"; : >"$rows"
failed=()
for name in "${names[@]}"; do
  # (Not under `if`: bash would ignore set -e in the measurement.)
  set +e
  (set -e; measure "$name") >"$tmp/row" 2>"$tmp/err"
  status=$?
  set -e
  if [ $status -eq 0 ]; then
    tee -a "$rows" <"$tmp/row"
  else
    failed+=("$name")
    printf "%-${width}s FAILED: %s\n" "$name" "$(grep . "$tmp/err" | tail -n 1 | cut -c1-200)"
  fi
done
# Row fields: 1 name, 6 ours-1t ratio, 8 -O 1t ratio, 13 ours-all ratio,
# 15 -O all ratio (each "N.NNx").
awk -v failed="${failed[*]}" '
  function worst(k,   n, i, j, t, idx, s) {
    n = 0
    for (i = 1; i <= NR; i++) idx[++n] = i
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
      if (r[idx[j], k] > r[idx[i], k]) { t = idx[i]; idx[i] = idx[j]; idx[j] = t }
    s = ""
    for (i = 1; i <= n && i <= 3; i++) s = s (i > 1 ? ", " : "") name[idx[i]] " " sprintf("%.2fx", r[idx[i], k])
    return s
  }
  {
    name[NR] = $1
    r[NR, 1] = $6 + 0; r[NR, 2] = $8 + 0; r[NR, 3] = $13 + 0; r[NR, 4] = $15 + 0
    if (r[NR, 1] <= 1.2) a1++; if (r[NR, 2] <= 1.2) o1++
    if (r[NR, 3] <= 1.0) aa++; if (r[NR, 4] <= 1.0) oa++
  }
  END {
    nf = split(failed, f, " ")
    printf "summary: %d models measured%s\n", NR, nf ? sprintf(", %d failed (%s)", nf, failed) : ""
    if (NR == 0) exit
    printf "  one thread,  at or under 1.2x ORT: %d/%d as given, %d/%d with -O; worst as given: %s; with -O: %s\n",
      a1, NR, o1, NR, worst(1), worst(2)
    printf "  all threads, at or under 1.0x ORT: %d/%d as given, %d/%d with -O; worst as given: %s; with -O: %s\n",
      aa, NR, oa, NR, worst(3), worst(4)
  }' "$rows"
