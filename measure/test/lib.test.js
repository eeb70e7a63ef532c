'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const lib = require('../lib');
const { fakeProc } = require('./fake');


test('readers of a fake /proc', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'proc-'));
  fakeProc(root, { busy: 300, total: 1000, availKb: 12000000, rd: 100, rx: 4000 });
  assert.deepStrictEqual(lib.readCpu(root), [300, 1000]);
  assert.deepStrictEqual(lib.readMemory(root), [4000000 * 1024, 16000000 * 1024]);
  assert.deepStrictEqual(lib.readDiskIo(root, path.join(root, 'none')), [100 * 512, 200 * 512]);
  assert.deepStrictEqual(lib.readNet(root), [4000, 2000]);
});

test('summary: cores per interval, memory peak above the baseline, byte deltas', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'proc-'));
  const samples = [];
  for (const [busy, total, availKb, rd, rx] of [[0, 0, 12000000, 0, 0],
    [500, 1000, 10000000, 10, 100], [1500, 2000, 11000000, 30, 300]]) {
    fakeProc(root, { busy, total, availKb, rd, rx });
    samples.push(lib.takeSample(root, root));
  }
  const rec = lib.summarize(samples, 1, 4, 'linux');
  assert.strictEqual(rec.cpu_cores_mean, 3); // 50% then 100% of 4 cores
  assert.strictEqual(rec.cpu_cores_p95, 3.9);
  assert.strictEqual(rec.memory_baseline_bytes, 4000000 * 1024);
  assert.strictEqual(rec.memory_peak_bytes, 6000000 * 1024);
  assert.strictEqual(rec.disk_read_bytes, 30 * 512);
  assert.strictEqual(rec.net_tx_bytes, 150);
  assert.deepStrictEqual(rec.missing, []);
  assert.strictEqual(rec.kind, 'laser-ci-usage');
});

test('without /proc: os module figures, disk and network bytes listed as missing', () => {
  const s = lib.takeSample('', os.tmpdir());
  const rec = lib.summarize([s, lib.takeSample('', os.tmpdir())], 1, os.cpus().length, 'darwin');
  assert.ok(rec.memory_total_bytes > 0 && rec.memory_peak_bytes > 0);
  assert.ok(rec.missing.includes('disk_read_bytes') && rec.missing.includes('net_rx_bytes'));
  assert.ok(!rec.missing.includes('memory_peak_bytes'));
});

test('crc32 and a stored zip', () => {
  assert.strictEqual(lib.crc32(Buffer.from('123456789')), 0xcbf43926);
  const data = Buffer.from('{"a": 1}\n');
  const zip = lib.zipStored([['usage.json', data]]);
  assert.strictEqual(zip.readUInt32LE(0), 0x04034b50);
  assert.strictEqual(zip.readUInt32LE(14), lib.crc32(data));
  assert.strictEqual(zip.subarray(30 + 10, 30 + 10 + data.length).toString(), data.toString());
  assert.strictEqual(zip.readUInt32LE(zip.length - 22), 0x06054b50);
});

test('backend ids from the runtime token; artifact names', () => {
  const claims = { scp: 'Actions.ExampleScope Actions.Results:run-1:job-2' };
  const token = `x.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.y`;
  assert.deepStrictEqual(lib.backendIds(token),
    { workflowRunBackendId: 'run-1', workflowJobRunBackendId: 'job-2' });
  assert.throws(() => lib.backendIds('nope'), /not a JWT/);
  const name = lib.artifactName({ GITHUB_JOB: 'build/x y', GITHUB_RUN_ATTEMPT: '2' }, 't');
  assert.match(name, /^laser-ci-usage-2-build_x_y-[0-9a-f]{8}$/);
});

test('a tighter cgroup memory limit (a container) is the memory the job has', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'proc-'));
  fakeProc(root, { busy: 0, total: 0, availKb: 12000000, rd: 0, rx: 0 });
  fs.mkdirSync(path.join(root, 'self'));
  fs.writeFileSync(path.join(root, 'self', 'cgroup'), '0::/actions/job\n');
  const cg = fs.mkdtempSync(path.join(os.tmpdir(), 'cgroup-'));
  fs.mkdirSync(path.join(cg, 'actions', 'job'), { recursive: true });
  fs.writeFileSync(path.join(cg, 'memory.max'), 'max\n');
  fs.writeFileSync(path.join(cg, 'actions', 'memory.max'), '5000000000\n');
  fs.writeFileSync(path.join(cg, 'actions', 'memory.current'), '3000000000\n');
  fs.writeFileSync(path.join(cg, 'actions', 'memory.stat'), 'anon 1\ninactive_file 1000000000\n');
  fs.writeFileSync(path.join(cg, 'actions', 'job', 'memory.max'), 'max\n');
  const cgroup = lib.cgroupOf({ LASER_CI_MEASURE_CGROUP: cg }, root);
  assert.strictEqual(cgroup[0], path.join(cg, 'actions', 'job'));
  const s = lib.takeSample(root, root, cgroup);
  const rec = lib.summarize([s, lib.takeSample(root, root, cgroup)], 1, 2, 'linux');
  assert.strictEqual(rec.memory_source, 'cgroup');
  assert.strictEqual(rec.memory_total_bytes, 5000000000);
  assert.strictEqual(rec.memory_peak_bytes, 2000000000);
  fs.writeFileSync(path.join(cg, 'actions', 'memory.max'), '99000000000\n');
  const t = lib.takeSample(root, root, cgroup);
  assert.strictEqual(t.mem_source, 'meminfo');
  assert.strictEqual(t.mem[1], 16000000 * 1024);
});
