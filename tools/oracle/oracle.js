#!/usr/bin/env node
// oracle.js — runs an ONNX model in ONNX Runtime (onnxruntime-node, CPU) and
// writes its inputs and outputs as ONNX TensorProto files. It is the
// independent reference that onnxslim's tests compare against.
//
// Usage:
//   node oracle.js MODEL.onnx --out DIR [options]
//   node oracle.js MODEL.onnx --check-load
//
// Options:
//   --out DIR              write DIR/<output>.pb and DIR/inputs/<input>.pb
//   --input NAME=FILE.pb   take input NAME from a TensorProto file (repeatable);
//   --input FILE.pb        ... or name it by the file's TensorProto.name field
//   --seed N               seed of the random inputs (default 0)
//   --spec FILE[:NAME]     shapes, dtypes, fixed values and ranges of inputs
//                          from tests/models/models.json (entry NAME; without
//                          it, the entry named like the model file)
//   --dim SYM=N            value of the symbolic dimension SYM (repeatable)
//   --threads N            intra-op threads (default 1; inter-op is always 1)
//   --opt-level LEVEL      ONNX Runtime's graphOptimizationLevel: disabled,
//                          basic, extended or all (default all); 'extended'
//                          is the level at which ORT fuses into com.microsoft
//                          contrib ops (Attention, FusedMatMul, ...)
//   --no-optimize          alias of --opt-level disabled
//   --save-optimized PATH  write the model as ONNX Runtime optimized it
//                          (SessionOptions.optimizedModelFilePath) to PATH;
//                          with --check-load, only that (ORT saves the
//                          graph as optimized at load, before any run)
//   --bench N              after the run, 2 warm-ups then N timed runs; prints
//                          {"median_ms":..,"min_ms":..} as a JSON line
//   --check-load           only create the session: exit 0 if it loads
//   --quiet                no notes on stderr
//   --verbose              also ONNX Runtime's own warnings (default: errors only)
//
// Output on stdout: one JSON line {"model", "inputs":[...], "outputs":[...]}
// where each tensor is {name, dtype, dims, file}; with --bench, a second JSON
// line with the timings. Errors go to stderr and exit with status 1.
//
// File names (the same as `onnxslim run --output-dir` writes: backend/
// Writer.h dataFileNames), per directory (DIR, DIR/inputs): every byte of
// the name's UTF-8 outside [A-Za-z0-9._-] replaced by '_', plus ".pb"
// (logits:0 -> logits_0.pb). Where different names of one directory would
// share a file so, each of them that needed a change gets "." and
// fnv1a32(utf8 name) as 8 lowercase hex digits before ".pb", and the one
// that needed none, if any, keeps NAME.pb (a_b, a/b, a:b -> a_b.pb,
// a_b.3a8e75c1.pb, a_b.08bd8540.pb); should a hashed name be taken too
// (names made to clash), ".2", ".3", ... is added in tensor order until it
// is free. The JSON summary gives each tensor's file.
//
// TensorProto files written: dims (field 1, one varint per dim, unpacked as
// proto2 writes them), data_type (2), name (8), raw_data (9, little endian;
// bool one byte per element; float16 as its bit pattern). Strings use
// string_data (6). Files read: the same fields, and also float_data (4),
// int32_data (5), int64_data (7), double_data (10), uint64_data (11), packed
// or not.
//
// Seeded random inputs (so that another implementation can reproduce them):
//   * every input gets its own generator, mulberry32 seeded with
//     (seed XOR fnv1a32(utf8 input name)) as a uint32;
//   * u = next() / 2^32 in [0, 1), drawn once per element in row-major order;
//   * floating types: lo + (hi - lo) * u computed in double, then rounded to
//     the element type (round to nearest even, which may give hi itself);
//     default [lo, hi) = [-1, 1);
//   * integer types: lo + floor(u * (hi - lo + 1)), default [lo, hi] = [0, 9];
//   * bool: u < 0.5;
//   * a spec entry's "value" fills every element and draws nothing; its
//     "range" [lo, hi] replaces the default range.
// Shapes come from the spec entry, else from the model: a symbolic dimension
// takes its --dim value, and any other unknown dimension is 1 (with a note).

'use strict';

const fs = require('fs');
const path = require('path');

// ---------------------------------------------------------------------------
// Element types: ONNX TensorProto.DataType <-> ONNX Runtime tensor type.
// ---------------------------------------------------------------------------

// onnx: ONNX type name; ort: ONNX Runtime's name; size: bytes per element;
// Array: the typed array ONNX Runtime uses for it.
const DTYPES = [
  { code: 1, onnx: 'float', ort: 'float32', size: 4, Array: Float32Array },
  { code: 2, onnx: 'uint8', ort: 'uint8', size: 1, Array: Uint8Array },
  { code: 3, onnx: 'int8', ort: 'int8', size: 1, Array: Int8Array },
  { code: 4, onnx: 'uint16', ort: 'uint16', size: 2, Array: Uint16Array },
  { code: 5, onnx: 'int16', ort: 'int16', size: 2, Array: Int16Array },
  { code: 6, onnx: 'int32', ort: 'int32', size: 4, Array: Int32Array },
  { code: 7, onnx: 'int64', ort: 'int64', size: 8, Array: BigInt64Array },
  { code: 8, onnx: 'string', ort: 'string', size: 0, Array: Array },
  { code: 9, onnx: 'bool', ort: 'bool', size: 1, Array: Uint8Array },
  { code: 10, onnx: 'float16', ort: 'float16', size: 2, Array: Uint16Array },
  { code: 11, onnx: 'double', ort: 'float64', size: 8, Array: Float64Array },
  { code: 12, onnx: 'uint32', ort: 'uint32', size: 4, Array: Uint32Array },
  { code: 13, onnx: 'uint64', ort: 'uint64', size: 8, Array: BigUint64Array },
];
const BY_CODE = new Map(DTYPES.map((d) => [d.code, d]));
const BY_ORT = new Map(DTYPES.map((d) => [d.ort, d]));
const BY_NAME = new Map();
for (const d of DTYPES) {
  BY_NAME.set(d.onnx, d);
  BY_NAME.set(d.ort, d);
}

class OracleError extends Error {}
function fail(msg) {
  throw new OracleError(msg);
}

// ---------------------------------------------------------------------------
// Command line.
// ---------------------------------------------------------------------------

const USAGE =
  'usage: node oracle.js MODEL.onnx --out DIR [--input NAME=FILE.pb ...] [--seed N]\n' +
  '         [--spec tests/models/models.json:NAME] [--dim SYM=N ...] [--threads N]\n' +
  '         [--opt-level disabled|basic|extended|all | --no-optimize]\n' +
  '         [--save-optimized PATH] [--bench N] [--quiet] [--verbose]\n' +
  '       node oracle.js MODEL.onnx --check-load';

// ONNX Runtime's graph optimization levels, as SessionOptions spells them.
const OPT_LEVELS = ['disabled', 'basic', 'extended', 'all'];

function parseInteger(flag, text, min) {
  if (!/^-?\d+$/.test(text)) fail(`${flag} wants an integer, got '${text}'`);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) fail(`${flag} wants an integer >= ${min}, got '${text}'`);
  return n;
}

function parseArgs(argv) {
  const opts = {
    model: null, out: null, inputs: [], seed: 0, spec: null, dims: new Map(),
    threads: 1, optLevel: 'all', saveOptimized: null, bench: 0, checkLoad: false, quiet: false, verbose: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value\n${USAGE}`);
      return argv[++i];
    };
    switch (a) {
      case '--out': opts.out = value(); break;
      case '--input': opts.inputs.push(value()); break;
      case '--seed': opts.seed = parseInteger(a, value(), 0) >>> 0; break;
      case '--spec': opts.spec = value(); break;
      case '--dim': {
        const v = value();
        const eq = v.lastIndexOf('=');
        if (eq <= 0) fail(`--dim wants SYM=N, got '${v}'`);
        opts.dims.set(v.slice(0, eq), parseInteger('--dim', v.slice(eq + 1), 0));
        break;
      }
      case '--threads': opts.threads = parseInteger(a, value(), 1); break;
      case '--no-optimize': opts.optLevel = 'disabled'; break;
      case '--opt-level': {
        const v = value();
        if (!OPT_LEVELS.includes(v)) fail(`--opt-level wants one of ${OPT_LEVELS.join(', ')}, got '${v}'`);
        opts.optLevel = v;
        break;
      }
      case '--save-optimized': opts.saveOptimized = value(); break;
      case '--bench': opts.bench = parseInteger(a, value(), 1); break;
      case '--check-load': opts.checkLoad = true; break;
      case '--quiet': opts.quiet = true; break;
      case '--verbose': opts.verbose = true; break;
      case '-h': case '--help':
        process.stdout.write(USAGE + '\n');
        process.exit(0);
        break;
      default:
        if (a.startsWith('--')) fail(`unknown option ${a}\n${USAGE}`);
        if (opts.model !== null) fail(`more than one model given ('${opts.model}', '${a}')\n${USAGE}`);
        opts.model = a;
    }
  }
  if (opts.model === null) fail(`no model given\n${USAGE}`);
  if (!opts.checkLoad && opts.out === null) fail(`--out DIR is required\n${USAGE}`);
  return opts;
}

// ---------------------------------------------------------------------------
// Protobuf wire format (just what TensorProto needs).
// ---------------------------------------------------------------------------

class Reader {
  constructor(buf, file) {
    this.buf = buf;
    this.pos = 0;
    this.file = file;
  }
  eof() { return this.pos >= this.buf.length; }
  bad(what) { fail(`${this.file}: malformed TensorProto (${what} at byte ${this.pos})`); }
  // A varint as a BigInt (uint64 wire value).
  varint() {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) this.bad('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return BigInt.asUintN(64, result);
      shift += 7n;
      if (shift > 63n) this.bad('varint too long');
    }
  }
  // A varint known to be a small non-negative number (tag, length).
  smallVarint() {
    const v = this.varint();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) this.bad('length too large');
    return Number(v);
  }
  bytes(n) {
    if (this.pos + n > this.buf.length) this.bad('truncated field');
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  skip(wireType) {
    switch (wireType) {
      case 0: this.varint(); break;
      case 1: this.bytes(8); break;
      case 2: this.bytes(this.smallVarint()); break;
      case 5: this.bytes(4); break;
      default: this.bad(`unsupported wire type ${wireType}`);
    }
  }
}

// Reads a repeated scalar field that may be packed (wire type 2) or not.
// `one` reads one element from a Reader; `elemWire` is the wire type of one
// unpacked element (0 varint, 1 fixed64, 5 fixed32).
function readRepeated(r, wireType, elemWire, one, out) {
  if (wireType === 2) {
    const sub = new Reader(r.bytes(r.smallVarint()), r.file);
    while (!sub.eof()) out.push(one(sub));
  } else if (wireType === elemWire) {
    out.push(one(r));
  } else {
    r.bad(`wire type ${wireType} for a repeated scalar`);
  }
}

const f32 = (r) => Buffer.from(r.bytes(4)).readFloatLE(0);
const f64 = (r) => Buffer.from(r.bytes(8)).readDoubleLE(0);

function parseTensorProto(buf, file) {
  const r = new Reader(buf, file);
  const t = {
    dims: [], dataType: 0, name: '', raw: null, floats: [], int32s: [], int64s: [],
    doubles: [], uint64s: [], strings: [], external: false,
  };
  while (!r.eof()) {
    const tag = r.smallVarint();
    const field = Math.floor(tag / 8);
    const wt = tag & 7;
    switch (field) {
      case 1: readRepeated(r, wt, 0, (s) => BigInt.asIntN(64, s.varint()), t.dims); break;
      case 2: t.dataType = Number(BigInt.asIntN(32, r.varint())); break;
      case 4: readRepeated(r, wt, 5, f32, t.floats); break;
      case 5: readRepeated(r, wt, 0, (s) => Number(BigInt.asIntN(32, s.varint())), t.int32s); break;
      case 6:
        if (wt !== 2) r.bad('string_data with a wrong wire type');
        t.strings.push(Buffer.from(r.bytes(r.smallVarint())).toString('utf8'));
        break;
      case 7: readRepeated(r, wt, 0, (s) => BigInt.asIntN(64, s.varint()), t.int64s); break;
      case 8:
        if (wt !== 2) r.bad('name with a wrong wire type');
        t.name = Buffer.from(r.bytes(r.smallVarint())).toString('utf8');
        break;
      case 9:
        if (wt !== 2) r.bad('raw_data with a wrong wire type');
        t.raw = r.bytes(r.smallVarint());
        break;
      case 10: readRepeated(r, wt, 1, f64, t.doubles); break;
      case 11: readRepeated(r, wt, 0, (s) => s.varint(), t.uint64s); break;
      case 14: t.external = r.varint() === 1n; break;
      default: r.skip(wt);
    }
  }
  if (t.external) fail(`${file}: tensor data stored externally (data_location = EXTERNAL) is not supported`);
  return t;
}

// Converts a parsed TensorProto into { dtype, dims, data } with `data` the
// typed array (or string array) ONNX Runtime wants.
function tensorFromProto(t, file) {
  const dtype = BY_CODE.get(t.dataType);
  if (!dtype) fail(`${file}: unsupported data_type ${t.dataType}`);
  const dims = t.dims.map((d) => {
    if (d < 0n || d > BigInt(Number.MAX_SAFE_INTEGER)) fail(`${file}: bad dimension ${d}`);
    return Number(d);
  });
  const count = dims.reduce((a, b) => a * b, 1);
  let data;
  if (dtype.onnx === 'string') {
    data = t.strings;
  } else if (t.raw !== null) {
    if (t.raw.length !== count * dtype.size) {
      fail(`${file}: raw_data has ${t.raw.length} bytes, expected ${count * dtype.size} for ${dtype.onnx}${JSON.stringify(dims)}`);
    }
    // Copy into a fresh, aligned buffer (little-endian host assumed, as x86 and ARM are).
    const bytes = new Uint8Array(t.raw.length);
    bytes.set(t.raw);
    data = new dtype.Array(bytes.buffer, 0, count);
  } else {
    let src;
    switch (dtype.onnx) {
      case 'float': src = t.floats; break;
      case 'double': src = t.doubles; break;
      case 'int64': src = t.int64s; break;
      case 'uint32': src = t.uint64s.map((v) => Number(BigInt.asUintN(32, v))); break;
      case 'uint64': src = t.uint64s; break;
      case 'float16': src = t.int32s.map((v) => v & 0xffff); break;
      case 'bool': src = t.int32s.map((v) => (v ? 1 : 0)); break;
      default: src = t.int32s; // int8, uint8, int16, uint16, int32
    }
    data = dtype.Array.from(src);
  }
  if (data.length !== count) {
    fail(`${file}: ${data.length} elements for ${dtype.onnx}${JSON.stringify(dims)} (expected ${count})`);
  }
  return { dtype, dims, data };
}

function encodeVarint(v, out) {
  let x = BigInt.asUintN(64, BigInt(v));
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
}

function encodeBytesField(field, bytes, parts) {
  const head = [];
  encodeVarint(field * 8 + 2, head);
  encodeVarint(bytes.length, head);
  parts.push(Buffer.from(head), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

// Serializes a tensor as TensorProto, fields in number order as protobuf does.
function serializeTensor(name, dtype, dims, data) {
  const parts = [];
  const head = [];
  for (const d of dims) {
    encodeVarint(1 * 8 + 0, head);
    encodeVarint(d, head);
  }
  encodeVarint(2 * 8 + 0, head);
  encodeVarint(dtype.code, head);
  parts.push(Buffer.from(head));
  if (dtype.onnx === 'string') {
    for (const s of data) encodeBytesField(6, Buffer.from(String(s), 'utf8'), parts);
    encodeBytesField(8, Buffer.from(name, 'utf8'), parts);
  } else {
    encodeBytesField(8, Buffer.from(name, 'utf8'), parts);
    let bytes;
    if (dtype.onnx === 'bool') {
      bytes = Uint8Array.from(data, (v) => (v ? 1 : 0));
    } else {
      bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    }
    encodeBytesField(9, bytes, parts);
  }
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------------------
// Seeded random inputs.
// ---------------------------------------------------------------------------

function fnv1a32(text) {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(text, 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

// mulberry32: a 32-bit state, one uint32 per call.
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

// float32 -> IEEE binary16 bits, round to nearest even.
const f32buf = new Float32Array(1);
const u32buf = new Uint32Array(f32buf.buffer);
function toHalfBits(value) {
  f32buf[0] = value;
  const x = u32buf[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // inf / nan
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow -> inf
  if (e <= 0) {
    if (e < -10) return sign; // underflow -> zero
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && (half & 1))) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (half & 1))) half++; // may carry into exp: still correct
  return sign | half;
}

const FLOAT_TYPES = new Set(['float', 'double', 'float16']);

function randomTensor(name, dtype, dims, spec, seed) {
  const count = dims.reduce((a, b) => a * b, 1);
  if (dtype.onnx === 'string') {
    if (spec && spec.value !== undefined) return new Array(count).fill(String(spec.value));
    const next = mulberry32((seed ^ fnv1a32(name)) >>> 0);
    return Array.from({ length: count }, () => `s${next() % 10}`);
  }
  const data = new dtype.Array(count);
  const isFloat = FLOAT_TYPES.has(dtype.onnx);
  const big = dtype.onnx === 'int64' || dtype.onnx === 'uint64';
  const store = (i, v) => {
    if (dtype.onnx === 'float16') data[i] = toHalfBits(v);
    else if (dtype.onnx === 'bool') data[i] = v ? 1 : 0;
    else if (big) data[i] = BigInt(v);
    else data[i] = v;
  };
  if (spec && spec.value !== undefined) {
    let v = spec.value;
    if (typeof v === 'boolean') v = v ? 1 : 0;
    if (typeof v !== 'number') fail(`spec for input '${name}': value must be a number`);
    if (!isFloat && !Number.isInteger(v)) fail(`spec for input '${name}': value ${v} is not an integer`);
    for (let i = 0; i < count; i++) store(i, v);
    return data;
  }
  let lo, hi;
  if (spec && spec.range !== undefined) {
    if (!Array.isArray(spec.range) || spec.range.length !== 2 || spec.range.some((x) => typeof x !== 'number')) {
      fail(`spec for input '${name}': range must be [lo, hi]`);
    }
    [lo, hi] = spec.range;
  } else if (isFloat) {
    [lo, hi] = [-1, 1];
  } else {
    [lo, hi] = [0, 9];
  }
  const next = mulberry32((seed ^ fnv1a32(name)) >>> 0);
  for (let i = 0; i < count; i++) {
    const u = next() / 4294967296;
    if (dtype.onnx === 'bool') store(i, u < 0.5);
    else if (isFloat) store(i, lo + (hi - lo) * u);
    else store(i, lo + Math.floor(u * (hi - lo + 1)));
  }
  return data;
}

// ---------------------------------------------------------------------------
// Model spec (tests/models/models.json).
// ---------------------------------------------------------------------------

function loadSpec(specArg, modelPath) {
  let file = specArg;
  let name = null;
  const colon = specArg.lastIndexOf(':');
  if (colon > 0 && !fs.existsSync(specArg)) {
    file = specArg.slice(0, colon);
    name = specArg.slice(colon + 1);
  }
  let list;
  try {
    list = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    fail(`cannot read spec file ${file}: ${e.message}`);
  }
  const models = Array.isArray(list.models) ? list.models : [];
  if (name === null) name = path.basename(modelPath).replace(/\.onnx$/, '');
  const entry = models.find((m) => m.name === name);
  if (!entry) {
    fail(`spec file ${file} has no model '${name}' (it has: ${models.map((m) => m.name).join(', ')})`);
  }
  const inputs = new Map();
  for (const i of entry.inputs || []) inputs.set(i.name, i);
  return { name, inputs };
}

// ---------------------------------------------------------------------------
// Main.
// ---------------------------------------------------------------------------

// The file name stem of a tensor name: each UTF-8 byte outside
// [A-Za-z0-9._-] becomes '_' (see "File names" above).
function fileNameStem(name) {
  let out = '';
  for (const b of Buffer.from(name, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9._-]/.test(c) ? c : '_';
  }
  return out;
}

// Given the names of the tensors written to one directory, in order, the
// file name of each (see "File names" above).
function dataFileNames(names) {
  const byStem = new Map();
  for (const n of names) {
    const stem = fileNameStem(n);
    if (!byStem.has(stem)) byStem.set(stem, new Set());
    byStem.get(stem).add(n);
  }
  const fileOf = new Map();
  const taken = new Set();
  const hashed = [];
  for (const n of names) {
    if (fileOf.has(n)) continue;
    const stem = fileNameStem(n);
    if (stem === n || byStem.get(stem).size === 1) {
      fileOf.set(n, stem + '.pb');
      taken.add(stem + '.pb');
    } else {
      fileOf.set(n, null);
      hashed.push(n);
    }
  }
  for (const n of hashed) {
    const stem = fileNameStem(n) + '.' + fnv1a32(n).toString(16).padStart(8, '0');
    let file = stem + '.pb';
    for (let k = 2; taken.has(file); k++) file = `${stem}.${k}.pb`;
    fileOf.set(n, file);
    taken.add(file);
  }
  return names.map((n) => fileOf.get(n));
}

function loadOrt() {
  try {
    return require('onnxruntime-node');
  } catch (e) {
    fail(
      `cannot load onnxruntime-node (${e.message.split('\n')[0]}).\n` +
        'Install it with scripts/setup.sh (or: cd tools/oracle && ' +
        'ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund)',
    );
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const round3 = (x) => Math.round(x * 1000) / 1000;

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const note = (msg) => {
    if (!opts.quiet) process.stderr.write(`oracle: ${msg}\n`);
  };
  const ort = loadOrt();
  ort.env.logLevel = opts.verbose ? 'warning' : 'error';
  if (!fs.existsSync(opts.model)) fail(`model ${opts.model} does not exist`);

  let session;
  try {
    session = await ort.InferenceSession.create(opts.model, {
      executionProviders: ['cpu'],
      intraOpNumThreads: opts.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: opts.optLevel,
      ...(opts.saveOptimized !== null ? { optimizedModelFilePath: opts.saveOptimized } : {}),
      logSeverityLevel: opts.verbose ? 2 : 3, // 2 warning, 3 error
    });
  } catch (e) {
    fail(`ONNX Runtime ${ort.env.versions.common} cannot load model ${opts.model}: ${e.message}`);
  }
  if (opts.checkLoad) {
    note(`${opts.model} loads`);
    return;
  }

  const spec = opts.spec ? loadSpec(opts.spec, opts.model) : null;
  const meta = new Map(session.inputMetadata.map((m) => [m.name, m]));
  if (spec) {
    for (const n of spec.inputs.keys()) {
      if (!meta.has(n)) fail(`spec '${spec.name}' names input '${n}', which model ${opts.model} does not have (inputs: ${[...meta.keys()].join(', ')})`);
    }
  }

  // Inputs given as files.
  const given = new Map();
  for (const arg of opts.inputs) {
    let name = null;
    let file = arg;
    const eq = arg.indexOf('=');
    if (eq > 0 && meta.has(arg.slice(0, eq))) {
      name = arg.slice(0, eq);
      file = arg.slice(eq + 1);
    } else if (eq > 0 && !fs.existsSync(arg)) {
      fail(`--input ${arg}: '${arg.slice(0, eq)}' is not an input of ${opts.model} (inputs: ${[...meta.keys()].join(', ')})`);
    }
    let buf;
    try {
      buf = fs.readFileSync(file);
    } catch (e) {
      fail(`cannot read input file ${file}: ${e.message}`);
    }
    const proto = parseTensorProto(buf, file);
    if (name === null) name = proto.name;
    if (!meta.has(name)) {
      fail(`input file ${file} is for '${name}', which is not an input of ${opts.model} (inputs: ${[...meta.keys()].join(', ')}); use --input NAME=FILE.pb`);
    }
    if (given.has(name)) fail(`input '${name}' given twice`);
    given.set(name, tensorFromProto(proto, file));
  }

  // Build every input.
  const feeds = {};
  const used = [];
  for (const m of session.inputMetadata) {
    if (!m.isTensor) fail(`input '${m.name}' of ${opts.model} is not a tensor; only tensor inputs are supported`);
    let t = given.get(m.name);
    if (!t) {
      const s = spec ? spec.inputs.get(m.name) : undefined;
      let dtype = BY_ORT.get(m.type);
      if (!dtype) fail(`input '${m.name}' has element type ${m.type}, which the oracle does not support`);
      if (s && s.dtype !== undefined) {
        const sd = BY_NAME.get(s.dtype);
        if (!sd) fail(`spec for input '${m.name}': unknown dtype '${s.dtype}'`);
        if (sd !== dtype) fail(`spec for input '${m.name}' says ${s.dtype}, the model says ${dtype.onnx}`);
      }
      let dims;
      if (s && s.shape !== undefined) {
        dims = s.shape;
        if (!Array.isArray(dims) || dims.some((d) => !Number.isInteger(d) || d < 0)) {
          fail(`spec for input '${m.name}': shape must be a list of non-negative integers`);
        }
        if (m.shape.length !== dims.length) {
          fail(`spec for input '${m.name}' has rank ${dims.length}, the model's input has rank ${m.shape.length}`);
        }
      } else {
        dims = m.shape.map((d, axis) => {
          if (typeof d === 'number' && d >= 0) return d;
          if (typeof d === 'string' && d !== '' && opts.dims.has(d)) return opts.dims.get(d);
          note(`input '${m.name}' dimension ${axis} (${d === '' ? 'unknown' : `'${d}'`}) set to 1; use --dim SYM=N or --spec`);
          return 1;
        });
      }
      t = { dtype, dims, data: randomTensor(m.name, dtype, dims, s, opts.seed) };
    }
    feeds[m.name] = new ort.Tensor(t.dtype.ort, t.data, t.dims);
    used.push({ name: m.name, ...t });
  }

  // Run.
  let results;
  const t0 = process.hrtime.bigint();
  try {
    results = await session.run(feeds);
  } catch (e) {
    fail(`ONNX Runtime failed to run model ${opts.model}: ${e.message}`);
  }
  const runMs = Number(process.hrtime.bigint() - t0) / 1e6;

  // Write inputs and outputs.
  fs.mkdirSync(path.join(opts.out, 'inputs'), { recursive: true });
  const write = (dir, base, name, dtype, dims, data) => {
    const file = path.join(dir, base);
    fs.writeFileSync(file, serializeTensor(name, dtype, dims, data));
    return file;
  };
  const summary = { model: opts.model, ort_version: ort.env.versions.common, run_ms: round3(runMs), inputs: [], outputs: [] };
  const inputFiles = dataFileNames(used.map((u) => u.name));
  used.forEach((u, i) => {
    const file = write(path.join(opts.out, 'inputs'), inputFiles[i], u.name, u.dtype, u.dims, u.data);
    summary.inputs.push({ name: u.name, dtype: u.dtype.onnx, dims: u.dims, file });
  });
  const outputFiles = dataFileNames(session.outputNames);
  for (const [i, name] of session.outputNames.entries()) {
    const v = results[name];
    if (!v || typeof v.type !== 'string' || !Array.isArray(v.dims)) {
      fail(`output '${name}' of ${opts.model} is not a tensor; only tensor outputs are supported`);
    }
    const dtype = BY_ORT.get(v.type);
    if (!dtype) fail(`output '${name}' has element type ${v.type}, which the oracle does not support`);
    const dims = v.dims.map(Number);
    const file = write(opts.out, outputFiles[i], name, dtype, dims, v.data);
    summary.outputs.push({ name, dtype: dtype.onnx, dims, file });
  }

  let bench = null;
  if (opts.bench > 0) {
    for (let i = 0; i < 2; i++) await session.run(feeds);
    const times = [];
    for (let i = 0; i < opts.bench; i++) {
      const s = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    bench = { runs: opts.bench, median_ms: round3(median(times)), min_ms: round3(Math.min(...times)) };
    summary.bench = bench;
  }

  process.stdout.write(JSON.stringify(summary) + '\n');
  if (bench) process.stdout.write(JSON.stringify(bench) + '\n');
}

// Other scripts (tests/transforms/ort_convert_opset.js) reuse the readers
// (and dataFileNames, to find a tensor's file).
module.exports = { BY_CODE, BY_ORT, OracleError, dataFileNames, loadOrt, parseTensorProto, tensorFromProto };

if (require.main === module) {
  main().catch((e) => {
    if (e instanceof OracleError) {
      process.stderr.write(`oracle: error: ${e.message}\n`);
    } else {
      process.stderr.write(`oracle: internal error: ${e && e.stack ? e.stack : e}\n`);
    }
    process.exit(1);
  });
}
