#!/usr/bin/env node
// matmul_add_models.js — writes the two forms of a linear layer with an
// N-D input as ONNX models, for bench/matmul_add_nd.sh:
//
//   matmul.onnx:  y = Add(MatMul(x, W), b)                 x: [B, S, K]
//   gemm.onnx:    y = Reshape(Gemm(Reshape(x, [-1, K]), W, b), [B, S, N])
//
// W [K, N] and b [N] are float32 initializers (seeded uniform values, the
// same in both files), opset 13, IR version 8. The files are written with a
// minimal protobuf encoder (ModelProto, GraphProto, NodeProto,
// ValueInfoProto, TensorProto: only the fields used here, numbered as in
// onnx.proto).
//
// usage: node matmul_add_models.js B S K N OUTDIR

'use strict';

const fs = require('fs');
const path = require('path');

// --- protobuf encoding -------------------------------------------------------

function varint(n) {
  const out = [];
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n; // two's complement, as int64 fields are written
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return Buffer.from(out);
}
const key = (field, wire) => varint((field << 3) | wire);
const int = (field, n) => Buffer.concat([key(field, 0), varint(n)]);
const bytes = (field, buf) => Buffer.concat([key(field, 2), varint(buf.length), buf]);
const str = (field, s) => bytes(field, Buffer.from(s, 'utf8'));
const msg = (field, parts) => bytes(field, Buffer.concat(parts));

const FLOAT = 1;
const INT64 = 7;

// TensorProto: dims 1, data_type 2, name 8, raw_data 9.
function tensor(field, name, dtype, dims, raw) {
  return msg(field, [...dims.map((d) => int(1, d)), int(2, dtype), str(8, name), bytes(9, raw)]);
}
// ValueInfoProto: name 1, type 2 (TypeProto.tensor_type 1: elem_type 1,
// shape 2 with dim 1 { dim_value 1 }).
function valueInfo(field, name, dims) {
  const shape = msg(2, dims.map((d) => msg(1, [int(1, d)])));
  return msg(field, [str(1, name), msg(2, [msg(1, [int(1, FLOAT), shape])])]);
}
// NodeProto: input 1, output 2, name 3, op_type 4.
function node(inputs, outputs, name, op) {
  return msg(1, [...inputs.map((s) => str(1, s)), ...outputs.map((s) => str(2, s)), str(3, name), str(4, op)]);
}
// ModelProto: ir_version 1, graph 7, opset_import 8 (domain 1, version 2).
// GraphProto: node 1, name 2, initializer 5, input 11, output 12.
function model(nodes, inits, inputs, outputs) {
  const graph = msg(7, [...nodes, str(2, 'linear'), ...inits, ...inputs, ...outputs]);
  return Buffer.concat([int(1, 8), graph, msg(8, [str(1, ''), int(2, 13)])]);
}

// --- the two forms -------------------------------------------------------------

function floats(n, seed) {
  // mulberry32, scaled to [-1/sqrt(K), 1/sqrt(K)) by the caller.
  let a = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = ((t ^ (t >>> 14)) >>> 0) / 4294967296 * 2 - 1;
  }
  return out;
}
const raw = (typed) => Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength);

function main() {
  const args = process.argv.slice(2);
  if (args.length !== 5) {
    process.stderr.write('usage: node matmul_add_models.js B S K N OUTDIR\n');
    process.exit(2);
  }
  const [B, S, K, N] = args.slice(0, 4).map((s) => {
    const n = Number(s);
    if (!Number.isSafeInteger(n) || n < 1) {
      process.stderr.write(`matmul_add_models: '${s}' is not a positive integer\n`);
      process.exit(2);
    }
    return n;
  });
  const outdir = args[4];
  fs.mkdirSync(outdir, { recursive: true });
  const scale = 1 / Math.sqrt(K);
  const w = floats(K * N, 1).map((v) => v * scale);
  const b = floats(N, 2).map((v) => v * 0.1);
  const W = tensor(5, 'W', FLOAT, [K, N], raw(w));
  const bias = tensor(5, 'b', FLOAT, [N], raw(b));
  const x = valueInfo(11, 'x', [B, S, K]);
  const y = valueInfo(12, 'y', [B, S, N]);

  const mm = model([node(['x', 'W'], ['xw'], 'matmul', 'MatMul'), node(['xw', 'b'], ['y'], 'add', 'Add')],
    [W, bias], [x], [y]);
  fs.writeFileSync(path.join(outdir, 'matmul.onnx'), mm);

  const s2 = tensor(5, 'shape2d', INT64, [2], raw(new BigInt64Array([-1n, BigInt(K)])));
  const s3 = tensor(5, 'shape3d', INT64, [3], raw(new BigInt64Array([BigInt(B), BigInt(S), BigInt(N)])));
  const gemm = model([
    node(['x', 'shape2d'], ['x2'], 'reshape_in', 'Reshape'),
    node(['x2', 'W', 'b'], ['y2'], 'gemm', 'Gemm'),
    node(['y2', 'shape3d'], ['y'], 'reshape_out', 'Reshape'),
  ], [W, bias, s2, s3], [x], [y]);
  fs.writeFileSync(path.join(outdir, 'gemm.onnx'), gemm);
}

main();
