// The ONNX Runtime side of tools/onnx/check_ort.py: runs each case of a JSON list on ONNX Runtime's
// CPU provider (the npm package onnxruntime-node, as tools/bench/zoo installs it) and writes its
// outputs as raw little-endian files.
//
//   NODE_PATH=build/zoo/node/node_modules node tools/onnx/check_ort.js CASES.json REPORT.json
//
// CASES.json: [{"name", "model", "inputs": [{"name", "dtype", "shape", "path"}], "outputs":
// [names], "out_prefix"}]. REPORT.json: [{"name", "ok": true, "outputs": [{"file", "dtype",
// "shape"}]} or {"name", "ok": false, "error"}], one per case, in order.
'use strict';

const fs = require('fs');
const ort = require('onnxruntime-node');

const arrays = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
  int16: Int16Array, uint16: Uint16Array, int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
};

async function run(c) {
  const session = await ort.InferenceSession.create(c.model, {
    intraOpNumThreads: 1,
    executionProviders: ['cpu'],
  });
  const feeds = {};
  for (const input of c.inputs) {
    const bytes = fs.readFileSync(input.path);
    const Type = arrays[input.dtype];
    if (!Type) throw new Error('input type ' + input.dtype + ' is not handled here');
    const data = new Type(bytes.buffer, bytes.byteOffset, bytes.byteLength / Type.BYTES_PER_ELEMENT);
    feeds[input.name] = new ort.Tensor(input.dtype, data, input.shape);
  }
  const results = await session.run(feeds);
  return c.outputs.map((name, k) => {
    const t = results[name];
    const file = c.out_prefix + k + '.bin';
    fs.writeFileSync(file, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    return {file, dtype: t.type, shape: t.dims};
  });
}

async function main() {
  const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const report = [];
  for (const c of cases) {
    try {
      report.push({name: c.name, ok: true, outputs: await run(c)});
    } catch (error) {
      report.push({name: c.name, ok: false, error: String(error).slice(0, 400)});
    }
  }
  fs.writeFileSync(process.argv[3], JSON.stringify(report));
}

main().catch((error) => {
  console.error(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
