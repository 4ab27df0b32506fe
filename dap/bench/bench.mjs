// The DAP adapter's benchmark: times what an editor waits for, through Microsoft's DebugClient
// driving `jdb-rs dap`, and counts the JDWP round trips each costs (the adapter's `jdbg/stats`
// request reports the commands sent on its connection). Run from dap/tests-node after
// `npm ci` and `cargo build -p jdb-rs -p jdwp-agent` (a release build:
// JDB_RS_BIN=target/release/jdb-rs with libjdwp_agent.so beside it):
//   node ../bench/bench.mjs [ours|jdk]...
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { repo, startClient } from '../tests-node/helpers.mjs';

const dir = path.join(repo, 'target', 'dap-bench');
const src = path.join(dir, 'src', 'dapbench');
const classes = path.join(dir, 'classes');

function writeFixture() {
  fs.mkdirSync(src, { recursive: true });
  const fields = Array.from({ length: 500 }, (_, i) => `    int f${i} = ${i};`).join('\n');
  fs.writeFileSync(path.join(src, 'Wide.java'), `package dapbench;\n\npublic class Wide {\n${fields}\n}\n`);
  fs.writeFileSync(path.join(src, 'Bench.java'), `package dapbench;

import java.util.concurrent.CountDownLatch;

public class Bench {
    static int deep(int n, int[] big, Wide wide) {
        if (n == 0) {
            return big.length + wide.f499; // BP:deep
        }
        return deep(n - 1, big, wide) + 1;
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("noop")) { // BP:first
            return;
        }
        CountDownLatch done = new CountDownLatch(1);
        for (int i = 0; i < 999; i++) {
            Thread t = new Thread(() -> {
                try {
                    done.await();
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "parked-" + i);
            t.setDaemon(true);
            t.start();
        }
        int[] big = new int[1_000_000];
        for (int i = 0; i < big.length; i++) {
            big[i] = i;
        }
        Wide wide = new Wide();
        int r = deep(1998, big, wide);
        long sum = 0;
        for (int i = 0; i < 2000; i++) { // BP:loop
            sum += i;
            sum ^= r;
        }
        done.countDown();
        System.out.println("sum " + sum);
    }
}
`);
  fs.mkdirSync(classes, { recursive: true });
  execFileSync('javac', ['-g', '-d', classes, path.join(src, 'Bench.java'), path.join(src, 'Wide.java')]);
}

const lineOf = (marker) =>
  fs.readFileSync(path.join(src, 'Bench.java'), 'utf8').split('\n').findIndex((l) => l.includes(`// BP:${marker}`)) + 1;

async function trips(dc) {
  return (await dc.customRequest('jdbg/stats', {})).body.jdwpCommands;
}

/** Runs `op` and returns [milliseconds, JDWP round trips]. */
async function measure(dc, op) {
  const before = await trips(dc);
  const t0 = performance.now();
  await op();
  const ms = performance.now() - t0;
  return [ms, (await trips(dc)) - before];
}

function jvmStartup() {
  const runs = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    execFileSync('java', ['-cp', classes, 'dapbench.Bench', 'noop']);
    runs.push(performance.now() - t0);
  }
  return runs.sort((a, b) => a - b)[2];
}

async function run(agentName) {
  const dc = await startClient();
  const rows = [];
  try {
    await dc.initializeRequest({ adapterID: 'jdbg' });
    const file = path.join(src, 'Bench.java');
    const configured = dc.waitForEvent('initialized').then(async () => {
      await dc.setBreakpointsRequest({ source: { path: file }, breakpoints: [{ line: lineOf('first') }] });
      return dc.configurationDoneRequest();
    });
    const t0 = performance.now();
    const stopped = dc.waitForEvent('stopped', 120000);
    await Promise.all([
      dc.launch({ mainClass: 'dapbench.Bench', classPaths: [classes], sourcePaths: [path.join(dir, 'src')], jdkAgent: agentName === 'jdk' }),
      configured,
    ]);
    let ev = await stopped;
    const launchMs = performance.now() - t0;
    rows.push(['launch to the first stop at a breakpoint (first line of main)', launchMs, await trips(dc)]);
    const threadId = ev.body.threadId;
    await dc.setBreakpointsRequest({ source: { path: file }, breakpoints: [{ line: lineOf('deep') }] });
    [ev] = await Promise.all([dc.waitForEvent('stopped', 120000), dc.continueRequest({ threadId })]);

    let frames;
    let [ms, n] = await measure(dc, async () => {
      frames = (await dc.stackTraceRequest({ threadId, startFrame: 0, levels: 20 })).body;
    });
    if (frames.totalFrames !== 2000 || frames.stackFrames.length !== 20) throw new Error(`stack: ${frames.totalFrames}`);
    rows.push(['stackTrace, 20 frames at depth 2000', ms, n]);

    const frameId = frames.stackFrames[0].id;
    const scopes = (await dc.scopesRequest({ frameId })).body.scopes;
    const locals = (await dc.variablesRequest({ variablesReference: scopes[0].variablesReference })).body.variables;
    const big = locals.find((v) => v.name === 'big');
    const wide = locals.find((v) => v.name === 'wide');
    let got;
    [ms, n] = await measure(dc, async () => {
      got = (await dc.variablesRequest({ variablesReference: big.variablesReference, filter: 'indexed', start: 0, count: 100 })).body.variables;
    });
    if (got.length !== 100 || got[99].value !== '99') throw new Error('array page');
    rows.push(['variables, first 100 of int[1_000_000]', ms, n]);
    [ms, n] = await measure(dc, async () => {
      got = (await dc.variablesRequest({ variablesReference: wide.variablesReference })).body.variables;
    });
    if (got.length !== 500 || got[499].value !== '499') throw new Error(`object: ${got.length}`);
    rows.push(['variables, object with 500 fields', ms, n]);
    [ms, n] = await measure(dc, async () => {
      got = (await dc.threadsRequest()).body.threads;
    });
    if (got.length < 1000) throw new Error(`threads: ${got.length}`);
    rows.push([`threads, ${got.length} threads`, ms, n]);

    // 1,000 steps over in a row, from the loop.
    await dc.setBreakpointsRequest({ source: { path: file }, breakpoints: [{ line: lineOf('loop') }] });
    await Promise.all([dc.waitForEvent('stopped'), dc.continueRequest({ threadId })]);
    await dc.setBreakpointsRequest({ source: { path: file }, breakpoints: [] });
    [ms, n] = await measure(dc, async () => {
      for (let i = 0; i < 1000; i++) {
        await Promise.all([dc.waitForEvent('stopped'), dc.nextRequest({ threadId })]);
      }
    });
    rows.push(['next, 1,000 in a row (per step)', ms / 1000, n / 1000]);
    await dc.disconnectRequest({ terminateDebuggee: true });
  } finally {
    dc.stopAdapter();
  }
  return rows;
}

writeFixture();
const startup = jvmStartup();
console.log(`JVM start-up to the end of main's first line (java -cp ... Bench noop, no agent, median of 5): ${startup.toFixed(0)} ms`);
for (const agent of process.argv.slice(2).length ? process.argv.slice(2) : ['ours', 'jdk']) {
  const rows = await run(agent);
  console.log(`\n${agent === 'jdk' ? "JDK's agent" : 'our agent'}:`);
  console.log('| operation | time (ms) | JDWP round trips |');
  console.log('|---|---:|---:|');
  for (const [what, ms, n] of rows) console.log(`| ${what} | ${ms.toFixed(1)} | ${Number.isInteger(n) ? n : n.toFixed(1)} |`);
}
