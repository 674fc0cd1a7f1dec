import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');
const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const { forbidden } = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as {
  forbidden: { name: string; from: { path?: string } }[];
};

/** The layers as the cruiser enforces them, bottom first; the top layer has no rule of its own. */
const LAYERS = forbidden
  .filter((r) => r.name.startsWith('layer-'))
  .map((r) => ({ name: r.name.slice('layer-'.length), path: new RegExp(r.from.path ?? '') }));

/** Every folder of src/, as `src/a/b/`, generated code excepted. */
function folders(dir: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (!d.isDirectory() || d.name === 'generated') continue;
    out.push(`src/${relative(SRC, join(dir, d.name))}/`, ...folders(join(dir, d.name)));
  }
  return out;
}

const topFolders = readdirSync(SRC, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => `src/${d.name}/`);

const headingLines = doc
  .slice(doc.indexOf('## The layers'), doc.indexOf('## Outside'))
  .split('\n')
  .filter((l) => l.startsWith('### '));
/** The headings of docs/architecture.md's layer list, in order, by the first path each names. */
const layerHeadings = headingLines.map((l) => /`(src\/[^`]+)`/.exec(l)?.[1] ?? l);

/** The layer a path belongs to: for a folder, the layer of a file inside it. */
function layerOf(path: string): string | undefined {
  const probe = path.endsWith('/') ? `${path}x.ts` : path;
  return LAYERS.find((l) => l.path.test(probe))?.name;
}

describe('docs/architecture.md is kept equal to the tree and the dependency rules', () => {
  it('names every folder of src/', () => {
    const missing = folders(SRC).filter(
      (f) => !doc.includes(`\`${f}\``) && !doc.includes(`\`${f.slice('src/'.length)}\``),
    );
    assert.deepEqual(missing, []);
  });

  it('gives every top-level folder a paragraph of its own', () => {
    const headed = new Set(headingLines.flatMap((l) => [...l.matchAll(/`(src\/[^`]+)`/g)].map((m) => m[1])));
    assert.deepEqual(
      topFolders.filter((f) => !headed.has(f)),
      [],
    );
  });

  it('lists the layers in the order the dependency rules enforce', () => {
    assert.ok(LAYERS.length > 10, 'the layer rules were not found in .dependency-cruiser.cjs');
    const documented = layerHeadings.map(layerOf).filter((n) => n !== undefined);
    assert.deepEqual(
      documented,
      LAYERS.map((l) => l.name),
    );
  });
});

describe('the README development section lists the layout', () => {
  it('names every top-level folder of src/', () => {
    // oxlint-disable-next-line prefer-set-has -- a string: includes() here is String#includes
    const section = readme.slice(readme.indexOf('## Development'));
    assert.deepEqual(
      topFolders.filter((f) => !section.includes(`\`${f}\``)),
      [],
    );
  });
});
