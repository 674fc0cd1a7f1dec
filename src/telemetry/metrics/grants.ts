import { Counter, Gauge, type Registry } from '../prom.ts';
import {
  grantState,
  grantStoreHealth,
  on,
  policyReload,
  snapshotLookup,
  type GrantState,
  type GrantStoreHealth,
  type PolicyReload,
  type SnapshotLookup,
  type Subscription,
} from '../channels.ts';
import { FastCounter } from '../fast-metrics.ts';

/** The grants in force and the policy behind them: snapshot lookups, the control revision and its age, the shared store's health, policy reloads. */
export function grantsMetrics(registry: Registry): Subscription[] {
  const snapshots = new FastCounter({
    name: 'toolgate_grant_snapshot_lookups_total',
    help: 'Grant snapshot lookups, by result (hit or miss of the snapshot cache).',
    labelNames: ['result'] as const,
    registers: [registry],
  });

  let grantConfirmedAtMs: number | undefined;
  let grantsReported = false;
  const revision = new Gauge({
    name: 'toolgate_grant_revision',
    help: 'Control revision of the grants in force, as last confirmed by the shared grant store (0 while none reports).',
    registers: [registry],
  });

  // oxlint-disable-next-line no-new -- the gauge registers itself and is read through its collect()
  new Gauge({
    name: 'toolgate_grant_revision_age_seconds',
    help: 'Seconds since the shared grant store last confirmed the revision, growing from that moment (also past the staleness bound and during outages); 0 with grants from the policy file, which are always current.',
    registers: [registry],
    collect() {
      if (grantsReported)
        this.set(grantConfirmedAtMs === undefined ? 0 : Math.max(0, (Date.now() - grantConfirmedAtMs) / 1000));
    },
  });

  const storeHealth = new Counter({
    name: 'toolgate_grant_store_transitions_total',
    help: 'Health transitions of the shared grant store, by the state entered: ok, unreachable, not_master (a replica answered), fault (the revision went backwards: data lost; calls fail closed).',
    labelNames: ['state'] as const,
    registers: [registry],
  });

  const reloads = new Counter({
    name: 'toolgate_policy_reloads_total',
    help: 'Policy reload attempts, by outcome: applied, rejected (invalid; the last good policy stays), unchanged.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });

  const lastReloadOk = new Gauge({
    name: 'toolgate_policy_last_reload_successful',
    help: '1 when the last policy reload attempt was applied or unchanged (or none happened yet), 0 when it was rejected.',
    registers: [registry],
  });
  lastReloadOk.set(1);

  const snapshotHit = snapshots.bind('hit');
  const snapshotMiss = snapshots.bind('miss');
  const onSnapshot = (m: SnapshotLookup) => {
    const r = m.result;
    if (r === 'hit') snapshotHit.inc();
    else if (r === 'miss') snapshotMiss.inc();
  };

  const onGrantState = (g: GrantState) => {
    if (g.revision !== undefined) revision.set(g.revision);
    grantConfirmedAtMs = g.confirmedAtMs;
    grantsReported = true;
  };

  const onStoreHealth = (m: GrantStoreHealth) => {
    const state = m.state;
    if (state === 'ok' || state === 'unreachable' || state === 'not_master' || state === 'fault')
      storeHealth.labels(state).inc();
  };

  const onReload = (m: PolicyReload) => {
    const o = m.outcome;
    if (o !== 'applied' && o !== 'rejected' && o !== 'unchanged') return;
    reloads.labels(o).inc();
    lastReloadOk.set(o === 'rejected' ? 0 : 1);
  };
  return [
    on(snapshotLookup, onSnapshot),
    on(grantState, onGrantState),
    on(grantStoreHealth, onStoreHealth),
    on(policyReload, onReload),
  ];
}
