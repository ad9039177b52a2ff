// The ONNX Runtime side of tools/bench/zoo: one model's batch-1 latency and throughput on ONNX
// Runtime's CPU provider (the npm package onnxruntime-node, installed with --ignore-scripts).
//
//   NODE_PATH=build/zoo/node/node_modules node tools/bench/zoo_ort.js SPEC.json
//
// SPEC.json: {"onnx": PATH, "threads": N, "runs": K, "warmup": W, "batches": [1, 32],
//             "inputs": [{"name": ..., "dtype": "float32"|"int64", "shape": [...without batch]}]}
// The session has intraOpNumThreads N, interOpNumThreads 1 and graphOptimizationLevel 'all'; each
// batch is warmed up W times, then session.run is timed K times with process.hrtime.bigint().
// Inputs are seeded: floats uniform in [-1, 1), integers 0..99 (valid ids of any vocabulary here).
// Prints one JSON line: {"version": ..., "results": [{"batch", "median_ms", "min_ms", ...}]}.
'use strict';

const fs = require('fs');
const ort = require('onnxruntime-node');

function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

function feeds(spec, batch) {
  const random = generator(batch + 7);
  const out = {};
  for (const input of spec.inputs) {
    const shape = [batch, ...input.shape];
    const count = shape.reduce((a, b) => a * b, 1);
    if (input.dtype === 'int64') {
      const data = new BigInt64Array(count);
      for (let i = 0; i < count; ++i) data[i] = BigInt(Math.floor(random() * 100));
      out[input.name] = new ort.Tensor('int64', data, shape);
    } else {
      const data = new Float32Array(count);
      for (let i = 0; i < count; ++i) data[i] = random() * 2 - 1;
      out[input.name] = new ort.Tensor('float32', data, shape);
    }
  }
  return out;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const session = await ort.InferenceSession.create(spec.onnx, {
    intraOpNumThreads: spec.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionProviders: ['cpu'],
  });
  const results = [];
  for (const batch of spec.batches) {
    const input = feeds(spec, batch);
    for (let i = 0; i < spec.warmup; ++i) await session.run(input);
    const ms = [];
    for (let i = 0; i < spec.runs; ++i) {
      const start = process.hrtime.bigint();
      await session.run(input);
      ms.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    const med = median(ms);
    results.push({batch, runs: ms.length, median_ms: med, min_ms: Math.min(...ms),
                  samples_per_second: batch / (med / 1e3)});
  }
  const version = require('onnxruntime-node/package.json').version;
  console.log(JSON.stringify({version, threads: spec.threads, results}));
}

main().catch((error) => {
  console.error(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
