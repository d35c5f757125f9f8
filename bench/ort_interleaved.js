#!/usr/bin/env node
// ort_interleaved.js — times several ONNX models (or one model at several
// ONNX Runtime optimization levels) in one process, run by run in turn, so
// that the load of a shared machine hits all of them alike. The bench
// scripts (transformers_ort.sh, target_opset_ort.sh, matmul_add_nd.sh)
// compare models with it.
//
// usage: node ort_interleaved.js [--runs N] [--threads N] --inputs DIR
//                                LEVEL:MODEL [LEVEL:MODEL ...]
//   LEVEL     ONNX Runtime's graphOptimizationLevel for that session:
//             disabled, basic, extended or all
//   --inputs  a folder of TensorProto files named <input>.pb, as
//             tools/oracle.js --out writes them in DIR/inputs (every model
//             takes the inputs it names from there)
//   --runs    timed runs of each session (default 20), after 2 warm-up
//             runs of each; run i of every session is timed before run
//             i + 1 of any
//   --threads intra-op threads (default 1; inter-op is always 1)
//
// Output: one JSON line per session, in the order given:
//   {"level":..,"model":..,"median_ms":..,"min_ms":..}

'use strict';

const fs = require('fs');
const path = require('path');
const oracle = require('../tools/oracle/oracle.js');

function fail(msg) {
  process.stderr.write(`ort_interleaved: error: ${msg}\n`);
  process.exit(1);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const args = process.argv.slice(2);
  let runs = 20;
  let threads = 1;
  let inputs = null;
  const sessions = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const value = () => (i + 1 < args.length ? args[++i] : fail(`${a} needs a value`));
    if (a === '--runs') runs = Number(value());
    else if (a === '--threads') threads = Number(value());
    else if (a === '--inputs') inputs = value();
    else if (a.startsWith('--')) fail(`unknown option ${a}`);
    else {
      const colon = a.indexOf(':');
      const level = a.slice(0, colon);
      if (colon <= 0 || !['disabled', 'basic', 'extended', 'all'].includes(level)) {
        fail(`'${a}' is not LEVEL:MODEL (LEVEL disabled, basic, extended or all)`);
      }
      sessions.push({ level, model: a.slice(colon + 1), times: [] });
    }
  }
  if (!Number.isInteger(runs) || runs < 1) fail('--runs wants a positive integer');
  if (!Number.isInteger(threads) || threads < 1) fail('--threads wants a positive integer');
  if (inputs === null || sessions.length === 0) fail('usage: ort_interleaved.js [--runs N] [--threads N] --inputs DIR LEVEL:MODEL ...');

  const ort = oracle.loadOrt();
  ort.env.logLevel = 'error';
  const tensors = new Map();
  for (const f of fs.readdirSync(inputs)) {
    if (!f.endsWith('.pb')) continue;
    const file = path.join(inputs, f);
    const proto = oracle.parseTensorProto(fs.readFileSync(file), file);
    const t = oracle.tensorFromProto(proto, file);
    tensors.set(proto.name, new ort.Tensor(t.dtype.ort, t.data, t.dims));
  }
  for (const s of sessions) {
    try {
      s.session = await ort.InferenceSession.create(s.model, {
        executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
        executionMode: 'sequential', graphOptimizationLevel: s.level, logSeverityLevel: 3,
      });
    } catch (e) {
      fail(`ONNX Runtime cannot load ${s.model}: ${e.message}`);
    }
    s.feeds = {};
    for (const name of s.session.inputNames) {
      if (!tensors.has(name)) fail(`no ${name}.pb in ${inputs} for ${s.model}`);
      s.feeds[name] = tensors.get(name);
    }
  }
  for (let i = 0; i < 2; i++) for (const s of sessions) await s.session.run(s.feeds);
  for (let i = 0; i < runs; i++) {
    for (const s of sessions) {
      const t0 = process.hrtime.bigint();
      await s.session.run(s.feeds);
      s.times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  const r3 = (x) => Math.round(x * 1000) / 1000;
  for (const s of sessions) {
    process.stdout.write(JSON.stringify({ level: s.level, model: s.model, median_ms: r3(median(s.times)), min_ms: r3(Math.min(...s.times)) }) + '\n');
  }
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
