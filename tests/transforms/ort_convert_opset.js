#!/usr/bin/env node
// ort_convert_opset.js — runs pairs of ONNX models (an original conformance
// model and its opset-converted copy) in ONNX Runtime on the conformance test
// case's inputs and compares their outputs. One process for every pair, so
// that a thousand models take seconds, not minutes (tests/transforms/
// ort_convert_opset.sh drives it).
//
// Usage: node ort_convert_opset.js JOBS
//   JOBS: one pair a line, tab-separated: NAME ORIGINAL CONVERTED DATA_DIR
//   [random] (DATA_DIR holds input_0.pb, input_1.pb... for the model's
//   inputs in order; `random`: the model draws random numbers, so only
//   output types and shapes can be compared)
//
// Prints one line a pair: "NAME<TAB>RESULT<TAB>DETAIL", RESULT being
//   same        every output equal (floats within rtol 1e-4, atol 1e-5; NaN = NaN),
//               or for a random model, the same output types and shapes
//   expected    outputs differ beyond rtol 1e-4/atol 1e-5, but the
//               converted model's match the test case's expected outputs
//               (rtol 1e-3, atol 1e-4; DETAIL says how far ONNX Runtime's
//               original is from them: its own kernel's rounding, as in DFT)
//   differ      an output differs (DETAIL says which and by how much)
//   conv-fails  the converted model does not load or run (DETAIL: ORT's error)
//   orig-fails  the original does not load or run in ONNX Runtime, or its
//               inputs are not tensors: nothing to compare against; when
//               the converted model runs, a fourth field compares it with
//               the test case's expected outputs (output_N.pb; rtol 1e-3,
//               atol 1e-4): expected-same, or expected-differ: DETAIL
'use strict';

const fs = require('fs');
const path = require('path');
const oracle = require(path.join(__dirname, '..', '..', 'tools', 'oracle', 'oracle.js'));

const RTOL = 1e-4;
const ATOL = 1e-5;

function readInputs(dir, names) {
  const feeds = {};
  for (let i = 0; i < names.length; i++) {
    const file = path.join(dir, `input_${i}.pb`);
    const t = oracle.tensorFromProto(oracle.parseTensorProto(fs.readFileSync(file), file), file);
    feeds[names[i]] = [t.dtype.ort, t.data, t.dims];
  }
  return feeds;
}

async function runModel(ort, model, dir) {
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3,
  });
  const raw = readInputs(dir, session.inputNames);
  const feeds = {};
  for (const [name, [type, data, dims]] of Object.entries(raw)) feeds[name] = new ort.Tensor(type, data, dims);
  const out = await session.run(feeds);
  return session.outputNames.map((n) => [n, out[n]]);
}

// The test case's expected outputs (output_0.pb...), as [name, {type, dims,
// data}] in the order of `like`'s outputs; null when a file is missing.
function readExpected(dir, like) {
  const out = [];
  for (let i = 0; i < like.length; i++) {
    const file = path.join(dir, `output_${i}.pb`);
    if (!fs.existsSync(file)) return null;
    const t = oracle.tensorFromProto(oracle.parseTensorProto(fs.readFileSync(file), file), file);
    out.push([like[i][0], { type: t.dtype.ort, dims: t.dims, data: t.data }]);
  }
  return out;
}

function compare(a, b, rtol = RTOL, atol = ATOL) {
  if (a.length !== b.length) return `${a.length} outputs vs ${b.length}`;
  for (let i = 0; i < a.length; i++) {
    const [name, x] = a[i];
    const y = b[i][1];
    if (!x || !y || typeof x.type !== 'string') return `output ${name} is not a tensor`;
    if (x.type !== y.type) return `output ${name}: type ${x.type} vs ${y.type}`;
    if (JSON.stringify(x.dims) !== JSON.stringify(y.dims)) {
      return `output ${name}: dims ${JSON.stringify(x.dims)} vs ${JSON.stringify(y.dims)}`;
    }
    const float = ['float32', 'float64', 'float16'].includes(x.type);
    let worst = 0;
    for (let j = 0; j < x.data.length; j++) {
      let u = x.data[j];
      let v = y.data[j];
      if (x.type === 'float16') {
        u = halfToFloat(u);
        v = halfToFloat(v);
      }
      if (float) {
        if (Number.isNaN(u) && Number.isNaN(v)) continue;
        if (u === v) continue;
        const d = Math.abs(u - v);
        if (!(d <= atol + rtol * Math.abs(u))) return `output ${name}[${j}]: ${u} vs ${v}`;
        worst = Math.max(worst, d);
      } else if (u !== v) {
        return `output ${name}[${j}]: ${u} vs ${v}`;
      }
    }
  }
  return '';
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

async function main() {
  const jobsFile = process.argv[2];
  if (!jobsFile) {
    process.stderr.write('usage: node ort_convert_opset.js JOBS\n');
    process.exit(2);
  }
  const ort = oracle.loadOrt();
  ort.env.logLevel = 'fatal';
  const lines = fs.readFileSync(jobsFile, 'utf8').split('\n').filter((l) => l);
  for (const line of lines) {
    const [name, original, converted, dir, random] = line.split('\t');
    let a;
    try {
      a = await runModel(ort, original, dir);
    } catch (e) {
      // No ORT reference: compare the converted model with the test case's
      // expected outputs instead, when it runs.
      const why = String(e.message).split('\n')[0].slice(0, 200);
      let b;
      try {
        b = await runModel(ort, converted, dir);
      } catch (e2) {
        console.log(`${name}\torig-fails\t${why}`);
        continue;
      }
      const expected = readExpected(dir, b);
      const diff = expected ? compare(expected, b, 1e-3, 1e-4) : 'no expected outputs';
      console.log(`${name}\torig-fails\t${why}\t${diff ? 'expected-differ: ' + diff : 'expected-same'}`);
      continue;
    }
    let b;
    try {
      b = await runModel(ort, converted, dir);
    } catch (e) {
      console.log(`${name}\tconv-fails\t${String(e.message).split('\n')[0].slice(0, 300)}`);
      continue;
    }
    if (random === 'random') {
      const shapes = (outs) => outs.map(([n, t]) => [n, { type: t.type, dims: t.dims, data: [] }]);
      const diff = compare(shapes(a), shapes(b));
      console.log(`${name}\t${diff ? 'differ' : 'same'}\t${diff}`);
      continue;
    }
    const diff = compare(a, b);
    if (diff) {
      const expected = readExpected(dir, b);
      if (expected && !compare(expected, b, 1e-3, 1e-4)) {
        const orig = compare(expected, a, 1e-3, 1e-4);
        console.log(`${name}\texpected\t${diff}; ORT's original vs expected: ${orig || 'within'}`);
        continue;
      }
    }
    console.log(`${name}\t${diff ? 'differ' : 'same'}\t${diff}`);
  }
}

main().catch((e) => {
  process.stderr.write(`ort_convert_opset.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
