#!/usr/bin/env bash
# Where the interpreter's threads lose time: each node's time on one thread
# and on all threads (one per core), in the same script, and what it loses
# against perfect scaling: lost = t(all) - t(1) / threads. A node whose
# lost time is large is one where a second core costs more than it brings
# (moving data between cores, a split too small to pay for its hand-off,
# a serial step before the split).
#
# The machines are noisy (their speed drifts by half over minutes), so the
# two thread counts take turns for ROUNDS rounds, and a node's time is the
# median of its rounds; each round's time is the node's average over RUNS
# runs (its first, cold, call included: 1/RUNS of the bias).
#
# usage: bench/node_scaling.sh MODEL [BUILD_DIR] [ROUNDS] [RUNS] [TOP] -- [run options]
#   e.g. bench/node_scaling.sh .cache/models/mlsd_tiny.onnx build 5 40 25 -- \
#          --input-specs tests/models/models.json:mlsd_tiny -O
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 1 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
model="$1"; shift
build="$root/build"; rounds=5; runs=40; top=25
for var in build rounds runs top; do
  [ $# -gt 0 ] && [ "$1" != "--" ] || break
  printf -v "$var" '%s' "$1"; shift
done
[ "${1:-}" = "--" ] && shift
onnxslim="$build/tools/onnxslim"
[ -x "$onnxslim" ] || { echo "error: $onnxslim not built: run scripts/build.sh" >&2; exit 1; }
[ -f "$model" ] || { echo "error: $model not found" >&2; exit 1; }
command -v node >/dev/null || { echo "error: node not found: run scripts/setup.sh" >&2; exit 1; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cores=$(nproc)

profile() { # THREADS OUT [run options]
  local threads="$1" out="$2"; shift 2
  "$onnxslim" run "$model" --output-dir "$tmp/out" -q --bench "$runs" --threads "$threads" \
    --profile-nodes 1000000 "$@" >"$out" 2>&1 || { cat "$out" >&2; exit 1; }
}
for ((r = 0; r < rounds; r++)); do
  profile 1 "$tmp/one.$r" "$@"
  profile 0 "$tmp/all.$r" "$@"
done

node - "$tmp" "$rounds" "$cores" "$top" <<'EOF'
const fs = require('fs');
const [dir, rounds, cores, top] = process.argv.slice(2).map((v, i) => (i ? +v : v));
// One profile: node -> {op, msPerCall, shapes}; and the run's latency.
function parse(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const nodes = {};
  let latency = NaN, inTable = false;
  for (const l of lines) {
    const m = /^latency_ms: ([0-9.]+)/.exec(l);
    if (m) latency = +m[1];
    if (/^node\s+op\s+calls/.test(l)) { inTable = true; continue; }
    if (!inTable || !l.trim()) continue;
    const f = /^(.*?)\s+(\S+)\s+(\d+)\s+([0-9.]+)\s+[0-9.]+%\s*(.*)$/.exec(l);
    if (f) nodes[f[1]] = { op: f[2], ms: +f[4] / +f[3], shapes: f[5] };
  }
  return { latency, nodes };
}
const median = (a) => { const s = [...a].sort((x, y) => x - y), n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const one = [], all = [];
for (let r = 0; r < rounds; r++) { one.push(parse(`${dir}/one.${r}`)); all.push(parse(`${dir}/all.${r}`)); }
const rows = [];
for (const [name, n] of Object.entries(one[0].nodes)) {
  const t1 = median(one.map((p) => p.nodes[name]?.ms ?? 0));
  const ta = median(all.map((p) => p.nodes[name]?.ms ?? 0));
  rows.push({ name, op: n.op, shapes: n.shapes, t1, ta, lost: ta - t1 / cores });
}
rows.sort((a, b) => b.lost - a.lost);
const sum = (k) => rows.reduce((s, r) => s + r[k], 0);
const l1 = median(one.map((p) => p.latency)), la = median(all.map((p) => p.latency));
console.log(`latency: 1 thread ${l1.toFixed(3)} ms, ${cores} threads ${la.toFixed(3)} ms ` +
            `(speedup ${(l1 / la).toFixed(2)}); medians of ${rounds} rounds`);
console.log(`nodes: 1 thread ${sum('t1').toFixed(3)} ms, ${cores} threads ${sum('ta').toFixed(3)} ms, ` +
            `lost against perfect scaling ${sum('lost').toFixed(3)} ms`);
const byOp = {};
for (const r of rows) { const o = (byOp[r.op] ||= { t1: 0, ta: 0, lost: 0 }); o.t1 += r.t1; o.ta += r.ta; o.lost += r.lost; }
console.log('\nby op type        1t ms   all ms  speedup  lost ms');
for (const [op, o] of Object.entries(byOp).sort((a, b) => b[1].lost - a[1].lost))
  console.log(`${op.padEnd(14)} ${o.t1.toFixed(3).padStart(8)} ${o.ta.toFixed(3).padStart(8)} ` +
              `${(o.t1 / o.ta).toFixed(2).padStart(8)} ${o.lost.toFixed(3).padStart(8)}`);
console.log(`\ntop ${top} nodes by lost time`);
console.log('node'.padEnd(32), 'op'.padEnd(10), '   1t ms', '  all ms', ' speedup', ' lost ms', ' input shapes');
for (const r of rows.slice(0, top))
  console.log(r.name.slice(-32).padEnd(32), r.op.padEnd(10), r.t1.toFixed(3).padStart(8),
              r.ta.toFixed(3).padStart(8), (r.t1 / r.ta).toFixed(2).padStart(8),
              r.lost.toFixed(3).padStart(8), '', r.shapes);
EOF
