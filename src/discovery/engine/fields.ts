import { contentWords, stemCached, stems } from '../text/analyze.ts';
import { gloss, type Glossary } from '../text/gloss.ts';
import { compounds } from '../text/tokenize.ts';
import { isRecord } from '../../json/record.ts';

/** The searchable fields of a tool, in index order; `matched` reports these names. */
export const FIELDS = ['name', 'title', 'description', 'schema', 'aliases', 'examples'] as const;
export type FieldName = (typeof FIELDS)[number];
export const FIELD_COUNT = FIELDS.length;

export interface ToolDoc {
  readonly name: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema?: unknown;
  /** Other names operators know the tool by, from policy. */
  readonly aliases?: readonly string[] | undefined;
  /** Requests the tool answers, from policy. */
  readonly examples?: readonly string[] | undefined;
}

/** Bounds the walk over hostile or cyclic schemas. */
const MAX_SCHEMA_DEPTH = 6;
const MAX_SCHEMA_NODES = 500;

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * Property names and their descriptions, nested objects and array items
 * included: "symbol", "start_date" say what a tool works on even when its
 * description is terse. Other schema keywords are structure, not meaning.
 */
function schemaText(schema: unknown): string[] {
  const out: string[] = [];
  let budget = MAX_SCHEMA_NODES;
  const walk = (node: unknown, depth: number): void => {
    if (!isRecord(node) || depth > MAX_SCHEMA_DEPTH || budget-- <= 0) return;
    const props = node['properties'];
    if (isRecord(props)) {
      for (const [key, sub] of Object.entries(props)) {
        out.push(key);
        if (isRecord(sub)) out.push(str(sub['description']));
        walk(sub, depth + 1);
      }
    }
    const items = node['items'];
    if (isRecord(items)) walk(items, depth + 1);
  };
  walk(schema, 0);
  return out;
}

function nameTerms(name: string, words: readonly string[]): string[] {
  const terms = stems(words);
  const seen = new Set(terms);
  for (const c of compounds(name)) {
    const s = stemCached(c);
    if (!seen.has(s)) {
      seen.add(s);
      terms.push(s);
    }
  }
  return terms;
}

/** A tool's searchable text, field by field, before analysis; non-string inputs count as absent. */
export interface FieldTexts {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly schema: readonly string[];
  readonly aliases: readonly string[];
  readonly examples: readonly string[];
}

export function fieldTexts(tool: ToolDoc): FieldTexts {
  return {
    name: str(tool.name),
    title: str(tool.title),
    description: str(tool.description),
    schema: schemaText(tool.inputSchema),
    aliases: strings(tool.aliases),
    examples: strings(tool.examples),
  };
}

/** The prose of a tool, which glosses apply to; names and aliases are identifiers. */
export function proseOf(texts: FieldTexts): string[] {
  return [texts.title, texts.description, ...texts.schema, ...texts.examples];
}

/** Receives each text's content words (function words dropped, not stemmed) with its field's index. */
export type WordSink = (field: number, words: readonly string[]) => void;

/**
 * Analysed terms of each field of one tool, Chinese prose followed by its
 * English glosses. `sink`, if given, sees the same words before stemming, so
 * the n-gram index reads the text without tokenizing it a second time.
 */
export function fieldTerms(texts: FieldTexts, glossary: Glossary, sink?: WordSink): string[][] {
  const words = (field: number, text: string): string[] => {
    const w = contentWords(text);
    sink?.(field, w);
    return w;
  };
  const prose =
    (field: number) =>
    (text: string): string[] => {
      const terms = stems(words(field, text));
      if (glossary.size > 0) terms.push(...stems(words(field, gloss(text, glossary))));
      return terms;
    };
  const name =
    (field: number) =>
    (text: string): string[] =>
      nameTerms(text, words(field, text));
  return [
    name(0)(texts.name),
    prose(1)(texts.title),
    prose(2)(texts.description),
    texts.schema.flatMap(prose(3)),
    texts.aliases.flatMap(name(4)),
    texts.examples.flatMap(prose(5)),
  ];
}
