import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = join(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** README lines that are prose: outside fenced code blocks and tables, whose width is their content's. */
function proseLines(text: string): { line: number; text: string }[] {
  let fenced = false;
  return text.split('\n').flatMap((t, i) => {
    if (/^\s*(```|~~~)/.test(t)) {
      fenced = !fenced;
      return [];
    }
    return fenced || t.startsWith('|') ? [] : [{ line: i + 1, text: t }];
  });
}

describe('the README reads as a manual', () => {
  it('keeps prose lines to 120 characters', () => {
    const long = proseLines(readme)
      .filter((l) => Array.from(l.text).length > 120)
      .map((l) => `line ${l.line}: ${Array.from(l.text).length} characters`);
    assert.deepEqual(long, []);
  });

  it('has its sections in the order a newcomer needs them', () => {
    const headings = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    const order = [
      'Quick start',
      'Policy',
      'Tool discovery',
      'Configuration',
      'Errors',
      'Metrics',
      'Operations',
      'Kubernetes',
      'Development',
    ];
    assert.deepEqual(
      headings.filter((h) => order.includes(h as string)),
      order,
    );
    assert.equal(headings[0], 'Quick start', 'what toolgate is comes first, before any section');
    assert.match(
      readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## Policy')),
      /helm install toolgate charts\/toolgate/,
    );
  });

  it('links only to files that exist', () => {
    const targets = [...readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
      .map((m) => m[1] as string)
      .filter((t) => !/^[a-z]+:/.test(t));
    assert.ok(
      targets.includes('LICENSE') && targets.includes('CHANGELOG.md') && targets.includes('docs/conformance.md'),
    );
    assert.deepEqual(
      targets.filter((t) => !existsSync(join(root, t))),
      [],
    );
  });
});

describe('proseLines', () => {
  it('skips fenced code and tables, and counts what is left', () => {
    const text = ['a', '```sh', 'x'.repeat(200), '```', '| t |', 'b'].join('\n');
    assert.deepEqual(proseLines(text), [
      { line: 1, text: 'a' },
      { line: 6, text: 'b' },
    ]);
  });
});
