'use strict';
// A fake /proc for the tests (this folder's files all run under node --test: no tests here).
const fs = require('fs');
const path = require('path');

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
