/**
 * Generates the TypeScript types of proto/ into a directory (`npm run
 * proto:gen` writes src/grpc/generated/, which is committed and never edited
 * by hand; a test regenerates into a temporary directory and compares).
 *
 * proto-loader-gen-types writes extensionless relative imports, which
 * nodenext resolution refuses, so every relative specifier gets its `.ts`.
 * The imports are all `import type`, erased at run time: the services load
 * their definitions from the .proto files with @grpc/proto-loader. The
 * generator names each file's source by absolute path; it is rewritten
 * relative to the repository so the output is the same in every checkout.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PROTO_FILES, PROTO_ROOT } from './proto-files.ts';

const REPO = resolve(import.meta.dirname, '../..');
const BIN = join(REPO, 'node_modules', '.bin', 'proto-loader-gen-types');

export function generate(outDir: string): void {
  rmSync(outDir, { recursive: true, force: true });
  execFileSync(
    BIN,
    [
      '--longs',
      'Number',
      '--enums',
      'String',
      '--defaults',
      '--oneofs',
      '--grpcLib',
      '@grpc/grpc-js',
      '-I',
      PROTO_ROOT,
      '-O',
      outDir,
      ...PROTO_FILES,
    ],
    { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  for (const file of listTs(outDir)) {
    const text = readFileSync(file, 'utf8')
      .replaceAll(`// Original file: ${REPO}/`, '// Original file: ')
      .replace(/(from '\.{1,2}\/[^']+?)(?<!\.ts)'/g, "$1.ts'");
    writeFileSync(file, text);
  }
}

export function listTs(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => join(dir, f));
}

if (import.meta.main) {
  const out = process.argv[2];
  if (out === undefined) {
    process.stderr.write('usage: node src/grpc/codegen.ts OUT_DIR\n');
    process.exit(2);
  }
  generate(resolve(out));
}
