'use strict';
// The laser-ci measure action's shared code: Node's standard library only.
// Samples (Linux: /proc; elsewhere: os.cpus(), os.freemem()), the usage record (the keys of
// laser_ci/measure/record.py), a stored zip, and the artifact upload (Actions artifact v4).

const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const https = require('https');
const os = require('os');
const path = require('path');

const KIND = 'laser-ci-usage';
const VERSION = 1;
const SECTOR = 512;
const ARTIFACT_PREFIX = 'laser-ci-usage-';
const RECORD_FILE = 'usage.json';

function read(file) {
  try {
    return fs.readFileSync(file, 'latin1');
  } catch (e) {
    return null;
  }
}

// (busy, total) jiffies of all cores; iowait counts as idle.
function readCpu(root) {
  const text = read(path.join(root, 'stat'));
  if (!text) return null;
  for (const line of text.split('\n')) {
    const parts = line.trim().split(/\s+/);
    if (parts[0] !== 'cpu') continue;
    const v = parts.slice(1, 9).map(Number);
    while (v.length < 8) v.push(0);
    if (v.some((x) => !Number.isFinite(x))) return null;
    const total = v.reduce((a, b) => a + b, 0);
    return [total - v[3] - v[4], total];
  }
  return null;
}

// (used, total) bytes: MemTotal - MemAvailable.
function readMemory(root) {
  const text = read(path.join(root, 'meminfo'));
  if (!text) return null;
  const kb = {};
  for (const line of text.split('\n')) {
    const m = /^([^:]+):\s+(\d+)/.exec(line);
    if (m) kb[m[1].trim()] = Number(m[2]);
  }
  if (kb.MemTotal === undefined) return null;
  const avail = kb.MemAvailable !== undefined ? kb.MemAvailable
    : (kb.MemFree || 0) + (kb.Buffers || 0) + (kb.Cached || 0);
  return [(kb.MemTotal - avail) * 1024, kb.MemTotal * 1024];
}

function wholeDisk(name, sysBlock) {
  if (/^(loop|ram|zram|dm-|md|sr|fd|nbd)/.test(name)) return false;
  if (sysBlock && fs.existsSync(sysBlock)) return fs.existsSync(path.join(sysBlock, name));
  return !/\d$/.test(name);
}

// (read, written) bytes since boot over whole disks.
function readDiskIo(root, sysBlock) {
  const text = read(path.join(root, 'diskstats'));
  if (text === null) return null;
  let rd = 0;
  let wr = 0;
  for (const line of text.split('\n')) {
    const p = line.trim().split(/\s+/);
    if (p.length < 10 || !wholeDisk(p[2], sysBlock)) continue;
    rd += Number(p[5]) * SECTOR || 0;
    wr += Number(p[9]) * SECTOR || 0;
  }
  return [rd, wr];
}

// (received, sent) bytes since boot over interfaces other than lo.
function readNet(root) {
  const text = read(path.join(root, 'net', 'dev'));
  if (text === null) return null;
  let rx = 0;
  let tx = 0;
  for (const line of text.split('\n').slice(2)) {
    const i = line.indexOf(':');
    if (i < 0 || line.slice(0, i).trim() === 'lo') continue;
    const p = line.slice(i + 1).trim().split(/\s+/);
    if (p.length < 9) continue;
    rx += Number(p[0]) || 0;
    tx += Number(p[8]) || 0;
  }
  return [rx, tx];
}

function readFs(dir) {
  try {
    const st = fs.statfsSync(dir);
    const total = st.blocks * st.bsize;
    return [total - st.bfree * st.bsize, st.bavail * st.bsize, total];
  } catch (e) {
    return null;
  }
}

// This process's cgroup (v2: the "0::" line of /proc/self/cgroup) under fsRoot.
function cgroupDir(root, fsRoot) {
  const text = root ? read(path.join(root, 'self', 'cgroup')) : null;
  for (const line of (text || '').split('\n')) {
    if (line.startsWith('0::')) return path.join(fsRoot, line.slice(3).trim().replace(/^\/+/, ''));
  }
  return null;
}

// (used, limit) bytes of the tightest memory.max on dir and its parents up to fsRoot;
// used = memory.current less inactive_file (reclaimable page cache). null without a limit.
function readCgroupMemory(dir, fsRoot) {
  let best = null;
  let cur = path.resolve(dir);
  const top = path.resolve(fsRoot);
  for (;;) {
    const limit = (read(path.join(cur, 'memory.max')) || '').trim();
    if (/^\d+$/.test(limit) && (best === null || Number(limit) < best[1])) best = [cur, Number(limit)];
    if (cur === top || !cur.startsWith(top + path.sep)) break;
    cur = path.dirname(cur);
  }
  if (best === null) return null;
  const current = Number((read(path.join(best[0], 'memory.current')) || '').trim());
  if (!Number.isFinite(current) || !(read(path.join(best[0], 'memory.current')) || '').trim()) return null;
  let inactive = 0;
  for (const line of (read(path.join(best[0], 'memory.stat')) || '').split('\n')) {
    const [name, value] = line.split(' ');
    if (name === 'inactive_file' && /^\d+$/.test(value || '')) inactive = Number(value);
  }
  return [Math.max(0, current - inactive), best[1]];
}

function cpuFromOs() {
  let busy = 0;
  let total = 0;
  for (const c of os.cpus()) {
    const t = c.times;
    busy += t.user + t.nice + t.sys + t.irq;
    total += t.user + t.nice + t.sys + t.irq + t.idle;
  }
  return total > 0 ? [busy, total] : null;
}

// One sample of the machine. root: the /proc to read ('' where there is none); cgroup:
// [this process's cgroup folder, the cgroup file system's root] (a container's limit).
function takeSample(root, diskPath, cgroup) {
  const linux = Boolean(root) && fs.existsSync(path.join(root, 'stat'));
  const cpu = linux ? readCpu(root) : cpuFromOs();
  let mem = linux ? readMemory(root) : [os.totalmem() - os.freemem(), os.totalmem()];
  let memSource = linux ? 'meminfo' : 'os';
  const limited = cgroup && cgroup[0] ? readCgroupMemory(cgroup[0], cgroup[1]) : null;
  if (limited && (!mem || limited[1] < mem[1])) {
    mem = limited;
    memSource = 'cgroup';
  }
  const fsu = readFs(diskPath);
  const sysBlock = root === '/proc' ? '/sys/block' : path.join(root || '.', 'sys-block');
  const dio = linux ? readDiskIo(root, sysBlock) : null;
  const net = linux ? readNet(root) : null;
  return {
    t: Date.now() / 1000,
    cpu: cpu, mem: mem, mem_source: memSource, fs: fsu, dio: dio, net: net,
    self_cpu_s: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
  };
}

function percentile(values, q) {
  const xs = values.slice().sort((a, b) => a - b);
  if (!xs.length) return null;
  const pos = (xs.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, xs.length - 1);
  return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo);
}

function round(x, digits) {
  if (x === null || x === undefined) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function delta(samples, key, i) {
  const vals = samples.filter((s) => s[key]).map((s) => s[key][i]);
  return vals.length >= 2 ? Math.max(0, vals[vals.length - 1] - vals[0]) : null;
}

// The record's figures from the samples (the first is the baseline), as
// laser_ci/measure/sampler.py's summarize writes them.
function summarize(samples, intervalS, cpuCount, platform) {
  const cores = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1].cpu;
    const b = samples[i].cpu;
    if (!a || !b) continue;
    const total = b[1] - a[1];
    if (total > 0) cores.push((cpuCount * (b[0] - a[0])) / total);
  }
  const mem = samples.filter((s) => s.mem).map((s) => s.mem[0]);
  const used = samples.filter((s) => s.fs).map((s) => s.fs[0]);
  const free = samples.filter((s) => s.fs).map((s) => s.fs[1]);
  const withMem = samples.find((s) => s.mem);
  const withFs = samples.find((s) => s.fs);
  const rec = {
    kind: KIND,
    version: VERSION,
    os: platform,
    interval_s: intervalS,
    samples: samples.length,
    cpu_count: cpuCount,
    cpu_cores_mean: cores.length ? round(cores.reduce((a, b) => a + b, 0) / cores.length, 4) : null,
    cpu_cores_p95: cores.length ? round(percentile(cores, 0.95), 4) : null,
    memory_baseline_bytes: mem.length ? mem[0] : null,
    memory_peak_bytes: mem.length ? Math.max(...mem) : null,
    memory_total_bytes: withMem ? withMem.mem[1] : null,
    memory_source: samples.length ? samples[0].mem_source || null : null,
    disk_used_baseline_bytes: used.length ? used[0] : null,
    disk_used_peak_bytes: used.length ? Math.max(...used) : null,
    disk_free_min_bytes: free.length ? Math.min(...free) : null,
    disk_total_bytes: withFs ? withFs.fs[2] : null,
    disk_read_bytes: delta(samples, 'dio', 0),
    disk_write_bytes: delta(samples, 'dio', 1),
    net_rx_bytes: delta(samples, 'net', 0),
    net_tx_bytes: delta(samples, 'net', 1),
  };
  rec.missing = Object.keys(rec).filter((k) => rec[k] === null).sort();
  return rec;
}

// Samples written one JSON object a line; a torn last line (a kill mid-write) is skipped.
function readSamples(file) {
  const text = read(file) || '';
  const out = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line));
    } catch (e) {
      // incomplete line
    }
  }
  return out;
}

// --- a zip of stored (uncompressed) files: what an artifact holds ------------------------
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(buf) {
  let c = 0xffffffff;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function zipStored(files) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const [name, data] of files) {
    const nameBuf = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // utf-8 names
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt32LE(0, 10); // time, date
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt32LE(0, 12);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, data);
    centrals.push(central, nameBuf);
    offset += 30 + nameBuf.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

// --- the artifact upload (Actions artifact v4: Twirp CreateArtifact, blob PUT, Finalize) --
function backendIds(token) {
  const part = String(token || '').split('.')[1];
  if (!part) throw new Error('ACTIONS_RUNTIME_TOKEN is not a JWT');
  const claims = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  for (const scope of String(claims.scp || '').split(' ')) {
    const p = scope.split(':');
    if (p[0] === 'Actions.Results' && p.length === 3) {
      return { workflowRunBackendId: p[1], workflowJobRunBackendId: p[2] };
    }
  }
  throw new Error('ACTIONS_RUNTIME_TOKEN has no Actions.Results scope');
}

function request(method, url, headers, body, timeoutMs) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(u, { method, headers: { ...headers, 'Content-Length': body.length },
      timeout: timeoutMs || 30000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
    });
    req.on('timeout', () => req.destroy(new Error(`timed out: ${method} ${u.host}`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function twirp(env, method, payload) {
  const base = new URL(env.ACTIONS_RESULTS_URL);
  const url = new URL(`/twirp/github.actions.results.api.v1.ArtifactService/${method}`, base);
  const res = await request('POST', url, {
    'Content-Type': 'application/json',
    Authorization: `Bearer ${env.ACTIONS_RUNTIME_TOKEN}`,
    'User-Agent': 'laser-ci-measure',
  }, Buffer.from(JSON.stringify(payload)));
  let data = {};
  try {
    data = JSON.parse(res.body.toString('utf8') || '{}');
  } catch (e) {
    data = {};
  }
  if (res.status !== 200) {
    throw new Error(`${method}: HTTP ${res.status} ${String(data.msg || data.message || '').slice(0, 200)}`);
  }
  return data;
}

// Uploads files [[name, Buffer]] as the artifact `name`; returns its id.
async function uploadArtifact(env, name, files, retentionDays) {
  if (!env.ACTIONS_RUNTIME_TOKEN || !env.ACTIONS_RESULTS_URL) {
    throw new Error('no ACTIONS_RUNTIME_TOKEN / ACTIONS_RESULTS_URL (not on a GitHub runner)');
  }
  const ids = backendIds(env.ACTIONS_RUNTIME_TOKEN);
  const expires = new Date(Date.now() + retentionDays * 86400e3).toISOString();
  const created = await twirp(env, 'CreateArtifact', { ...ids, name, version: 4, expiresAt: expires });
  const uploadUrl = created.signedUploadUrl || created.signed_upload_url;
  if (!created.ok || !uploadUrl) throw new Error('CreateArtifact: no upload URL');
  const zip = zipStored(files);
  const put = await request('PUT', uploadUrl, {
    'x-ms-blob-type': 'BlockBlob', 'Content-Type': 'zip',
  }, zip);
  if (put.status < 200 || put.status >= 300) throw new Error(`blob upload: HTTP ${put.status}`);
  const hash = crypto.createHash('sha256').update(zip).digest('hex');
  const done = await twirp(env, 'FinalizeArtifact', {
    ...ids, name, size: String(zip.length), hash: `sha256:${hash}`,
  });
  if (!done.ok) throw new Error('FinalizeArtifact: not ok');
  return String(done.artifactId || done.artifact_id || '');
}

// A name unique in the run: the attempt, the job's id and this runner and start time.
function artifactName(env, startedAt) {
  const job = String(env.GITHUB_JOB || 'job').replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60);
  const salt = crypto.createHash('sha256')
    .update(`${env.RUNNER_NAME || ''}|${startedAt}|${process.pid}|${Math.random()}`)
    .digest('hex').slice(0, 8);
  return `${ARTIFACT_PREFIX}${env.GITHUB_RUN_ATTEMPT || '1'}-${job}-${salt}`;
}

function input(env, name, fallback) {
  const v = env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`];
  return v === undefined || v === '' ? fallback : v;
}

function stateDir(env) {
  return path.join(env.RUNNER_TEMP || os.tmpdir(), 'laser-ci-measure');
}

// [this process's cgroup folder, the cgroup root] (LASER_CI_MEASURE_CGROUP: tests).
function cgroupOf(env, root) {
  const fsRoot = env.LASER_CI_MEASURE_CGROUP || '/sys/fs/cgroup';
  const dir = cgroupDir(root, fsRoot);
  return dir ? [dir, fsRoot] : null;
}

function procRoot(env) {
  if (env.LASER_CI_MEASURE_PROC !== undefined) return env.LASER_CI_MEASURE_PROC;
  return process.platform === 'linux' ? '/proc' : '';
}

module.exports = {
  ARTIFACT_PREFIX, KIND, RECORD_FILE, artifactName, backendIds, cgroupDir, cgroupOf, crc32,
  input, percentile, readCgroupMemory,
  procRoot, readCpu, readDiskIo, readMemory, readNet, readSamples, stateDir, summarize,
  takeSample, uploadArtifact, zipStored,
};
