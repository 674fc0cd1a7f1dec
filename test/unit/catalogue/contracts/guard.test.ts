import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildCatalogue, type Catalogue } from '../../../../src/catalogue/catalogue.ts';
import { ContractGuard } from '../../../../src/catalogue/contracts/guard.ts';
import { MemoryPinStore } from '../../../../src/catalogue/contracts/pins.ts';
import type { ContractsConfig } from '../../../../src/config/policy/policy.ts';

const honest = { name: 'weather', description: 'Forecast for a city', inputSchema: { type: 'object' } };
const changed = { ...honest, description: 'Forecast for a city, now with a changed description' };
const echo = { name: 'echo', description: 'Echo', inputSchema: { type: 'object' } };

function setup(config: Partial<ContractsConfig>) {
  let catalogue: Catalogue = buildCatalogue([honest, echo], 0).catalogue;
  let told = 0;
  let refreshes = 0;
  const full: ContractsConfig = { mode: 'enforce', pin: 'first-seen', unknownTools: 'allow', lint: 'off', tools: {}, ...config };
  const guard = new ContractGuard({
    store: new MemoryPinStore(),
    config: () => full,
    catalogue: () => catalogue,
    onQuarantineChange: () => told++,
    refreshCatalogue: () => refreshes++,
  });
  return {
    guard,
    serve: (...tools: Record<string, unknown>[]) => {
      catalogue = buildCatalogue(tools, 0).catalogue;
    },
    told: () => told,
    refreshes: () => refreshes,
  };
}

describe('the contract guard', () => {
  it('pins first-seen digests, quarantines drift, tells listeners, and releases on approval', async () => {
    const s = setup({});
    await s.guard.evaluate();
    assert.equal(s.guard.quarantined('weather'), undefined);
    assert.equal(s.guard.pin('weather')?.by, 'first-seen');

    s.serve(changed, echo);
    await s.guard.evaluate();
    const q = s.guard.quarantined('weather');
    assert.equal(q?.reason, 'drift');
    assert.equal(q?.approvedDigest, s.guard.pin('weather')?.digest);
    assert.equal(s.told(), 1);
    assert.deepEqual(s.guard.assessments().get('weather')?.changes, [{ field: 'description' }]);

    const approved = await s.guard.approve('weather');
    assert.ok(approved.ok);
    assert.equal(s.guard.quarantined('weather'), undefined);
    assert.equal(s.guard.pin('weather')?.by, 'operator');
    assert.equal(s.told(), 2);
    assert.deepEqual((await s.guard.approve('nope')), { ok: false, reason: 'unknown_tool' });
  });

  it('releases a tool that reverts to its pinned contract', async () => {
    const s = setup({});
    await s.guard.evaluate();
    s.serve(changed, echo);
    await s.guard.evaluate();
    s.serve(honest, echo);
    await s.guard.evaluate();
    assert.equal(s.guard.quarantinedTools().size, 0);
  });

  it('hides a listed tool whose live contract is not approved, before any sync saw it, and asks for a sync', async () => {
    const s = setup({});
    await s.guard.evaluate();
    assert.equal(s.guard.mayList(honest), true);
    assert.equal(s.guard.mayList(changed), false);
    assert.equal(s.refreshes(), 1);
    assert.equal(s.guard.mayList({ name: 'brand_new', description: 'x' }), true, 'unknown tools follow unknownTools: allow');
  });

  it('lists everything that is not quarantined in alert mode', async () => {
    const s = setup({ mode: 'alert' });
    await s.guard.evaluate();
    s.serve(changed, echo);
    await s.guard.evaluate();
    assert.equal(s.guard.quarantinedTools().size, 0);
    assert.equal(s.guard.mayList(changed), true);
    assert.equal(s.guard.assessments().get('weather')?.status, 'drifted');
  });

  it('does nothing with mode and lint off', async () => {
    const s = setup({ mode: 'off', lint: 'off' });
    await s.guard.evaluate();
    assert.equal(s.guard.assessments().size, 0);
    assert.equal(s.guard.pin('weather'), undefined);
  });
});
