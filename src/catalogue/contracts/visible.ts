import { withoutTools, type Catalogue } from '../catalogue.ts';

/**
 * The catalogue callers may be shown: the synced one without the tools
 * quarantined now. Rebuilt only when either changes, so the request path
 * pays one comparison per read.
 */
export function visibleCatalogue(
  source: () => Catalogue | undefined,
  hidden: () => ReadonlyMap<string, unknown>,
): () => Catalogue | undefined {
  let lastSource: Catalogue | undefined;
  let lastHidden: ReadonlyMap<string, unknown> | undefined;
  let last: Catalogue | undefined;
  return () => {
    const c = source();
    const h = hidden();
    if (c !== lastSource || h !== lastHidden) {
      lastSource = c;
      lastHidden = h;
      last = c === undefined ? undefined : withoutTools(c, h);
    }
    return last;
  };
}
