'use strict';
// The main and post steps end to end: a fake /proc, fake runner environment and a fake
// results service (Twirp CreateArtifact, the blob PUT, FinalizeArtifact).
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const lib = require('../lib');
const { main } = require('../main');
const { post } = require('../post');
const { fakeProc } = require('./fake');

function fakeResults() {
  const calls = [];
  const blobs = {};
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      calls.push({ method: req.method, url: req.url, headers: req.headers, body });
      const json = (code, obj) => {
        res.writeHead(code, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(obj));
      };
      if (req.url.endsWith('ArtifactService/CreateArtifact')) {
        if (req.headers.authorization !== `Bearer ${server.token}`) return json(401, { msg: 'no' });
        const p = JSON.parse(body);
        return json(200, { ok: true, signedUploadUrl: `http://127.0.0.1:${server.address().port}/blob/${p.name}?sig=1` });
      }
      if (req.url.startsWith('/blob/')) {
        if (req.headers['x-ms-blob-type'] !== 'BlockBlob') return json(400, {});
        blobs[req.url.split('?')[0].slice(6)] = body;
        res.writeHead(201);
        return res.end();
      }
      if (req.url.endsWith('ArtifactService/FinalizeArtifact')) return json(200, { ok: true, artifactId: '77' });
      return json(404, { msg: `${req.method} ${req.url}` });
    });
  });
  server.calls = calls;
  server.blobs = blobs;
  return server;
}

function env(dir, proc, port, token) {
  const out = path.join(dir, 'output');
  fs.writeFileSync(out, '');
  return {
    RUNNER_TEMP: dir, GITHUB_WORKSPACE: dir, LASER_CI_MEASURE_PROC: proc,
    GITHUB_STATE: path.join(dir, 'state'), GITHUB_OUTPUT: out,
    GITHUB_STEP_SUMMARY: path.join(dir, 'summary'),
    GITHUB_JOB: 'test', GITHUB_RUN_ID: '123', GITHUB_RUN_ATTEMPT: '1',
    RUNNER_NAME: 'GitHub Actions 7', RUNNER_OS: 'Linux', INPUT_INTERVAL: '0.2',
    ACTIONS_RESULTS_URL: `http://127.0.0.1:${port}/`, ACTIONS_RUNTIME_TOKEN: token,
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('main starts a detached sampler; post stops it, summarizes and uploads', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'measure-'));
  const proc = path.join(dir, 'proc');
  fakeProc(proc, { busy: 0, total: 0, availKb: 12000000, rd: 0, rx: 0 });
  const server = fakeResults();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  server.token = `h.${Buffer.from(JSON.stringify({ scp: 'Actions.Results:r1:j1' })).toString('base64url')}.s`;
  const e = env(dir, proc, server.address().port, server.token);
  try {
    const state = main(e);
    assert.ok(fs.readFileSync(e.GITHUB_STATE, 'utf8').includes('LASER_CI_MEASURE_DIR='));
    // the job: 2 of 4 cores busy, 2 GB more memory used
    await sleep(300);
    fakeProc(proc, { busy: 1000, total: 2000, availKb: 10000000, rd: 64, rx: 1000 });
    await sleep(900);
    const n = lib.readSamples(state.samples).length;
    assert.ok(n >= 3, `the sampler wrote ${n} samples`);
    e.STATE_LASER_CI_MEASURE_DIR = path.dirname(state.samples);
    const out = await post(e);
    // the sampler has stopped: no sample is added after the post step
    const after = lib.readSamples(state.samples).length;
    await sleep(600);
    assert.strictEqual(lib.readSamples(state.samples).length, after);
    assert.throws(() => process.kill(state.pid, 0));
    const rec = out.rec;
    assert.strictEqual(rec.memory_peak_bytes - rec.memory_baseline_bytes, 2000000 * 1024);
    assert.strictEqual(rec.memory_total_bytes, 16000000 * 1024);
    assert.ok(rec.cpu_cores_p95 > 0);
    assert.strictEqual(rec.disk_read_bytes, 64 * 512);
    assert.strictEqual(rec.job, 'test');
    assert.strictEqual(rec.run_id, 123);
    assert.strictEqual(rec.runner_name, 'GitHub Actions 7');
    assert.ok(rec.sampler_cpu_cores >= 0 && rec.sampler_cpu_cores < 0.05, String(rec.sampler_cpu_cores));
    assert.ok(fs.readFileSync(e.GITHUB_OUTPUT, 'utf8').startsWith('record='));
    assert.match(fs.readFileSync(e.GITHUB_STEP_SUMMARY, 'utf8'), /memory peak/);
    // the upload: CreateArtifact -> PUT -> FinalizeArtifact, with the token's backend ids
    const twirp = server.calls.filter((c) => c.url.includes('/twirp/'));
    assert.deepStrictEqual(twirp.map((c) => c.url.split('/').pop()), ['CreateArtifact', 'FinalizeArtifact']);
    const create = JSON.parse(twirp[0].body);
    assert.strictEqual(create.workflowRunBackendId, 'r1');
    assert.strictEqual(create.workflowJobRunBackendId, 'j1');
    assert.strictEqual(create.version, 4);
    assert.match(create.name, /^laser-ci-usage-1-test-/);
    const days = (Date.parse(create.expiresAt) - Date.now()) / 86400e3;
    assert.ok(days > 13.9 && days < 14.1);
    const zip = server.blobs[create.name];
    const fin = JSON.parse(twirp[1].body);
    assert.strictEqual(Number(fin.size), zip.length);
    assert.match(fin.hash, /^sha256:[0-9a-f]{64}$/);
    const inZip = JSON.parse(zip.subarray(30 + 'usage.json'.length, zip.length - 22 - 56).toString());
    assert.strictEqual(inZip.memory_peak_bytes, rec.memory_peak_bytes);
    assert.strictEqual(out.id, '77');
  } finally {
    server.close();
  }
});

test('post without a runtime token keeps the record and says why nothing was uploaded', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'measure-'));
  const proc = path.join(dir, 'proc');
  fakeProc(proc, { busy: 0, total: 0, availKb: 12000000, rd: 0, rx: 0 });
  const e = env(dir, proc, 9, '');
  delete e.ACTIONS_RUNTIME_TOKEN;
  main(e);
  await sleep(300);
  await assert.rejects(post(e), /ACTIONS_RUNTIME_TOKEN/);
  const rec = JSON.parse(fs.readFileSync(path.join(dir, 'laser-ci-measure', 'usage.json'), 'utf8'));
  assert.strictEqual(rec.kind, 'laser-ci-usage');
  e.INPUT_UPLOAD = 'false';
  const again = await post(e);
  assert.strictEqual(again.name, undefined);
});
