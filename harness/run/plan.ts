/**
 * Planning a run: scenarios × strategies × parameter sets × trials (and the durability modes
 * priced, the idempotency contrast), every input validated before the first cell runs; each
 * cell's seed; the digest a resumed run or a shard must match; the cost order of cells.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { needsProcesses, type CellPlan, type ProviderSettings } from './cell.js';
import { expandFillers, stretchScenario } from '../scenarios/filler.js';
import {
  formatImportReport,
  importDataset,
  QuestionFilter,
  unimportedQuestion,
  type ErrataReport,
  type ImportReport,
} from '../scenarios/importers/index.js';
import { builtinScenarioNames, loadScenarios } from '../scenarios/builtins.js';
import { MembenchError } from '../core/errors.js';
import { MEMBENCH_VERSION } from '../core/package-info.js';
import { checkRunOptions } from './limits.js';
import { expandStrategies, type StrategySetting } from './params.js';
import { PROTOCOL_KNOBS } from '../results/protocols.js';
import { importSummary } from '../results/import-summary.js';
import { cellId, type ImportSummary } from '../results/schema.js';
import {
  checkProtocolDatasets,
  checkProtocolOption,
  checkProtocolParams,
  checkProtocolScenarios,
  noRetrieverWarning,
} from './protocol-fit.js';
import type { Scenario } from '../scenarios/format.js';
import { encodingForModel, knownTokenizerModel } from '../core/tokens.js';
import { builtinStrategies } from '../../strategies/index.js';
import { isModuleSource, loadStrategyDefinition, moduleFile } from '../../strategies/loader.js';
import { DURABILITY_MODES, type StrategyDefinition } from '../../strategies/types.js';
import { fnv1aCodePoints, JsonHash } from '../core/hash.js';
import { contentDigestOf } from '../scenarios/content-digest.js';
import type { RunOptions } from './options.js';
import { DEFAULT_SEED, SETTINGS } from './settings.js';
import { hasToolEffects, isShelved, loadScenario, ScenarioShelf, type PlannedScenario } from './scenario-shelf.js';
import { RunInterrupted } from './pool.js';

/** Where the default run prices the durability modes: a crash after every acknowledged memory (the sync-or-async question). */
export const DEFAULT_PRICED_SCENARIOS: readonly string[] = ['remember-then-crash'];

/** The strategy that runs the with / without idempotency keys contrast under `--idempotency one` (the default), when the run has it. */
export const CONTRAST_STRATEGY = 'buffer';

/** FNV-1a of the run seed and the cell id: each cell's seed, stable across runs and orderings. */
export function cellSeed(seed: number, cellId: string): number {
  return fnv1aCodePoints(cellId, seed);
}

/**
 * Built-in names resolve through the registry; module paths and `langchain:NAME` through the
 * strategy loader. Returns each definition with the source an agent process reloads it from.
 */
async function selectStrategies(
  names: readonly string[] | undefined,
  cwd: string,
): Promise<{ definitions: StrategyDefinition[]; sources: Map<string, string> }> {
  if (!names || names.length === 0) return { definitions: [...builtinStrategies], sources: new Map() };
  const definitions: StrategyDefinition[] = [];
  const sources = new Map<string, string>();
  for (const name of names) {
    const definition = await loadStrategyDefinition(name, { cwd });
    if (definitions.includes(definition)) continue; // the same built-in named twice
    if (definitions.some((item) => item.name === definition.name)) {
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `--strategy ${name}: another selected strategy is already named "${definition.name}"`,
      );
    }
    definitions.push(definition);
    sources.set(definition.name, isModuleSource(name) ? moduleFile(name, cwd) : name);
  }
  return { definitions, sources };
}

/**
 * Scenario names become cell ids, so two sources under one name would give two cells one id (and
 * `compare` would match the wrong ones): refused, naming both. The same file named twice runs once.
 */
/** The file a scenario came from, however the path was written (`a.yaml`, `./a.yaml`); `builtin:NAME` as it is. */
const sourceKey = (scenario: PlannedScenario): string =>
  scenario.source.startsWith('builtin:') ? scenario.source : path.resolve(scenario.source);

function uniqueScenarios(scenarios: readonly PlannedScenario[]): PlannedScenario[] {
  const byName = new Map<string, PlannedScenario>();
  for (const scenario of scenarios) {
    const first = byName.get(scenario.name);
    if (!first) byName.set(scenario.name, scenario);
    else if (sourceKey(first) !== sourceKey(scenario)) {
      throw new MembenchError(
        'INVALID_SCENARIO',
        `two scenarios are named "${scenario.name}": ${first.source} and ${scenario.source}; cell ids would collide: rename one (its \`name:\` key)`,
      );
    }
  }
  return [...byName.values()];
}

/** The `S.KNOB=V` params a protocol sets: on each strategy whose options take the knob, unless the user's params set it (checked by checkProtocolParams). */
function protocolParams(
  definitions: readonly StrategyDefinition[],
  options: Pick<RunOptions, 'protocol' | 'params'>,
): string[] {
  if (options.protocol === undefined) return [];
  return definitions.flatMap((definition) =>
    Object.entries(PROTOCOL_KNOBS[options.protocol!])
      .filter(
        ([knob, values]) =>
          values.split(',').every((value) => definition.options.safeParse({ [knob]: value }).success) &&
          !(options.params ?? []).some((flag) => flag.startsWith(`${definition.name}.${knob}=`)),
      )
      .map(([knob, value]) => `${definition.name}.${knob}=${value}`),
  );
}

/** A planned cell: its scenario in memory, or on the run's shelf (a dataset's question) until the cell is dispatched. */
export interface PlannedCell extends Omit<CellPlan, 'scenario'> {
  scenario: PlannedScenario;
}

/** The cell `runCell` replays: the planned cell with its scenario loaded from the shelf when it is there. */
export function loadedCell(plan: PlannedCell): CellPlan {
  return { ...plan, scenario: loadScenario(plan.scenario) };
}

/** The run's plan: its cells, its scenarios, and the shelf holding its datasets' questions (the caller closes it). */
export interface RunPlan {
  plans: PlannedCell[];
  scenarios: PlannedScenario[];
  strategies: StrategySetting[];
  errata: ErrataReport[];
  imports: ImportSummary[];
  shelf?: ScenarioShelf;
}

/** A scenario file of more steps than this is shelved as it is loaded (a question of LongMemEval_M's size has ~5,000; of _S's, a few hundred). */
export const SHELVED_FILE_STEPS = 2000;

/**
 * Validates everything (scenarios, strategies, params) before the first cell runs. A dataset's
 * questions are shelved on disk as they are imported, and so is a large scenario file as it is
 * loaded (scenario-shelf.ts): the caller closes the plan's shelf once the run is over; a plan that
 * fails closes its own.
 */
export async function planRun(options: RunOptions): Promise<RunPlan> {
  const shelf = new ScenarioShelf();
  try {
    const plan = await planCells(options, shelf);
    return shelf.used ? { ...plan, shelf } : plan;
  } catch (error) {
    await shelf.close();
    throw error;
  }
}

async function planCells(options: RunOptions, shelf: ScenarioShelf): Promise<Omit<RunPlan, 'shelf'>> {
  checkRunOptions(options);
  checkProtocolOption(options.protocol);
  if (options.protocolFull && options.protocol === undefined)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      "--protocol-full: only with --protocol (it runs the protocol's ranking cells whole instead of ranking only): add --protocol longmemeval or locomo, or drop --protocol-full",
    );
  const { definitions, sources } = await selectStrategies(options.strategies, options.cwd ?? process.cwd());
  if (options.protocol !== undefined) {
    checkProtocolParams(options.protocol, options.params ?? []);
    checkProtocolDatasets(options.protocol, options.datasets ?? []);
    const warning = noRetrieverWarning(options.protocol, definitions);
    if (warning) options.onWarning?.(warning);
  }
  const durabilityParams = (options.durabilities ?? []).length
    ? definitions
        .filter(
          (definition) => !(options.params ?? []).some((flag) => flag.startsWith(`${definition.name}.durability=`)),
        )
        .map((definition) => `${definition.name}.durability=${options.durabilities!.join(',')}`)
    : [];
  const settings = expandStrategies(
    definitions,
    [...(options.params ?? []), ...durabilityParams, ...protocolParams(definitions, options)],
    sources,
  );
  const userChoseModes =
    (options.durabilities ?? []).length > 0 || (options.params ?? []).some((flag) => /\.durability=/u.test(flag));
  const priced = new Set(
    options.priceDurability ?? (options.scenarios?.length || userChoseModes ? [] : DEFAULT_PRICED_SCENARIOS),
  );
  // Each strategy in every mode but its own, for the priced scenarios only.
  const priceSettings = priced.size
    ? expandStrategies(
        definitions,
        [
          ...(options.params ?? []),
          ...definitions.flatMap((definition) => {
            const others = (definition.durabilityModes ?? DURABILITY_MODES).filter(
              (mode) => mode !== definition.defaultDurability,
            );
            return others.length > 0 ? [`${definition.name}.durability=${others.join(',')}`] : [];
          }),
        ],
        sources,
      )
    : [];
  const seed = options.seed ?? DEFAULT_SEED;
  // Filler follows the run seed, so every strategy and trial sees the same conversation.
  const prepare = (scenario: Scenario): Scenario =>
    expandFillers(options.stretch ? stretchScenario(scenario, options.stretch) : scenario, seed);
  const shelve = (scenario: Scenario): PlannedScenario => {
    // Ctrl-C while a large file is imported stops the import, not only the cells after it.
    if (options.signal?.aborted) throw new RunInterrupted();
    const prepared = prepare(scenario);
    return shelf.put(prepared, estimatedCost(prepared));
  };
  const named = options.scenarios?.length ? options.scenarios : options.datasets?.length ? [] : builtinScenarioNames();
  // The files the user names are read one at a time, a large one shelved as it comes; the default run's in memory.
  const { scenarios: loaded, warnings } = await loadScenarios<PlannedScenario>(
    named,
    options.scenarios?.length
      ? { keep: (scenario) => (scenario.steps.length > SHELVED_FILE_STEPS ? shelve(scenario) : scenario) }
      : {},
  );
  // With no scenario named, long conversations (tagged `long`) stay out of the default run.
  const selected: PlannedScenario[] = options.scenarios?.length
    ? loaded
    : loaded.filter((scenario) => isShelved(scenario) || !scenario.tags?.includes('long'));
  // errata, questionPrompts, questions and the limit without a dataset: refused by checkRunOptions (datasetOnly).
  const errata: ErrataReport[] = [];
  const imports: ImportSummary[] = [];
  const reports: ImportReport[] = [];
  const questions = options.questions?.length ? new QuestionFilter(options.questions) : undefined;
  for (const arg of options.datasets ?? []) {
    const { scenarios: imported, report } = await importDataset(arg, {
      ...(questions ? { only: questions } : {}),
      limit: options.datasetLimit,
      ...(options.errata !== undefined ? { errata: options.errata } : {}),
      ...(options.questionPrompts !== undefined ? { questionPrompts: options.questionPrompts } : {}),
      // LoCoMo's protocol also retrieves over the file's observations and session summaries.
      ...(options.protocol === 'locomo' ? { documents: true } : {}),
      ...(options.onProgress
        ? {
            onRead: (read: number, total: number) => options.onProgress!({ type: 'import', dataset: arg, read, total }),
          }
        : {}),
      keep: shelve,
    });
    // An erratum naming no question (a typo in its id) is said even when the import needed no repair.
    if (report.repaired.length + report.skipped.length + (report.errata?.unused ?? 0) > 0)
      options.onWarning?.(formatImportReport(report));
    if (report.errata) errata.push(report.errata);
    imports.push(importSummary(arg, report));
    reports.push(report);
    selected.push(...imported);
  }
  for (const id of questions?.ids ?? []) {
    const why = unimportedQuestion(id, questions!, reports, options.datasetLimit);
    if (why !== undefined) throw new MembenchError('INVALID_ARGUMENT', why);
  }
  for (const warning of warnings) options.onWarning?.(warning);
  const unique = uniqueScenarios(selected);
  if (options.protocol !== undefined) checkProtocolScenarios(options.protocol, unique, options.datasets?.length ?? 0);
  const scenarios = unique.map((scenario) => (isShelved(scenario) ? scenario : prepare(scenario)));
  // A priced scenario that is not in the run would price nothing, silently.
  const unpriced = (options.priceDurability ?? []).filter(
    (name) => !scenarios.some((scenario) => scenario.name === name),
  );
  if (unpriced.length > 0) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--price-durability ${unpriced.join(',')}: not among the run's scenarios (${scenarios.map((scenario) => scenario.name).join(', ')}): select it with -c, or drop it (none turns pricing off)`,
    );
  }
  if (options.tokenizer !== undefined && !knownTokenizerModel(options.tokenizer)) {
    options.onWarning?.(
      `warning: --tokenizer ${options.tokenizer}: not a model whose encoding membench knows: counting with ${encodingForModel(options.tokenizer)} (give a model name such as gpt-4o or gpt-4, or an encoding, o200k_base or cl100k_base)`,
    );
  }
  const trials = options.trials ?? SETTINGS.trials.default;
  const idempotency = options.idempotency ?? SETTINGS.idempotency.default;
  const contrasted = definitions.some((definition) => definition.name === CONTRAST_STRATEGY)
    ? CONTRAST_STRATEGY
    : definitions[0]?.name;
  const keyVariants = (scenario: PlannedScenario, strategy: string): boolean[] => {
    if (idempotency === 'on' || idempotency === 'off') return [idempotency === 'on'];
    if (idempotency === 'one' && strategy !== contrasted) return [true];
    return hasToolEffects(scenario) &&
      needsProcesses(scenario, {
        isolate: options.agentProcesses ?? SETTINGS.isolate.default,
        crashFuzz: options.crashFuzz,
      })
      ? [true, false]
      : [true];
  };
  const plans: PlannedCell[] = [];
  for (const scenario of scenarios) {
    for (const [strategy, pricing] of [
      ...settings.map((item) => [item, false] as const),
      ...(priced.has(scenario.name) ? priceSettings.map((item) => [item, true] as const) : []),
    ]) {
      for (let trial = 0; trial < trials; trial++) {
        const definition = definitions.find((item) => item.name === strategy.name)!;
        for (const idempotencyKeys of keyVariants(scenario, strategy.name)) {
          const id = cellId({ scenario: scenario.name, setting: strategy.setting, idempotencyKeys, trial }, trials);
          plans.push({
            id,
            scenario,
            strategy,
            definition,
            idempotencyKeys,
            trial,
            seed: cellSeed(seed, id),
            ...(pricing ? { pricing: true } : {}),
          });
        }
      }
    }
  }
  return { plans, scenarios, strategies: settings, errata, imports };
}

/** What the matrix's results depend on, hashed: a resumed run or a shard must see the same digest. */
export function planDigest(
  plans: readonly Pick<PlannedCell, 'id' | 'scenario' | 'strategy' | 'idempotencyKeys' | 'trial' | 'seed'>[],
  scenarios: readonly PlannedScenario[],
  settings: ProviderSettings,
): string {
  const head = {
    membench: MEMBENCH_VERSION,
    providers: [
      settings.modelProvider,
      settings.embedderProvider,
      settings.tokenizerModel,
      settings.crashFuzz ?? 0,
      settings.isolate,
      settings.retrievalK,
      ...(settings.protocol ? [settings.protocol] : []),
      ...(settings.protocolFull ? ['protocol-full'] : []),
    ],
  };
  const cells = plans.map((plan) => [
    plan.id,
    plan.scenario.name,
    plan.strategy.name,
    plan.strategy.options,
    plan.strategy.durability,
    plan.idempotencyKeys,
    plan.trial,
    plan.seed,
  ]);
  // The hash of JSON.stringify({ ...head, scenarios, cells }), fed value by value (JsonHash): the whole
  // string of 500 LongMemEval_S questions is ~300 MB, and writing each question's JSON costs more than
  // hashing its bytes. An imported question is fed as the digest of the JSON its import already wrote
  // (scenarios/content-digest.ts), not walked again.
  const hash = new JsonHash(createHash('sha256')).text(JSON.stringify(head).slice(0, -1)).text(',"scenarios":[');
  // Scenario content, not where it was read from: a resume from another checkout still matches.
  for (const [index, scenario] of scenarios.entries()) {
    hash.text(index > 0 ? ',' : '');
    const known = isShelved(scenario) ? scenario.digest : contentDigestOf(scenario);
    if (known !== undefined) hash.text(`"${known}"`);
    else if (!isShelved(scenario)) {
      const { source: _source, ...content } = scenario;
      hash.json(content);
    }
  }
  return hash
    .text(`],"cells":${JSON.stringify(cells)}}`)
    .flush()
    .digest('hex')
    .slice(0, 16);
}

/** A step that starts an agent process (a crash, a concurrent session) costs about as much as this many plain steps. */
const PROCESS_STEP_COST = 40;

/**
 * A cell's expected cost, for ordering only: its steps, a process start counting as many. The pool
 * takes the costliest cells first, so no long cell starts last while the other workers sit idle.
 */
export function estimatedCost(scenario: PlannedScenario): number {
  if (isShelved(scenario)) return scenario.cost;
  let cost = 0;
  for (const step of scenario.steps) {
    if (step.kind === 'crash') cost += PROCESS_STEP_COST;
    else if (step.kind === 'concurrent')
      cost += PROCESS_STEP_COST * step.concurrent.length + step.concurrent.flat().length;
    else cost += step.kind === 'filler' ? step.filler : 1;
  }
  return cost;
}

/**
 * Positions in the order the pool takes them: the costliest cell first, then by position. A
 * scenario's cost is counted once (its cells share the scenario object), not at each comparison:
 * sorting a 500-question run's 2,000 cells compares them some 20,000 times.
 */
export function costliestFirst(
  positions: readonly number[],
  plans: readonly (Pick<PlannedCell, 'scenario'> | undefined)[],
): number[] {
  const costs = new Map<PlannedScenario, number>();
  const cost = (position: number): number => {
    const { scenario } = plans[position]!;
    let known = costs.get(scenario);
    if (known === undefined) costs.set(scenario, (known = estimatedCost(scenario)));
    return known;
  };
  const keyed = positions.map((position) => ({ position, cost: cost(position) }));
  return keyed.sort((a, b) => b.cost - a.cost || a.position - b.position).map((item) => item.position);
}
