'use strict';
// The detached sampler the main step starts: one JSON sample a line, every interval, until
// the post step stops it (SIGTERM), its stop file appears, or 7 hours (a job's limit is 6).
const fs = require('fs');
const lib = require('./lib');

const [file, intervalS, root, diskPath, stopFile, cgroupRoot] = process.argv.slice(2);
const cgroup = lib.cgroupOf({ LASER_CI_MEASURE_CGROUP: cgroupRoot }, root);
const started = Date.now();
const MAX_MS = 7 * 3600e3;

function tick() {
  if (fs.existsSync(stopFile) || Date.now() - started > MAX_MS) process.exit(0);
  const s = lib.takeSample(root, diskPath, cgroup);
  s.src = 'sampler';
  try {
    fs.appendFileSync(file, `${JSON.stringify(s)}\n`);
  } catch (e) {
    process.exit(0); // the folder is gone: the job is over
  }
}

process.on('SIGTERM', () => process.exit(0));
setInterval(tick, Math.max(200, Number(intervalS) * 1000));
