'use strict';
// The measure action's post step (runs also when the job failed or was cancelled): stops
// the sampler, summarizes the samples into the usage record and uploads it as an artifact.
const fs = require('fs');
const os = require('os');
const path = require('path');
const lib = require('./lib');

function gb(n) {
  return n === null || n === undefined ? '-' : `${(n / 1e9).toFixed(2)} GB`;
}

function stopSampler(state) {
  try {
    fs.writeFileSync(state.stop, '');
  } catch (e) {
    // the folder is gone
  }
  try {
    process.kill(state.pid, 'SIGTERM');
  } catch (e) {
    // already ended
  }
}

function record(env, state) {
  stopSampler(state);
  const samples = lib.readSamples(state.samples);
  const last = lib.takeSample(state.root, state.diskPath, state.cgroup);
  samples.push(last);
  const rec = lib.summarize(samples, state.interval, os.cpus().length || 1, process.platform);
  const own = samples.filter((s) => s.src === 'sampler');
  const elapsed = Math.max(last.t - state.t0, 1e-9);
  // the sampler's CPU time between its first and last samples over that time: what it
  // costs while the job runs (Node's start, about 0.05 s of CPU once, is left out)
  const span = own.length >= 2 ? own[own.length - 1].t - own[0].t : 0;
  rec.sampler_cpu_cores = span > 0
    ? Math.round(((own[own.length - 1].self_cpu_s - own[0].self_cpu_s) / span) * 1e5) / 1e5 : null;
  if (rec.sampler_cpu_cores === null) rec.missing = [...rec.missing, 'sampler_cpu_cores'].sort();
  rec.started_at = state.started_at;
  rec.ended_at = new Date(last.t * 1000).toISOString();
  rec.duration_s = Math.round(elapsed * 1000) / 1000;
  rec.job = env.GITHUB_JOB || null;
  rec.run_id = Number(env.GITHUB_RUN_ID) || null;
  rec.run_attempt = Number(env.GITHUB_RUN_ATTEMPT) || null;
  rec.runner_name = env.RUNNER_NAME || null;
  rec.runner_os = env.RUNNER_OS || null;
  if (!lib.procRoot(env)) {
    rec.missing = [...new Set([...rec.missing, 'disk_read_bytes', 'disk_write_bytes',
      'net_rx_bytes', 'net_tx_bytes'])].sort();
  }
  return rec;
}

async function post(env) {
  const dir = env.STATE_LASER_CI_MEASURE_DIR || lib.stateDir(env);
  const state = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8'));
  const rec = record(env, state);
  const file = path.join(dir, lib.RECORD_FILE);
  const text = `${JSON.stringify(rec, null, 2)}\n`;
  fs.writeFileSync(file, text);
  if (env.GITHUB_OUTPUT) fs.appendFileSync(env.GITHUB_OUTPUT, `record=${file}${os.EOL}`);
  const line = `laser-ci measure: CPU ${rec.cpu_cores_mean ?? '-'} cores mean, `
    + `${rec.cpu_cores_p95 ?? '-'} p95 of ${rec.cpu_count}; memory peak ${gb(rec.memory_peak_bytes)}`
    + ` of ${gb(rec.memory_total_bytes)}; disk used peak ${gb(rec.disk_used_peak_bytes)}, free min `
    + `${gb(rec.disk_free_min_bytes)}; sampler ${rec.sampler_cpu_cores === null ? '-' : (100 * rec.sampler_cpu_cores).toFixed(2)}% of a core`;
  console.log(line);
  if (env.GITHUB_STEP_SUMMARY) fs.appendFileSync(env.GITHUB_STEP_SUMMARY, `${line}\n`);
  if (String(lib.input(env, 'upload', 'true')).toLowerCase() === 'false') return { rec, file };
  const days = Math.min(90, Math.max(1, Number(lib.input(env, 'retention-days', '14')) || 14));
  const name = lib.artifactName(env, rec.started_at);
  const id = await lib.uploadArtifact(env, name, [[lib.RECORD_FILE, Buffer.from(text)]], days);
  console.log(`laser-ci measure: usage record uploaded as artifact ${name} (id ${id}, kept ${days} days)`);
  return { rec, file, name, id };
}

if (require.main === module) {
  post(process.env).catch((e) => {
    console.log(`::warning::laser-ci measure: no usage record kept: ${e.message}`);
  });
}

module.exports = { post, record };
