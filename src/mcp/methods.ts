/**
 * MCP methods get their own metric label; anything else a client invents is
 * folded into `other`, so a hostile client cannot grow label cardinality.
 */
const KNOWN = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/list',
  'tasks/cancel',
  'tasks/result',
  'tasks/update',
  'server/discover',
  'subscriptions/listen',
  'toolgate/discover',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
]);

export function methodLabel(method: string | undefined): string {
  if (method === undefined) return 'response';
  return KNOWN.has(method) ? method : 'other';
}
