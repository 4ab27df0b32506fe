// Each request beyond the main session, against both agents: stop on entry, threads, function
// breakpoints, deep stacks paged, variables of arrays (paged), collections, boxes and statics,
// setVariable, stepIn/stepOut, restartFrame, breakpointLocations, loadedSources, attach and
// disconnect without terminating, and errors for bad requests.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  AGENTS, classes, compileFixtures, lineOf, mainJava, startClient, assertAllValid, launchArgs, waitForOutput, endClient,
} from './helpers.mjs';

before(() => compileFixtures());

async function launchTo(dc, agent, breakpoints, extra = {}) {
  await dc.initializeRequest({ adapterID: 'jdbg', linesStartAt1: true, columnsStartAt1: true });
  const configured = dc.waitForEvent('initialized').then(async () => {
    if (breakpoints) await dc.setBreakpointsRequest({ source: { path: mainJava }, breakpoints });
    return dc.configurationDoneRequest();
  });
  const stopped = dc.waitForEvent('stopped');
  await Promise.all([dc.launch(launchArgs(agent, extra)), configured]);
  return stopped;
}

async function frames(dc, threadId, startFrame = 0, levels = 20) {
  return (await dc.stackTraceRequest({ threadId, startFrame, levels })).body;
}

async function scopeVars(dc, frameId, scope = 'Locals') {
  const scopes = await dc.scopesRequest({ frameId });
  const s = scopes.body.scopes.find((x) => x.name === scope);
  assert.ok(s, `a ${scope} scope`);
  const vars = await dc.variablesRequest({ variablesReference: s.variablesReference });
  return Object.fromEntries(vars.body.variables.map((v) => [v.name, v]));
}

async function stopAfter(dc, action) {
  const stopped = dc.waitForEvent('stopped');
  await action();
  return stopped;
}

for (const agent of AGENTS) {
  const who = agent.name === 'jdk' ? "the JDK's agent" : 'our agent';

  test(`stop on entry, threads, function breakpoints, stepping and restartFrame (${who})`, async () => {
    const dc = await startClient();
    try {
      let ev = await launchTo(dc, agent, null, { stopOnEntry: true });
      assert.equal(ev.body.reason, 'entry');
      const threads = (await dc.threadsRequest()).body.threads;
      assert.ok(threads.some((t) => t.name === 'main'), 'the main thread is listed');

      const fb = await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'dapfix.Main$Inner.twice' }, { name: 'nodot' }] });
      assert.equal(fb.body.breakpoints[1].verified, false);
      await dc.setBreakpointsRequest({ source: { path: mainJava }, breakpoints: [{ line: lineOf('call') }] });
      ev = await stopAfter(dc, () => dc.continueRequest({ threadId: ev.body.threadId }));
      const threadId = ev.body.threadId;
      assert.equal(ev.body.reason, 'breakpoint');
      assert.equal((await frames(dc, threadId)).stackFrames[0].line, lineOf('call'));

      // stepIn lands in the call (the function breakpoint is there too).
      ev = await stopAfter(dc, () => dc.stepInRequest({ threadId }));
      let top = (await frames(dc, threadId)).stackFrames[0];
      assert.match(top.name, /Inner\.twice$/);
      assert.equal(top.line, lineOf('nested'));

      // restartFrame pops twice() and enters it again.
      ev = await stopAfter(dc, () => dc.customRequest('restartFrame', { frameId: top.id }));
      top = (await frames(dc, threadId)).stackFrames[0];
      assert.match(top.name, /Inner\.twice$/);
      assert.equal(top.line, lineOf('nested'));

      // stepOut returns to main, on the calling line.
      ev = await stopAfter(dc, () => dc.stepOutRequest({ threadId }));
      assert.equal(ev.body.reason, 'step');
      top = (await frames(dc, threadId)).stackFrames[0];
      assert.match(top.name, /Main\.main$/);
      assert.equal(top.line, lineOf('call'));

      const locs = await dc.customRequest('breakpointLocations', { source: { path: mainJava }, line: lineOf('nested') - 1, endLine: lineOf('nested') + 2 });
      assert.deepEqual(locs.body.breakpoints.map((b) => b.line), [lineOf('nested'), lineOf('nested') + 1]);
      const sources = await dc.customRequest('loadedSources', {});
      assert.ok(sources.body.sources.some((s) => s.path === mainJava), 'Main.java is a loaded source');
      assertAllValid(dc);
    } finally {
      await endClient(dc);
    }
  });

  test(`deep stacks, variables, setVariable and statics (${who})`, async () => {
    const dc = await startClient();
    try {
      let ev = await launchTo(dc, agent, [{ line: lineOf('bottom') }, { line: lineOf('end') }]);
      const threadId = ev.body.threadId;
      // depth(50) recursion: 51 frames of depth() and main.
      const first = await frames(dc, threadId, 0, 5);
      assert.equal(first.totalFrames, 52);
      assert.equal(first.stackFrames.length, 5);
      const page = await frames(dc, threadId, 48, 10);
      assert.deepEqual(page.stackFrames.map((f) => f.name), ['Main.depth', 'Main.depth', 'Main.depth', 'Main.main']);
      assert.equal(page.stackFrames[3].line, lineOf('deep'));
      assert.equal(first.stackFrames[0].line, lineOf('bottom'));

      ev = await stopAfter(dc, () => dc.continueRequest({ threadId }));
      const frame = (await frames(dc, threadId)).stackFrames[0];
      assert.equal(frame.line, lineOf('end'));
      const vars = await scopeVars(dc, frame.id);
      assert.equal(vars.names.value, 'ArrayList (size=3)');
      assert.equal(vars.ages.value, 'HashMap (size=1)');
      assert.equal(vars.boxed.value, '42');
      assert.equal(vars.big.indexedVariables, 1000);
      assert.equal(vars.big.value, 'int[1000]');
      const tail = await dc.variablesRequest({ variablesReference: vars.big.variablesReference, filter: 'indexed', start: 990, count: 10 });
      assert.deepEqual(tail.body.variables.map((v) => [v.name, v.value]), Array.from({ length: 10 }, (_, i) => [`[${990 + i}]`, String(990 + i)]));
      const list = await dc.variablesRequest({ variablesReference: vars.names.variablesReference });
      assert.ok(list.body.variables.some((v) => v.name === 'size' && v.value === '3'));

      const statics = await scopeVars(dc, frame.id, 'Static');
      assert.equal(statics.counter.value, '10');
      assert.equal(statics.greeting.value, '"hello"');

      // setVariable on a local and an array element; the program prints them.
      const localsRef = (await dc.scopesRequest({ frameId: frame.id })).body.scopes[0].variablesReference;
      const set = await dc.setVariableRequest({ variablesReference: localsRef, name: 'lam', value: '7 * 6' });
      assert.equal(set.body.value, '42');
      await dc.setVariableRequest({ variablesReference: vars.big.variablesReference, name: '[999]', value: '-1' });
      // Errors are responses, not crashes.
      await assert.rejects(dc.evaluateRequest({ expression: 'nosuch + 1', frameId: frame.id, context: 'repl' }));
      await assert.rejects(dc.customRequest('noSuchRequest', {}), /unknown request/);
      await assert.rejects(dc.customRequest('stackTrace', {}), /stackTrace: bad arguments/);
      await assert.rejects(dc.variablesRequest({ variablesReference: 999999 }), /unknown or stale/);

      const exited = dc.waitForEvent('exited');
      await dc.continueRequest({ threadId });
      await waitForOutput(dc, 'done 42 285 3 -1 42 50 1');
      assert.equal((await exited).body.exitCode, 0);
      assertAllValid(dc);
    } finally {
      await endClient(dc);
    }
  });

  test(`attach, then disconnect leaving the program running (${who})`, async () => {
    const agentOpt = agent.jdkAgent
      ? '-agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0'
      : `-agentpath:${classes}/../debug/libjdwp_agent.so=transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0`;
    const java = spawn('java', [agentOpt, '-cp', classes, 'dapfix.Main'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    java.stdout.on('data', (d) => { out += d; });
    const exit = new Promise((resolve) => java.on('exit', (code) => resolve(code)));
    const port = await new Promise((resolve, reject) => {
      const check = () => {
        const m = out.match(/address: (?:[\d.]+:)?(\d+)/);
        if (m) resolve(Number(m[1]));
      };
      java.stdout.on('data', check);
      java.on('exit', () => reject(new Error(`the JVM exited: ${out}`)));
    });
    const dc = await startClient();
    try {
      await dc.initializeRequest({ adapterID: 'jdbg' });
      const configured = dc.waitForEvent('initialized').then(async () => {
        await dc.setBreakpointsRequest({ source: { path: mainJava }, breakpoints: [{ line: lineOf('lambda') }] });
        return dc.configurationDoneRequest();
      });
      const stopped = dc.waitForEvent('stopped');
      await Promise.all([dc.attachRequest({ hostName: '127.0.0.1', port, sourcePaths: [] }), configured]);
      const ev = await stopped;
      assert.equal(ev.body.reason, 'breakpoint');
      await dc.disconnectRequest({ terminateDebuggee: false });
      assert.equal(await exit, 0, 'the program ran on to its end');
      assert.match(out, /done 43 285/);
      assertAllValid(dc);
    } finally {
      await endClient(dc);
      java.kill();
    }
  });
}

test('attach over shared memory (address "shmem:NAME", our agent)', async () => {
  const name = `jdbgdap${process.pid}`;
  const java = spawn('java', [`-agentpath:${classes}/../debug/libjdwp_agent.so=transport=dt_shmem,server=y,suspend=y,address=${name}`, '-cp', classes, 'dapfix.Main'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  java.stdout.on('data', (d) => { out += d; });
  const exit = new Promise((resolve) => java.on('exit', (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    java.stdout.on('data', () => { if (/Listening for transport dt_shmem/.test(out)) resolve(); });
    java.on('exit', () => reject(new Error(`the JVM exited: ${out}`)));
  });
  const dc = await startClient();
  try {
    await dc.initializeRequest({ adapterID: 'jdbg' });
    const configured = dc.waitForEvent('initialized').then(async () => {
      await dc.setBreakpointsRequest({ source: { path: mainJava }, breakpoints: [{ line: lineOf('nested') }, { line: lineOf('end') }] });
      await dc.setExceptionBreakpointsRequest({ filters: ['uncaught'] });
      return dc.configurationDoneRequest();
    });
    const stopped = dc.waitForEvent('stopped');
    await Promise.all([dc.attachRequest({ address: `shmem:${name}` }), configured]);
    let ev = await stopped;
    assert.equal(ev.body.reason, 'breakpoint');
    // The caught exception does not stop under the uncaught filter: the next stop is the end.
    const next = dc.waitForEvent('stopped');
    await dc.continueRequest({ threadId: ev.body.threadId });
    ev = await next;
    assert.equal(ev.body.reason, 'breakpoint');
    const top = (await dc.stackTraceRequest({ threadId: ev.body.threadId, levels: 1 })).body.stackFrames[0];
    assert.equal(top.line, lineOf('end'));
    // terminate ends the VM.
    const terminated = dc.waitForEvent('terminated');
    await dc.terminateRequest({});
    await terminated;
    assert.notEqual(await exit, null);
    await dc.disconnectRequest({});
    assertAllValid(dc);
  } finally {
    await endClient(dc);
    java.kill();
  }
});

test('a debuggee killed while stopped: requests fail with a message, then exited and terminated', async () => {
  const dc = await startClient();
  try {
    await dc.initializeRequest({ adapterID: 'jdbg' });
    const configured = dc.waitForEvent('initialized').then(() => dc.configurationDoneRequest());
    const proc = dc.waitForEvent('process');
    const stopped = dc.waitForEvent('stopped');
    await Promise.all([dc.launch(launchArgs(AGENTS[0], { stopOnEntry: true })), configured]);
    const threadId = (await stopped).body.threadId;
    const pid = (await proc).body.systemProcessId;
    const terminated = dc.waitForEvent('terminated');
    const exited = dc.waitForEvent('exited');
    process.kill(pid, 'SIGKILL');
    await assert.rejects(
      (async () => {
        // Until the adapter notices, a request may still succeed; once it has, it must fail.
        for (;;) await dc.stackTraceRequest({ threadId });
      })(),
      /./,
    );
    assert.notEqual((await exited).body.exitCode, 0);
    await terminated;
    await assert.rejects(dc.threadsRequest(), /no VM is connected/);
    await dc.disconnectRequest({});
    assertAllValid(dc);
  } finally {
    await endClient(dc);
  }
});

test('bad input gets error answers, and the adapter goes on', async () => {
  const { jdbRs } = await import('./helpers.mjs');
  const p = spawn(jdbRs, ['dap'], { stdio: ['pipe', 'pipe', 'inherit'] });
  let got = '';
  p.stdout.on('data', (d) => { got += d; });
  const frame = (s) => `Content-Length: ${Buffer.byteLength(s)}\r\n\r\n${s}`;
  p.stdin.write('Content-Length: nope\r\n\r\n');
  p.stdin.write(frame('{not json'));
  p.stdin.write(frame('{"seq":1,"type":"request","command":"initialize","arguments":{"adapterID":"x"}}'));
  p.stdin.write(frame('{"seq":2,"type":"request","command":"threads"}'));
  p.stdin.write(frame('{"seq":3,"type":"request","command":"frobnicate"}'));
  p.stdin.end();
  const code = await new Promise((resolve) => p.on('exit', resolve));
  assert.equal(code, 0);
  const bodies = got.split(/Content-Length: \d+\r\n\r\n/).filter(Boolean).map((b) => JSON.parse(b));
  const byReq = Object.fromEntries(bodies.filter((b) => b.type === 'response').map((b) => [b.request_seq, b]));
  assert.equal(byReq[1].success, true);
  assert.equal(byReq[2].success, false);
  assert.match(byReq[2].message, /no VM is connected/);
  assert.equal(byReq[3].success, false);
  assert.match(byReq[3].message, /unknown request/);
  const complaints = bodies.filter((b) => b.event === 'output').map((b) => b.body.output).join('');
  assert.match(complaints, /bad Content-Length/);
  assert.match(complaints, /not a DAP request/);
});
