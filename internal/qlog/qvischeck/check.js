// check.js loads qlog files with qvis's own loading code (vendored in
// qvis/src, unchanged, from github.com/quiclog/qvis at the commit named in
// README.md), transpiled from TypeScript with the typescript package, the
// way qvis loads a file given by URL: FileLoader.Load, then
// QlogLoader.fromJSON (ConnectionStore). It exits non-zero if qvis refuses
// a file, logs an error about it, raises an alert (qvis's non-compliance
// warnings), or loses events.
//
// Usage: node check.js FILE.sqlog...   (TS_PATH: the typescript package)
'use strict';
const fs = require('fs');
const path = require('path');
const Module = require('module');
const ts = require(process.env.TS_PATH || 'typescript');

const src = path.join(__dirname, 'qvis', 'src');
// Modules qvis's loaders import that the .sqlog path does not use: the
// pcap, netlog and NDJSON converters, Vue, and the old schema package
// (types and enums of qlog draft-01 and earlier).
const stubs = new Set(['vue', '@quictools/qlog-schema/draft-01/QLog', '@quictools/qlog-schema/draft-16/QLog',
  '../utils/StreamingJSONParser', '../pcapconverter/tcptoqlog', '../netlogconverter/netlogtoqlog',
  '../newlineconverter/newlinejsontoqlog']);
const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (stubs.has(request)) {
    return { __esModule: true, default: class Unused {} };
  }
  return load.call(this, request, parent, isMain);
};
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  let p;
  if (request.startsWith('@/')) {
    p = path.join(src, request.slice(2));
  } else if (request.startsWith('.') && parent && parent.filename && parent.filename.startsWith(src)) {
    p = path.resolve(path.dirname(parent.filename), request);
  }
  if (p !== undefined && fs.existsSync(p + '.ts')) {
    return p + '.ts';
  }
  return resolve.call(this, request, parent, ...rest);
};
require.extensions['.ts'] = function (module, filename) {
  const out = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2019, esModuleInterop: true, experimentalDecorators: true },
  });
  module._compile(out.outputText, filename);
};

const problems = [];
let current = '';
console.log = () => {};
console.warn = () => {};
console.error = (...args) => problems.push(current + ': qvis logged an error: ' + args.map(a => typeof a === 'string' ? a : '').join(' '));
globalThis.alert = (msg) => problems.push(current + ': qvis alert: ' + msg);

const FileLoader = require(path.join(src, 'components/filemanager/data/FileLoader.ts')).default;
const { QlogLoader } = require(path.join(src, 'data/QlogLoader.ts'));

async function check(file, name) {
  current = name;
  const text = fs.readFileSync(file, 'utf8');
  const records = text.split('\x1e').filter(r => r.trim() !== '');
  let res;
  try {
    res = await FileLoader.Load(text, name);
  } catch (e) {
    problems.push(name + ': FileLoader.Load refused it: ' + e.message);
    return;
  }
  const group = QlogLoader.fromJSON(res.qlogJSON);
  if (group === undefined) {
    problems.push(name + ': QlogLoader.fromJSON refused it');
    return;
  }
  const conns = group.getConnections();
  if (conns.length !== 1) {
    problems.push(name + ': ' + conns.length + ' connections, want 1');
    return;
  }
  const conn = conns[0];
  const events = conn.getEvents();
  if (events.length !== records.length - 1) {
    problems.push(name + ': ' + events.length + ' events loaded of ' + (records.length - 1));
  }
  const role = name.includes('_client') ? 'client' : 'server';
  if (conn.getVantagePointPerspective() !== role) {
    problems.push(name + ': vantage point ' + conn.getVantagePointPerspective() + ', want ' + role);
  }
  conn.setupLookupTable();
  const sent = conn.lookup('quic', 'packet_sent');
  if (sent.length === 0) {
    problems.push(name + ': qvis finds no quic:packet_sent events');
  }
  let last = -Infinity;
  for (const e of events) {
    const t = conn.parseEvent(e).relativeTime;
    if (!(t >= last)) {
      problems.push(name + ': event times out of order or not numbers at ' + JSON.stringify(e).slice(0, 80));
      break;
    }
    last = t;
  }
  return { events: events.length, sent: sent.length, version: group.version, format: group.format };
}

(async () => {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.info('usage: node check.js FILE.sqlog...');
    process.exit(2);
  }
  for (const f of files) {
    // As a .sqlog (by extension) and as a .qlog (sniffed from its header).
    for (const name of [path.basename(f), path.basename(f).replace(/\.sqlog$/, '.qlog')]) {
      const r = await check(f, name);
      if (r) {
        console.info(`${name}: qvis loaded ${r.events} events (${r.sent} packet_sent), qlog_version ${r.version}, format ${r.format}`);
      }
    }
  }
  for (const p of problems) {
    console.info('FAIL ' + p);
  }
  process.exit(problems.length === 0 ? 0 : 1);
})();
