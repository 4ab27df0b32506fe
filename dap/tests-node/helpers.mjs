// Shared setup of the DAP tests: paths, fixture compilation, a DebugClient on `jdb-rs dap`
// that records (and later checks) every message the adapter sends.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import { validator } from './schema.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '..', '..');
export const fixtures = path.join(repo, 'dap', 'fixtures');
export const mainJava = path.join(fixtures, 'dapfix', 'Main.java');
export const stressJava = path.join(fixtures, 'dapfix', 'Stress.java');
export const jdbRs = process.env.JDB_RS_BIN || path.join(repo, 'target', 'debug', 'jdb-rs');
export const classes = path.join(repo, 'target', 'dap-fixtures');

/** The agents each scenario runs against: ours (the default) and the JDK's. */
export const AGENTS = [
  { name: 'ours', jdkAgent: false },
  { name: 'jdk', jdkAgent: true },
];

let compiled = false;
/** Compiles the fixtures with `javac -g` once per test process. */
export function compileFixtures() {
  if (compiled) return;
  fs.mkdirSync(classes, { recursive: true });
  const sources = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.java')) sources.push(p);
    }
  };
  walk(fixtures);
  execFileSync('javac', ['-g', '-d', classes, ...sources], { stdio: 'inherit' });
  compiled = true;
}

/** The line of the marker comment `// BP:name` in a fixture. */
export function lineOf(marker, file = mainJava) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(`// BP:${marker}`));
  if (i < 0) throw new Error(`no marker BP:${marker} in ${file}`);
  return i + 1;
}

/**
 * A started DebugClient whose received messages are all kept in `dc.received`: on a new
 * `jdb-rs dap` over stdin/stdout, or connected to an adapter listening at `port` on 127.0.0.1.
 */
export async function startClient(port) {
  const dc = new DebugClient(jdbRs, 'dap', 'jdbg', { env: { ...process.env, RUST_BACKTRACE: '1' } }, true);
  dc.received = [];
  const dispatch = dc.dispatch.bind(dc);
  dc.dispatch = (body) => {
    dc.received.push(typeof body === 'string' ? JSON.parse(body) : structuredClone(body));
    dispatch(body);
  };
  dc.defaultTimeout = 60000;
  await dc.start(port);
  return dc;
}

/** Checks every message the adapter sent against the DAP JSON schema; throws listing failures. */
export function assertAllValid(dc) {
  const validate = validator();
  const bad = [];
  for (const m of dc.received) {
    const errors = validate(m);
    if (errors) bad.push(`${JSON.stringify(m).slice(0, 300)}\n  -> ${errors}`);
  }
  if (bad.length) throw new Error(`${bad.length} message(s) break the DAP schema:\n${bad.join('\n')}`);
  if (dc.received.length === 0) throw new Error('no message was received');
}

export function launchArgs(agent, extra = {}) {
  return {
    type: 'jdbg',
    request: 'launch',
    mainClass: 'dapfix.Main',
    classPaths: [classes],
    sourcePaths: [fixtures],
    jdkAgent: agent.jdkAgent,
    ...extra,
  };
}

/** Waits for an `output` event whose text includes `text` (output seen earlier counts). */
export async function waitForOutput(dc, text, timeout = 60000) {
  const seen = () => dc.received.some((m) => m.type === 'event' && m.event === 'output' && m.body.output.includes(text));
  const deadline = Date.now() + timeout;
  while (!seen()) {
    if (Date.now() > deadline) throw new Error(`no output containing ${JSON.stringify(text)}; output so far:\n${outputText(dc)}`);
    await dc.waitForEvent('output', Math.max(1, deadline - Date.now())).catch(() => {});
  }
}

export function outputText(dc) {
  return dc.received.filter((m) => m.type === 'event' && m.event === 'output').map((m) => m.body.output).join('');
}

/** Ends the client: a disconnect unless the test sent one (the adapter exits after it). */
export async function endClient(dc) {
  const disconnected = dc.received.some((m) => m.type === 'response' && m.command === 'disconnect');
  if (disconnected) dc.stopAdapter();
  else await dc.stop();
}
