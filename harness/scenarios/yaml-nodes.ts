/**
 * What a parsed YAML document holds that membench refuses before turning it into data, walked once
 * in document order: aliases that expand it past a size (a "billion laughs" file), too many anchors
 * and aliases, an alias inside the value it names or with no anchor, and tags beyond YAML's core
 * types (`!!binary`, `!!js/function`, `!foo`), which the yaml package would read as something
 * else than they say, or as a plain string, silently; a key `__proto__`, which no membench
 * file has and which the checks after the parse drop (an object's prototype, not its entry); and a
 * key that is a list or a mapping (or an alias of one), which a JavaScript object cannot hold.
 */
import { isAlias, isCollection, isNode, isPair, isScalar, parseDocument, visit, type Document } from 'yaml';

/**
 * Anchors and aliases a document may hold together. The yaml package looks each alias up among the
 * anchors and aliases before it, so their number squared is its work: ~0.25 s at this limit.
 */
export const MAX_ANCHORS_AND_ALIASES = 5_000;

/** The tags of YAML's core schema: a value tagged so reads as the tag says. */
const CORE_TAGS = new Set(
  ['str', 'int', 'float', 'bool', 'null', 'seq', 'map'].map((name) => `tag:yaml.org,2002:${name}`),
);

const PROTO_KEY =
  'a key "__proto__" is not read here (no membench file has one; JavaScript would take it for the prototype and drop it): rename it';

const COLLECTION_KEY =
  'a key that is a list or a mapping is not read here (every key membench reads is a plain name): write a plain key';

/** Why a value tagged beyond YAML's core types is refused (`!!timestamp`, `!!binary`, `!foo`). */
export function unreadTag(tag: string): string {
  return `the tag ${tag} is not read here (YAML's core types only: strings, numbers, booleans, null, lists, mappings): write the value without it`;
}

export interface YamlNodeProblem {
  /** Said after the file's `invalid YAML: ` or `invalid JSON: ` (load.ts's invalidSyntax). */
  problem: string;
  offset: number;
}

/**
 * The first problem of the document's nodes, or undefined: a tag beyond the core schema, or what
 * its aliases would make of it written out (aliases resolve to the last anchor of their name before
 * them): the first alias that takes the expanded text past `maxChars`, the node past
 * MAX_ANCHORS_AND_ALIASES, an alias inside the value it names, or one with no anchor before it.
 */
export function yamlNodeProblem(doc: Document.Parsed, maxChars: number): YamlNodeProblem | undefined {
  const length = (node: { range?: readonly number[] | null }): number =>
    node.range ? node.range[1]! - node.range[0]! : 0;
  const latest = new Map<string, object>();
  // Characters an anchored value's own aliases add to it, once the walk has left it.
  const growth = new Map<object, number>();
  let marks = 0;
  let expanded = doc.range[2];
  let found: YamlNodeProblem | undefined;
  const tooMany = (offset: number): boolean => {
    if (++marks <= MAX_ANCHORS_AND_ALIASES) return false;
    found = {
      problem: `more than ${MAX_ANCHORS_AND_ALIASES} anchors and aliases (each alias is looked up among all of them): write some values out`,
      offset,
    };
    return true;
  };
  // Characters the aliases inside `node` add to it (0 once a problem is found: the walk stops).
  const walk = (node: unknown): number => {
    if (found) return 0;
    if (isAlias(node)) {
      const offset = node.range?.[0] ?? 0;
      if (tooMany(offset)) return 0;
      const target = latest.get(node.source);
      const inner = target === undefined ? undefined : growth.get(target);
      if (target === undefined || inner === undefined) {
        found = {
          problem:
            target === undefined
              ? `alias *${node.source} names no anchor: set &${node.source} on a value before it`
              : `alias *${node.source} is inside the value it names (&${node.source}): it would repeat without end`,
          offset,
        };
        return 0;
      }
      const added = length(target) + inner - length(node);
      expanded += added;
      if (expanded > maxChars)
        found = {
          problem: `alias *${node.source} expands the document past ${maxChars} characters, the size limit of a file (a YAML alias bomb?)`,
          offset,
        };
      return added;
    }
    if (!isNode(node)) return 0;
    if (node.tag !== undefined && !CORE_TAGS.has(node.tag)) {
      const shown = node.tag.replace(/^tag:yaml\.org,2002:/u, '!!');
      found = {
        problem: unreadTag(shown),
        offset: node.range?.[0] ?? 0,
      };
      return 0;
    }
    if (node.anchor) {
      if (tooMany(node.range?.[0] ?? 0)) return 0;
      latest.set(node.anchor, node);
    }
    let added = 0;
    if (isCollection(node))
      for (const item of node.items) {
        if (isPair(item) && isScalar(item.key) && item.key.value === '__proto__') {
          found = { problem: PROTO_KEY, offset: item.key.range?.[0] ?? 0 };
          return 0;
        }
        // `? [a]`, `{a: 1}: x` or `*list : x`: the yaml package would make it the text "[ a ]" and warn on stderr.
        if (
          isPair(item) &&
          (isCollection(item.key) || (isAlias(item.key) && isCollection(latest.get(item.key.source))))
        ) {
          found = { problem: COLLECTION_KEY, offset: (item.key as { range?: number[] | null }).range?.[0] ?? 0 };
          return 0;
        }
        added += isPair(item) ? walk(item.key) + walk(item.value) : walk(item);
      }
    if (node.anchor) growth.set(node, added);
    return added;
  };
  walk(doc.contents);
  return found;
}

/**
 * The words for a repeated key, from the text (the yaml package's "Map keys must be unique" names
 * neither): the key and the line it was first given on, or undefined when the key is no scalar.
 * `offset` is where the parser found the repeat.
 */
export function repeatedKeyMessage(text: string, offset: number): string | undefined {
  let message: string | undefined;
  visit(parseDocument(text, { uniqueKeys: false }), {
    Map(_, map) {
      const seen = new Map<unknown, number>();
      for (const pair of map.items) {
        if (!isScalar(pair.key) || pair.key.range === undefined || pair.key.range === null) continue;
        const first = seen.get(pair.key.value);
        if (first !== undefined && pair.key.range[0] === offset) {
          const line = text.slice(0, first).split('\n').length;
          message = `the key ${JSON.stringify(pair.key.value)} is given twice in one mapping (first on line ${line}): keep one`;
          return visit.BREAK;
        }
        if (first === undefined) seen.set(pair.key.value, pair.key.range[0]);
      }
      return undefined;
    },
  });
  return message;
}
