// Requests at scale and the rest of the surface, against both agents: pause of a busy thread,
// exception breakpoints narrowed to named classes (one not loaded yet), 200 threads, a
// 2,000-frame stack paged, an int[1_000_000] paged; and the adapter served over TCP
// (`jdb-rs dap --listen 127.0.0.1:0`), one session per connection.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  AGENTS, classes, compileFixtures, fixtures, jdbRs, lineOf, mainJava, stressJava, startClient, assertAllValid,
  waitForOutput, endClient,
} from './helpers.mjs';

before(() => compileFixtures());

function stressArgs(agent, scenario) {
  return {
    type: 'jdbg',
    request: 'launch',
    mainClass: 'dapfix.Stress',
    args: [scenario],
    classPaths: [classes],
    sourcePaths: [fixtures],
    jdkAgent: agent.jdkAgent,
  };
}

/** Launches a Stress scenario; `configure` runs between `initialized` and `configurationDone`. */
async function launch(dc, agent, scenario, configure = async () => {}) {
  await dc.initializeRequest({ adapterID: 'jdbg', linesStartAt1: true, columnsStartAt1: true });
  const configured = dc.waitForEvent('initialized').then(async () => {
    await configure();
    return dc.configurationDoneRequest();
  });
  await Promise.all([dc.launch(stressArgs(agent, scenario)), configured]);
}

async function bpsAt(dc, ...markers) {
  return dc.setBreakpointsRequest({ source: { path: stressJava }, breakpoints: markers.map((m) => ({ line: lineOf(m, stressJava) })) });
}

async function localsOf(dc, frameId) {
  const scopes = (await dc.scopesRequest({ frameId })).body.scopes;
  const vars = await dc.variablesRequest({ variablesReference: scopes.find((s) => s.name === 'Locals').variablesReference });
  return Object.fromEntries(vars.body.variables.map((v) => [v.name, v]));
}

/** Continues and waits for the program's last line, `exited` with code 0 and `terminated`. */
async function runToEnd(dc, threadId, scenario) {
  const exited = dc.waitForEvent('exited');
  const terminated = dc.waitForEvent('terminated');
  await dc.continueRequest({ threadId });
  await waitForOutput(dc, `stress done ${scenario}`);
  assert.equal((await exited).body.exitCode, 0);
  await terminated;
}

for (const agent of AGENTS) {
  const who = agent.name === 'jdk' ? "the JDK's agent" : 'our agent';

  test(`pause stops a busy thread, stackTrace shows it, continue resumes it (${who})`, async () => {
    const dc = await startClient();
    try {
      await launch(dc, agent, 'pause');
      await waitForOutput(dc, 'spinning');
      const spinner = (await dc.threadsRequest()).body.threads.find((t) => t.name === 'spinner');
      assert.ok(spinner, 'the spinner thread is listed');
      const stopped = dc.waitForEvent('stopped');
      await dc.pauseRequest({ threadId: spinner.id });
      const ev = await stopped;
      assert.equal(ev.body.reason, 'pause');
      assert.equal(ev.body.threadId, spinner.id);
      const st = (await dc.stackTraceRequest({ threadId: spinner.id, levels: 5 })).body;
      assert.equal(st.stackFrames[0].name, 'Stress.spin');
      assert.equal(st.stackFrames[0].source.path, stressJava);
      const loop = lineOf('spinLoop', stressJava);
      assert.ok([loop - 1, loop].includes(st.stackFrames[0].line), `paused in the loop (line ${st.stackFrames[0].line})`);
      // A pause while paused is no second suspension: one continue still resumes the program.
      await dc.pauseRequest({ threadId: spinner.id });

      // Let the loop end (stop = true) and stop after it: continue really resumed the thread.
      const scopes = (await dc.scopesRequest({ frameId: st.stackFrames[0].id })).body.scopes;
      const statics = scopes.find((s) => s.name === 'Static');
      await dc.setVariableRequest({ variablesReference: statics.variablesReference, name: 'stop', value: 'true' });
      await bpsAt(dc, 'spun');
      const next = dc.waitForEvent('stopped');
      await dc.continueRequest({ threadId: spinner.id });
      const bp = await next;
      assert.equal(bp.body.reason, 'breakpoint');
      assert.equal(bp.body.threadId, spinner.id);
      assert.equal((await dc.stackTraceRequest({ threadId: spinner.id, levels: 1 })).body.stackFrames[0].line, lineOf('spun', stressJava));
      await runToEnd(dc, spinner.id, 'pause');
      assertAllValid(dc);
    } finally {
      await endClient(dc);
    }
  });

  test(`exception breakpoints narrowed to named classes, one not loaded yet (${who})`, async () => {
    const dc = await startClient();
    try {
      let answer;
      const stopped = dc.waitForEvent('stopped');
      await launch(dc, agent, 'exceptions', async () => {
        answer = await dc.setExceptionBreakpointsRequest({
          filters: [],
          filterOptions: [{ filterId: 'caught', condition: 'dapfix.Stress$Custom, java.lang.IllegalStateException' }],
        });
      });
      assert.equal(answer.body.breakpoints.length, 1);
      assert.equal(answer.body.breakpoints[0].verified, true);
      // Stops on Custom (loaded after the request), IllegalStateException and SubCustom (a
      // subclass of a named class); not on IllegalArgumentException nor UnsupportedOperationException.
      const seen = [];
      let ev = await stopped;
      for (;;) {
        assert.equal(ev.body.reason, 'exception');
        const info = (await dc.customRequest('exceptionInfo', { threadId: ev.body.threadId })).body;
        seen.push([info.exceptionId, info.description]);
        if (seen.length === 3) break;
        const next = dc.waitForEvent('stopped');
        await dc.continueRequest({ threadId: ev.body.threadId });
        ev = await next;
      }
      assert.deepEqual(seen, [
        ['dapfix.Stress$Custom', 'b'],
        ['java.lang.IllegalStateException', 'c'],
        ['dapfix.Stress$SubCustom', 'd'],
      ]);
      await runToEnd(dc, ev.body.threadId, 'exceptions');
      assert.match(dc.received.filter((m) => m.event === 'output').map((m) => m.body.output).join(''), /caught a[\s\S]*caught e/);
      assertAllValid(dc);
    } finally {
      await endClient(dc);
    }
  });

  test(`200 threads are all listed (${who})`, async () => {
    const dc = await startClient();
    try {
      const stopped = dc.waitForEvent('stopped');
      await launch(dc, agent, 'threads', () => bpsAt(dc, 'threads'));
      const ev = await stopped;
      const threads = (await dc.threadsRequest()).body.threads;
      const workers = threads.filter((t) => /^worker-\d+$/.test(t.name)).map((t) => t.name).sort();
      assert.deepEqual(workers, Array.from({ length: 200 }, (_, i) => `worker-${i}`).sort());
      assert.equal(new Set(threads.map((t) => t.id)).size, threads.length, 'thread ids are distinct');
      assert.ok(threads.some((t) => t.name === 'main' && t.id === ev.body.threadId));
      // A worker's stack is readable by its id: parked in the latch, called from the lambda.
      const w = threads.find((t) => t.name === 'worker-199');
      const st = (await dc.stackTraceRequest({ threadId: w.id })).body;
      assert.ok(st.stackFrames.some((f) => /lambda\$main\$\d+$/.test(f.name)), st.stackFrames.map((f) => f.name).join(', '));
      await runToEnd(dc, ev.body.threadId, 'threads');
      assertAllValid(dc);
    } finally {
      await endClient(dc);
    }
  });

  test(`a 2,000-frame stack paged with startFrame/levels (${who})`, async () => {
    const dc = await startClient();
    try {
      const stopped = dc.waitForEvent('stopped');
      await launch(dc, agent, 'deep', () => bpsAt(dc, 'stressBottom'));
      const threadId = (await stopped).body.threadId;
      // deep(2000) .. deep(0) and main.
      const first = (await dc.stackTraceRequest({ threadId, startFrame: 0, levels: 20 })).body;
      assert.equal(first.totalFrames, 2002);
      assert.equal(first.stackFrames.length, 20);
      assert.equal(first.stackFrames[0].line, lineOf('stressBottom', stressJava));
      const all = [];
      for (let start = 0; start < 2002; start += 300) {
        const page = (await dc.stackTraceRequest({ threadId, startFrame: start, levels: 300 })).body;
        assert.equal(page.totalFrames, 2002);
        assert.equal(page.stackFrames.length, Math.min(300, 2002 - start));
        all.push(...page.stackFrames);
      }
      assert.equal(all.length, 2002);
      assert.ok(all.slice(0, 2001).every((f) => f.name === 'Stress.deep'));
      assert.equal(all[2001].name, 'Stress.main');
      assert.ok(all.slice(1, 2001).every((f) => f.line === lineOf('stressBottom', stressJava) + 2), 'callers are on the recursive call');
      assert.equal(new Set(all.map((f) => f.id)).size, 2002, 'frame ids are distinct');
      const past = (await dc.stackTraceRequest({ threadId, startFrame: 2002, levels: 10 })).body;
      assert.deepEqual([past.stackFrames.length, past.totalFrames], [0, 2002]);
      // A frame from deep in the stack has its own locals.
      const vars = await localsOf(dc, all[1500].id);
      assert.equal(vars.n.value, '1500');
      await runToEnd(dc, threadId, 'deep');
      assertAllValid(dc);
    } finally {
      await endClient(dc);
    }
  });

  test(`an int[1_000_000] paged with start/count (${who})`, async () => {
    const dc = await startClient();
    try {
      const stopped = dc.waitForEvent('stopped');
      await launch(dc, agent, 'array', () => bpsAt(dc, 'array'));
      const threadId = (await stopped).body.threadId;
      const frame = (await dc.stackTraceRequest({ threadId, levels: 1 })).body.stackFrames[0];
      const big = (await localsOf(dc, frame.id)).big;
      assert.equal(big.value, 'int[1000000]');
      assert.equal(big.indexedVariables, 1000000);
      const ref = big.variablesReference;
      const get = async (start, count) => (await dc.variablesRequest({ variablesReference: ref, filter: 'indexed', start, count })).body.variables;
      const expect = (start, n) => Array.from({ length: n }, (_, i) => [`[${start + i}]`, String((start + i) * 3)]);
      assert.deepEqual((await get(0, 5)).map((v) => [v.name, v.value]), expect(0, 5));
      assert.deepEqual((await get(500000, 100)).map((v) => [v.name, v.value]), expect(500000, 100));
      assert.deepEqual((await get(999990, 100)).map((v) => [v.name, v.value]), expect(999990, 10));
      assert.deepEqual(await get(1000000, 10), []);
      // An array has no named children: a client asking for them gets none (not a million).
      const named = await dc.variablesRequest({ variablesReference: ref, filter: 'named' });
      assert.deepEqual(named.body.variables, []);
      await runToEnd(dc, threadId, 'array');
      assertAllValid(dc);
    } finally {
      await endClient(dc);
    }
  });
}

test('TCP: `jdb-rs dap --listen 127.0.0.1:0` prints its port and serves one session per connection, both agents', async () => {
  const adapter = spawn(jdbRs, ['dap', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  adapter.stderr.on('data', (d) => { err += d; });
  try {
    const port = await new Promise((resolve, reject) => {
      adapter.stderr.on('data', () => {
        const m = err.match(/listening on 127\.0\.0\.1:(\d+)/);
        if (m) resolve(Number(m[1]));
      });
      adapter.on('exit', (code) => reject(new Error(`the adapter exited (${code}): ${err}`)));
    });
    assert.ok(port > 0);
    for (const agent of AGENTS) {
      const dc = await startClient(port);
      try {
        await dc.initializeRequest({ adapterID: 'jdbg' });
        const configured = dc.waitForEvent('initialized').then(async () => {
          await dc.setBreakpointsRequest({ source: { path: mainJava }, breakpoints: [{ line: lineOf('end') }] });
          return dc.configurationDoneRequest();
        });
        const stopped = dc.waitForEvent('stopped');
        await Promise.all([dc.launch({ type: 'jdbg', request: 'launch', mainClass: 'dapfix.Main', classPaths: [classes], sourcePaths: [fixtures], jdkAgent: agent.jdkAgent }), configured]);
        const ev = await stopped;
        assert.equal(ev.body.reason, 'breakpoint');
        const top = (await dc.stackTraceRequest({ threadId: ev.body.threadId, levels: 1 })).body.stackFrames[0];
        assert.equal(top.line, lineOf('end'));
        const exited = dc.waitForEvent('exited');
        const terminated = dc.waitForEvent('terminated');
        await dc.continueRequest({ threadId: ev.body.threadId });
        await waitForOutput(dc, 'done 43 285');
        assert.equal((await exited).body.exitCode, 0);
        await terminated;
        await dc.disconnectRequest({});
        assertAllValid(dc);
      } finally {
        await endClient(dc);
      }
    }
    assert.equal(adapter.exitCode, null, 'the listening adapter outlives its sessions');
  } finally {
    adapter.kill();
  }
});
