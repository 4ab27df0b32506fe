// What no other Java adapter offers: one-trip deadlock detection and profiling with a flame
// graph written as a file (our agent), with clear errors or the standard-commands fallback on
// the JDK's agent.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  AGENTS, compileFixtures, lineOf, mainJava, startClient, assertAllValid, launchArgs, endClient,
} from './helpers.mjs';

before(() => compileFixtures());

for (const agent of AGENTS) {
  test(`deadlocks and profiling (${agent.name === 'jdk' ? "the JDK's agent" : 'our agent'})`, async () => {
    const dc = await startClient();
    const flame = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'jdbg-dap-')), 'cpu.svg');
    try {
      await dc.initializeRequest({ adapterID: 'jdbg' });
      const configured = dc.waitForEvent('initialized').then(async () => {
        await dc.setBreakpointsRequest({ source: { path: mainJava }, breakpoints: [{ line: lineOf('call') }, { line: lineOf('end') }] });
        return dc.configurationDoneRequest();
      });
      let stopped = dc.waitForEvent('stopped');
      await Promise.all([dc.launch(launchArgs(agent)), configured]);
      const threadId = (await stopped).body.threadId;

      const dl = await dc.customRequest('jdbg/deadlocks', {});
      assert.deepEqual(dl.body.deadlocks, []);
      assert.equal(dl.body.oneTrip, !agent.jdkAgent, 'one trip with our agent, standard commands otherwise');

      if (agent.jdkAgent) {
        await assert.rejects(dc.customRequest('jdbg/profile', { action: 'start', kind: 'cpu' }), /profiling needs jdbg's agent/);
      } else {
        await dc.customRequest('jdbg/profile', { action: 'start', kind: 'cpu', intervalMs: 1 });
        await dc.customRequest('jdbg/profile', { action: 'start', kind: 'alloc' });
        stopped = dc.waitForEvent('stopped');
        await dc.continueRequest({ threadId });
        await stopped;
        const cpu = await dc.customRequest('jdbg/profile', { action: 'stop', kind: 'cpu', flame });
        assert.equal(cpu.body.flame, flame);
        assert.ok(Array.isArray(cpu.body.top));
        assert.match(fs.readFileSync(flame, 'utf8'), /<svg[\s\S]*<\/svg>/);
        const alloc = await dc.customRequest('jdbg/profile', { action: 'stop', kind: 'alloc' });
        assert.equal(alloc.body.unit, 'bytes');
        await assert.rejects(dc.customRequest('jdbg/profile', { action: 'start', kind: 'gpu' }), /unknown action/);
      }
      assertAllValid(dc);
    } finally {
      await endClient(dc);
    }
  });
}
