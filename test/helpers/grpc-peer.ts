import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { goBuildInto } from './go-build.ts';
import { inCi } from './testdata.ts';

/**
 * Validators on other gRPC stacks than node:http2's, for the validator
 * client's interoperability tests (test/grpc-peers): grpc-go, built with the
 * machine's Go and cached in .cache/grpc-peers keyed by the module's digest,
 * as the control plane is (test/kube/binaries.ts); and grpcio (gRPC C-core),
 * in a virtual environment installed from PyPI into .cache/grpc-peers.
 * `.ci/run` prepares both before the tests; a test that finds either missing
 * prepares it.
 */

export type Peer = 'grpc-go' | 'grpcio';

const PEERS = join(import.meta.dirname, '..', 'grpc-peers');
const CACHE = join(import.meta.dirname, '..', '..', '.cache', 'grpc-peers');
const GO_MODULE = join(PEERS, 'go');
const GRPCIO_VERSION = '1.76.0';

function goBinary(): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(GO_MODULE).sort())
    hash
      .update(name)
      .update('\0')
      .update(readFileSync(join(GO_MODULE, name)));
  return join(CACHE, `go-${hash.digest('hex').slice(0, 12)}`, 'validator');
}

function buildGo(): string {
  const path = goBinary();
  if (!existsSync(path)) {
    goBuildInto(dirname(path), {
      module: GO_MODULE,
      args: (staging) => ['-o', join(staging, 'validator'), '.'],
      built: () => existsSync(path),
    });
  }
  return path;
}

/** The venv's python, installing grpcio on first use; `installed` is written last, so an interrupted install starts over. */
function installGrpcio(): string {
  const dir = join(CACHE, `grpcio-${GRPCIO_VERSION}`);
  const python = join(dir, 'venv', 'bin', 'python');
  const marker = join(dir, 'installed');
  if (existsSync(marker)) return python;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('python3', ['-m', 'venv', join(dir, 'venv')], { stdio: ['ignore', 'inherit', 'inherit'] });
  execFileSync(
    python,
    ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--quiet', `grpcio==${GRPCIO_VERSION}`],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  writeFileSync(marker, `grpcio==${GRPCIO_VERSION}\n`);
  return python;
}

/** The command that runs a peer, preparing it first. */
function command(peer: Peer): [string, string[]] {
  return peer === 'grpc-go' ? [buildGo(), []] : [installGrpcio(), [join(PEERS, 'python', 'validator.py')]];
}

/**
 * For node:test's `skip`: why a peer cannot run here, or false. In CI nothing
 * skips: a peer that will not build or install fails the tests.
 */
export function peerSkip(peer: Peer): false | string {
  if (inCi()) return false;
  try {
    command(peer);
    return false;
  } catch (err) {
    return `the ${peer} validator could not be prepared (${(err as Error).message.split('\n')[0]}); see docs/testing.md`;
  }
}

export interface PeerValidator {
  /** host:port for a policy's `target`. */
  readonly target: string;
  close(): Promise<void>;
}

/** Starts a peer validator (`--max-streams N` sets its SETTINGS_MAX_CONCURRENT_STREAMS); it serves until `close`, which closes its stdin. */
export async function startPeer(peer: Peer, maxStreams?: number): Promise<PeerValidator> {
  const [file, args] = command(peer);
  const limit = maxStreams === undefined ? [] : ['--max-streams', String(maxStreams)];
  const child: ChildProcess = spawn(file, [...args, ...limit], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) =>
      reject(new Error(`the ${peer} validator exited (${String(code)}) before it listened`)),
    );
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    target: `127.0.0.1:${port}`,
    close: async () => {
      child.stdin?.end();
      await exited;
    },
  };
}

if (import.meta.main) {
  for (const peer of ['grpc-go', 'grpcio'] as const)
    process.stdout.write(`${peer}: ${command(peer).flat().join(' ')}\n`);
}
