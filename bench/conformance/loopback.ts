/**
 * Preloaded (`node --import`) into the MCP server under test, which calls
 * `listen(PORT)` and so would bind every interface. Listeners given only a
 * port are bound to 127.0.0.1 instead: the harness never exposes a server.
 */

import net from 'node:net';

// oxlint-disable-next-line typescript/unbound-method -- kept to be called with the server as `this` below
const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function loopbackListen(this: net.Server, ...args: unknown[]): net.Server {
  const [first, second] = args;
  const portOnly =
    (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) &&
    (second === undefined || typeof second === 'function');
  const patched = portOnly ? [Number(first), '127.0.0.1', ...args.slice(1)] : args;
  return (listen as (...a: unknown[]) => net.Server).apply(this, patched);
} as typeof net.Server.prototype.listen;
