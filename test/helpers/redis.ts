/**
 * A real redis-server for tests and benchmarks, on a free loopback port, with
 * no persistence. The process can be frozen (SIGSTOP), killed and restarted on
 * the same port. Every server still running is killed when the test process
 * exits, so a failing test never leaves one behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './ports.ts';

export const REDIS_SERVER = '/usr/bin/redis-server';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** SIGSTOP: the socket stays open, nothing answers. */
  freeze(): void;
  /** SIGCONT after `freeze`. */
  thaw(): void;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
  /** A fresh server (empty data) on the same port. */
  restart(): Promise<void>;
  /** Sends one command over a fresh connection and returns the raw RESP reply. */
  command(...args: string[]): Promise<string>;
  close(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startRedis(extraArgs: readonly string[] = []): Promise<RedisServer> {
  return startRedisProcess(await freePort(), [], extraArgs);
}

/** A server on a given port; `leading` comes first on the command line (a config file, `--sentinel`). */
export async function startRedisProcess(
  port: number,
  leading: readonly string[],
  extraArgs: readonly string[] = [],
): Promise<RedisServer> {
  let child = await spawnServer(port, leading, extraArgs);
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    freeze: () => void child.kill('SIGSTOP'),
    thaw: () => void child.kill('SIGCONT'),
    kill: () => stop(child),
    async restart() {
      await stop(child);
      child = await spawnServer(port, leading, extraArgs);
    },
    command: (...args) => rawCommand(port, args),
    close: () => stop(child),
  };
  return server;
}

async function spawnServer(
  port: number,
  leading: readonly string[],
  extraArgs: readonly string[],
): Promise<ChildProcess> {
  // A directory of its own, removed on exit: a replica writes the RDB it
  // receives, and a server restarted "empty" must not load one left behind.
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-redis-'));
  const child = spawn(
    REDIS_SERVER,
    [
      ...leading,
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--loglevel',
      'warning',
      ...extraArgs,
    ],
    {
      stdio: 'ignore',
    },
  );
  running.add(child);
  child.once('exit', () => {
    running.delete(child);
    rmSync(dir, { recursive: true, force: true });
  });
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    try {
      // A server started with --requirepass answers NOAUTH: it is up.
      if (/^(\+PONG|-NOAUTH)/.test(await rawCommand(port, ['PING']))) return child;
    } catch {
      // not listening yet
    }
    await sleep(20);
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not answer PING within 5 s');
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  });
}

function rawCommand(port: number, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('redis command timed out'));
    }, 1000);
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('data', (d) => {
      reply += d.toString('utf8');
      if (reply.endsWith('\r\n')) {
        clearTimeout(timer);
        socket.end();
        resolve(reply);
      }
    });
    socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);
  });
}
