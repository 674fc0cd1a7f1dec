import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { accepts, answers200, spawnNode, waitReady } from './children.ts';
import { freePort } from '../../test/helpers/ports.ts';
import type { BenchRequest } from './request.ts';

/** A running server a case sends its load to. */
export interface Target {
  readonly name: string;
  /** http://127.0.0.1:<port>, no path. */
  readonly origin: string;
  readonly pid: number;
  /** When true, anything but exit code 0 after SIGTERM is reported as a problem. */
  readonly gracefulExit: boolean;
  /** toolgate's admin origin (/metrics), for cases that report what it counted. */
  readonly adminOrigin?: string;
  /** Milliseconds from spawning the process to its first ready answer. */
  readonly readyMs?: number;
  /**
   * Every process whose CPU time and memory are the target's: for a peer of
   * several processes (workers, its own database and cache), all of them,
   * summed. Only `pid` when absent.
   */
  readonly processes?: () => readonly number[];
  /**
   * The bench request as this target takes it, for a peer with its own
   * endpoint, credentials or tool names; the case's request as is when absent.
   */
  readonly adapt?: (req: BenchRequest) => BenchRequest;
  /**
   * The target parses the upstream's answer and writes it anew (members in
   * its own order), so its probe answer must equal the stub's as JSON, not
   * byte for byte.
   */
  readonly answersReserialized?: boolean;
  stop(): Promise<number | string>;
}

export interface StartContext {
  /** The stub upstream every proxy forwards to. */
  readonly stub: Target;
  /** The compiled toolgate entry point to run (this checkout's, or the baseline's). */
  readonly cli: string;
  /** The environment the image gives that build (Build.env). */
  readonly cliEnv: Readonly<Record<string, string>>;
  /** The compiled floor. */
  readonly floor: string;
  /** Set when `cli` is the BENCH_BASELINE build. */
  readonly baseline?: boolean;
}

export type Launcher = (ctx: StartContext) => Promise<Target>;

/** The target, stopping a companion of its own (a receiver, a stub, a validator, a cluster) after itself. */
export function alongside(target: Target, stopCompanion: () => Promise<unknown>): Target {
  return {
    ...target,
    async stop() {
      const code = await target.stop();
      await stopCompanion();
      return code;
    },
  };
}

const repoRoot = resolve(import.meta.dirname, '..', '..');
const benchScript = (file: string) => resolve(repoRoot, 'bench', file);

export async function startStub(args: readonly string[] = []): Promise<Target> {
  const port = await freePort();
  const child = spawnNode('stub', benchScript('upstream-stub.ts'), ['--port', String(port), ...args]);
  await waitReady(child, () => accepts(port));
  return {
    name: 'stub',
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid,
    gracefulExit: false,
    stop: () => child.stop(),
  };
}

/** Sends straight to the stub: the baseline every "added" figure subtracts. */
export const direct: Launcher = async (ctx) => ctx.stub;

/** The floor (compiled), the policy floor or the peer: `--upstream <origin> --port <p>`. */
export function benchProxy(name: 'floor' | 'policy_floor' | 'peer'): Launcher {
  return async (ctx) => {
    const port = await freePort();
    const script = name === 'floor' ? ctx.floor : benchScript(name === 'peer' ? 'peer.ts' : 'policy-floor.ts');
    const child = spawnNode(name, script, ['--upstream', ctx.stub.origin, '--port', String(port)], {}, 'proxies');
    await waitReady(child, () => accepts(port));
    return { name, origin: `http://127.0.0.1:${port}`, pid: child.pid, gracefulExit: false, stop: () => child.stop() };
  };
}

/**
 * The policy file an earlier build is given (`lib/policy.ts`): the file
 * itself when that build's `toolgate policy validate` accepts it, so both
 * builds do the same work; otherwise the variant the bench wrote beside it,
 * without the fields such a build refuses (a build without the command
 * gets the variant too).
 */
function forBaseline(cli: string, arg: string): string {
  if (!arg.endsWith('policy.yaml')) return arg;
  const variant = `${arg.slice(0, -'policy.yaml'.length)}baseline-policy.yaml`;
  if (!existsSync(variant)) return arg;
  const accepted = spawnSync(process.execPath, [cli, 'policy', 'validate', arg], { stdio: 'ignore' }).status === 0;
  return accepted ? arg : variant;
}

/**
 * toolgate itself (compiled, as the image runs it) in front of the stub, ready once its admin
 * /readyz says 200. `args` and `env` add configuration (policy, auth) for
 * cases that measure more than the plain forward path.
 */
export function toolgate(
  name: string,
  opts: { args?: readonly string[]; env?: Readonly<Record<string, string>> } = {},
): Launcher {
  return async (ctx) => {
    const port = await freePort();
    const adminPort = await freePort();
    const started = performance.now();
    const child = spawnNode(
      name,
      ctx.cli,
      [
        '--upstream',
        ctx.stub.origin,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--admin-port',
        String(adminPort),
        ...(ctx.baseline === true ? (opts.args ?? []).map((arg) => forBaseline(ctx.cli, arg)) : (opts.args ?? [])),
      ],
      { ...ctx.cliEnv, ...opts.env },
      'proxies',
    );
    // Generous: a policy start on a starved shared machine can take tens of seconds.
    await waitReady(child, () => answers200(`http://127.0.0.1:${adminPort}/readyz`), 60_000);
    return {
      name,
      readyMs: performance.now() - started,
      origin: `http://127.0.0.1:${port}`,
      adminOrigin: `http://127.0.0.1:${adminPort}`,
      pid: child.pid,
      gracefulExit: true,
      stop: () => child.stop(),
    };
  };
}

/**
 * toolgate with tracing on, exporting spans over OTLP/HTTP to a local
 * receiver stub (started here and stopped with it), in the default encoding
 * (protobuf): what an operator who sets only the endpoint gets. `sampler` is
 * the standard OTEL_TRACES_SAMPLER value, `ratio` its argument.
 */
export function toolgateTracing(name: string, sampler: string, ratio?: string): Launcher {
  return async (ctx) => {
    const port = await freePort();
    const receiver = spawnNode(`${name}-otlp`, benchScript('otlp-stub.ts'), ['--port', String(port)]);
    await waitReady(receiver, () => accepts(port));
    const target = await toolgate(name, {
      env: {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_SERVICE_NAME: 'toolgate-bench',
        OTEL_TRACES_SAMPLER: sampler,
        ...(ratio === undefined ? {} : { OTEL_TRACES_SAMPLER_ARG: ratio }),
      },
    })(ctx);
    return alongside(target, () => receiver.stop());
  };
}
