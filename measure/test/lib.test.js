'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const lib = require('../lib');

function fakeProc(root, { busy, total, availKb, rd, rx }) {
  fs.mkdirSync(path.join(root, 'net'), { recursive: true });
  fs.writeFileSync(path.join(root, 'stat'), `cpu  ${busy} 0 0 ${total - busy} 0 0 0 0 0 0\ncpu0 1 0 0 1\n`);
  fs.writeFileSync(path.join(root, 'meminfo'),
    `MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:   ${availKb} kB\n`);
  fs.writeFileSync(path.join(root, 'diskstats'),
    `   8       0 sda 10 0 ${rd} 5 20 0 ${2 * rd} 9 0 0 0\n`
    + `   8       1 sda1 10 0 ${rd} 5 20 0 ${2 * rd} 9 0 0 0\n`
    + '   7       0 loop0 10 0 999 5 20 0 999 9 0 0 0\n');
  fs.writeFileSync(path.join(root, 'net', 'dev'),
    'Inter-| Receive | Transmit\n face |bytes packets|bytes\n'
    + '    lo: 5000 1 0 0 0 0 0 0 5000 1 0 0 0 0 0 0\n'
    + `  eth0: ${rx} 1 0 0 0 0 0 0 ${rx / 2} 1 0 0 0 0 0 0\n`);
}
module.exports = { fakeProc };

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
