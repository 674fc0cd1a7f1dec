/**
 * `createServer` of node:http without the module's ES facade. The first ES
 * import of a built-in reads every one of its exports, and three of
 * node:http's (WebSocket, CloseEvent, MessageEvent) are getters that load
 * Node's bundled copy of undici: about 750 KB of source compiled at start-up
 * (40–100 ms on a small node) for classes toolgate never uses.
 * `process.getBuiltinModule` hands over the module itself, getters untouched.
 * A value import of 'node:http' anywhere on the sidecar's start-up path
 * brings the cost back (test/integration/lazy-modules.test.ts checks).
 */
export const { createServer } = process.getBuiltinModule('node:http');
