'use strict';
// The measure action's main step: a baseline sample, then a detached sampler process.
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const lib = require('./lib');

// The sampler needs no token: it gets the few variables a process needs, nothing else.
function minimalEnv(env) {
  const out = {};
  for (const k of ['PATH', 'Path', 'SystemRoot', 'SYSTEMROOT', 'TEMP', 'TMP', 'TMPDIR', 'HOME']) {
    if (env[k] !== undefined) out[k] = env[k];
  }
  return out;
}

function main(env) {
  const interval = Math.min(60, Math.max(0.2, Number(lib.input(env, 'interval', '1')) || 1));
  const diskPath = lib.input(env, 'disk-path', env.GITHUB_WORKSPACE || process.cwd());
  const dir = lib.stateDir(env);
  fs.mkdirSync(dir, { recursive: true });
  const samples = path.join(dir, 'samples.jsonl');
  const stop = path.join(dir, 'stop');
  fs.rmSync(stop, { force: true });
  const root = lib.procRoot(env);
  const cgroup = lib.cgroupOf(env, root);
  const base = lib.takeSample(root, diskPath, cgroup);
  base.src = 'main';
  fs.writeFileSync(samples, `${JSON.stringify(base)}\n`);
  const child = spawn(process.execPath, [path.join(__dirname, 'sampler.js'), samples,
    String(interval), root, diskPath, stop, cgroup ? cgroup[1] : ''], { detached: true, stdio: 'ignore', env: minimalEnv(env) });
  child.unref();
  const state = { pid: child.pid, samples, stop, interval, root, diskPath, cgroup,
    started_at: new Date(base.t * 1000).toISOString(), t0: base.t };
  fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify(state));
  if (env.GITHUB_STATE) fs.appendFileSync(env.GITHUB_STATE, `LASER_CI_MEASURE_DIR=${dir}${os.EOL}`);
  console.log(`laser-ci measure: sampling this machine every ${interval} s (pid ${child.pid})`);
  return state;
}

if (require.main === module) {
  try {
    main(process.env);
  } catch (e) {
    // measuring is never worth failing a job for
    console.log(`::warning::laser-ci measure did not start: ${e.message}`);
  }
}

module.exports = { main };
