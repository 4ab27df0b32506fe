// The "done when" session: a DAP client no one here wrote (Microsoft's DebugClient) drives a
// whole debug session of a real JVM through `jdb-rs dap`, once with our agent and once with the
// JDK's, and every message the adapter sent is checked against the DAP schema.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import {
  AGENTS, compileFixtures, lineOf, mainJava, startClient, assertAllValid, launchArgs, waitForOutput, outputText, endClient,
} from './helpers.mjs';

before(() => compileFixtures());

async function topFrame(dc, threadId) {
  const st = await dc.stackTraceRequest({ threadId, startFrame: 0, levels: 20 });
  return st.body.stackFrames[0];
}

async function locals(dc, frameId) {
  const scopes = await dc.scopesRequest({ frameId });
  const ref = scopes.body.scopes.find((s) => s.name === 'Locals').variablesReference;
  const vars = await dc.variablesRequest({ variablesReference: ref });
  return Object.fromEntries(vars.body.variables.map((v) => [v.name, v]));
}

for (const agent of AGENTS) {
  test(`a whole session against ${agent.name === 'jdk' ? "the JDK's agent" : 'our agent'}`, async () => {
    const dc = await startClient();
    try {
      const init = await dc.initializeRequest({ adapterID: 'jdbg', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
      assert.equal(init.body.supportsConditionalBreakpoints, true);
      assert.equal(init.body.supportsLogPoints, true);

      const nested = lineOf('nested');
      const lambda = lineOf('lambda');
      const configured = dc.waitForEvent('initialized').then(async () => {
        const bps = await dc.setBreakpointsRequest({ source: { path: mainJava }, breakpoints: [{ line: nested }, { line: lambda }] });
        assert.equal(bps.body.breakpoints.length, 2);
        await dc.setExceptionBreakpointsRequest({ filters: ['caught'] });
        return dc.configurationDoneRequest();
      });
      const stopped = dc.waitForEvent('stopped');
      await Promise.all([dc.launch(launchArgs(agent)), configured]);

      // Breakpoint in a nested (generic) class.
      let ev = await stopped;
      assert.equal(ev.body.reason, 'breakpoint');
      const threadId = ev.body.threadId;
      let frame = await topFrame(dc, threadId);
      assert.equal(frame.line, nested);
      assert.match(frame.name, /Inner\.twice$/);
      assert.equal(frame.source.path, mainJava);
      let vars = await locals(dc, frame.id);
      assert.ok(vars.this, 'this is listed');
      assert.ok(vars.this.variablesReference > 0, 'this expands');
      const fields = await dc.variablesRequest({ variablesReference: vars.this.variablesReference });
      const byName = Object.fromEntries(fields.body.variables.map((v) => [v.name, v.value]));
      assert.equal(byName.value, '21');
      assert.equal(byName.payload, '"p"');

      // Evaluate, with a method call.
      let r = await dc.evaluateRequest({ expression: 'value * 2 + 1', frameId: frame.id, context: 'repl' });
      assert.equal(r.body.result, '43');
      r = await dc.evaluateRequest({ expression: 'payload.length()', frameId: frame.id, context: 'watch' });
      assert.equal(r.body.result, '1');

      // Step over: the next line, with the new local.
      let next = dc.waitForEvent('stopped');
      await dc.nextRequest({ threadId });
      ev = await next;
      assert.equal(ev.body.reason, 'step');
      frame = await topFrame(dc, threadId);
      assert.equal(frame.line, nested + 1);
      vars = await locals(dc, frame.id);
      assert.equal(vars.r.value, '42');

      // On to the lambda's body.
      next = dc.waitForEvent('stopped');
      await dc.continueRequest({ threadId });
      ev = await next;
      assert.equal(ev.body.reason, 'breakpoint');
      frame = await topFrame(dc, threadId);
      assert.equal(frame.line, lambda);
      assert.match(frame.name, /lambda\$main\$0/);
      r = await dc.evaluateRequest({ expression: 'n', frameId: frame.id, context: 'hover' });
      assert.equal(r.body.result, '42');

      // A conditional breakpoint and a logpoint replace the file's breakpoints.
      const loop = lineOf('loop');
      const square = lineOf('square');
      const bps = await dc.setBreakpointsRequest({
        source: { path: mainJava },
        breakpoints: [{ line: loop, condition: 'i == 7' }, { line: square, logMessage: 'square of {x} is {x * x}' }],
      });
      assert.deepEqual(bps.body.breakpoints.map((b) => [b.verified, b.line]), [[true, loop], [true, square]]);
      next = dc.waitForEvent('stopped');
      await dc.continueRequest({ threadId });
      ev = await next;
      assert.equal(ev.body.reason, 'breakpoint');
      frame = await topFrame(dc, threadId);
      assert.equal(frame.line, loop);
      r = await dc.evaluateRequest({ expression: 'i', frameId: frame.id, context: 'watch' });
      assert.equal(r.body.result, '7');
      r = await dc.evaluateRequest({ expression: 'sum', frameId: frame.id, context: 'watch' });
      assert.equal(r.body.result, String([0, 1, 2, 3, 4, 5, 6].reduce((a, x) => a + x * x, 0)));
      await waitForOutput(dc, 'square of 6 is 36');
      assert.ok(!outputText(dc).includes('square of 7'), 'the logpoint at 7 has not run yet');

      // Exception breakpoint (caught), after clearing the line breakpoints.
      await dc.setBreakpointsRequest({ source: { path: mainJava }, breakpoints: [] });
      next = dc.waitForEvent('stopped');
      await dc.continueRequest({ threadId });
      ev = await next;
      assert.equal(ev.body.reason, 'exception');
      const info = await dc.customRequest('exceptionInfo', { threadId });
      assert.equal(info.body.exceptionId, 'java.lang.IllegalStateException');
      assert.equal(info.body.description, 'boom 285');
      assert.equal(info.body.breakMode, 'always');
      assert.ok(!outputText(dc).includes('square of 7'), 'the cleared logpoint logs no more');

      // Continue to the end: the program's output, then exited and terminated.
      const terminated = dc.waitForEvent('terminated');
      const exited = dc.waitForEvent('exited');
      await dc.continueRequest({ threadId });
      await waitForOutput(dc, 'done 43 285 3 999 42 50 1');
      assert.equal((await exited).body.exitCode, 0);
      await terminated;
      await dc.disconnectRequest({});
      assertAllValid(dc);
    } finally {
      await endClient(dc);
    }
  });
}
