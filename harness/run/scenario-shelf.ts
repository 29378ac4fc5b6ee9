/**
 * A dataset's imported questions, set aside on disk as they are imported: the membench process
 * keeps of each only what planning, the pool and the digest read of it (a ShelvedScenario), and
 * its bytes go to the worker that runs its cells. Held in memory, every question of the run was
 * held before the first cell started: a LongMemEval_M-shaped file (~500 sessions a question, ~9 MB
 * of scenario each) needed several GB for its 500 questions, past Node's heap limit. The shelf is
 * one file under a run temp dir (temp-dirs.ts: a run killed with SIGKILL leaves it to the next run
 * to reclaim), written once and read at each dispatch.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { fileSystemProblem, isFileSystemError } from '../core/errors.js';
import { JsonHash } from '../core/hash.js';
import { contentDigestOf } from '../scenarios/content-digest.js';
import type { Scenario } from '../scenarios/format.js';
import { makeRunTempDir } from './temp-dirs.js';

/** What the membench process keeps of a shelved scenario: its header, the facts planning reads of its steps, where its bytes are. */
export class ShelvedScenario {
  readonly name: string;
  readonly source: string;
  readonly group: string | undefined;
  /** How many steps it has (the results' header says it). */
  readonly stepCount: number;
  /** Whether a step crashes or runs sessions concurrently (the cell then needs agent processes). */
  readonly spawns: boolean;
  /** Whether a tool step has an effect (the idempotency contrast runs such a scenario twice). */
  readonly effects: boolean;
  /** Its cost for ordering the cells (plan.ts estimatedCost), counted before it was shelved. */
  readonly cost: number;
  /** The digest of its content, which the plan's digest feeds in its place. */
  readonly digest: string;

  constructor(
    readonly shelf: ScenarioShelf,
    readonly offset: number,
    readonly length: number,
    scenario: Scenario,
    cost: number,
  ) {
    this.name = scenario.name;
    this.source = scenario.source;
    this.group = scenario.group;
    this.stepCount = scenario.steps.length;
    this.spawns = scenario.steps.some((step) => step.kind === 'crash' || step.kind === 'concurrent');
    this.effects = scenario.steps.some((step) => step.kind === 'tool' && step.effect !== undefined);
    this.cost = cost;
    const { source: _source, ...content } = scenario;
    this.digest = contentDigestOf(scenario) ?? new JsonHash(createHash('sha256')).json(content).flush().digest('hex');
  }

  /** Its bytes as the shelf holds them (v8.serialize of the Scenario): what a pool worker is sent. */
  bytes(): Buffer {
    return this.shelf.read(this.offset, this.length);
  }

  /** The scenario itself (the last one loaded is kept: a scenario's cells run one after another). */
  load(): Scenario {
    return this.shelf.load(this);
  }
}

/** A scenario of a run's plan: in memory, or on the shelf. */
export type PlannedScenario = Scenario | ShelvedScenario;

export const isShelved = (scenario: PlannedScenario): scenario is ShelvedScenario =>
  scenario instanceof ShelvedScenario;

/** The scenario of a plan's cell, loaded from the shelf when it is there. */
export const loadScenario = (scenario: PlannedScenario): Scenario => (isShelved(scenario) ? scenario.load() : scenario);

/** One run's shelf: an append-only file of serialized scenarios. */
export class ScenarioShelf {
  private size = 0;
  private last: { shelved: ShelvedScenario; scenario: Scenario } | undefined;

  /**
   * Removes the shelf if the process exits before the run closes it (a second Ctrl-C exits at
   * once): a file of LongMemEval_M's size is gigabytes, not to be left to the next run to reclaim.
   */
  private readonly onExit = (): void => rmSync(this.dir, { recursive: true, force: true });

  private constructor(
    private readonly dir: string,
    private readonly file: string,
    private fd: number | undefined,
  ) {
    process.once('exit', this.onExit);
  }

  /** A fresh shelf in a run temp dir of its own. */
  static async open(): Promise<ScenarioShelf> {
    const dir = await makeRunTempDir(false);
    const file = path.join(dir, 'scenarios.bin');
    return new ScenarioShelf(dir, file, openSync(file, 'w+'));
  }

  /** Shelves `scenario` (`cost`: its estimatedCost) and returns what stands for it. */
  put(scenario: Scenario, cost: number): ShelvedScenario {
    const bytes = serialize(scenario);
    try {
      let written = 0;
      while (written < bytes.length)
        written += writeSync(this.openFd(), bytes, written, bytes.length - written, this.size + written);
    } catch (error) {
      throw shelfError(error, this.file);
    }
    const shelved = new ShelvedScenario(this, this.size, bytes.length, scenario, cost);
    this.size += bytes.length;
    return shelved;
  }

  read(offset: number, length: number): Buffer {
    const bytes = Buffer.allocUnsafe(length);
    let read = 0;
    while (read < length) {
      const got = readSync(this.openFd(), bytes, read, length - read, offset + read);
      if (got === 0)
        throw new Error(`${this.file}: ended at byte ${offset + read}, before the scenario's ${length} bytes`);
      read += got;
    }
    return bytes;
  }

  load(shelved: ShelvedScenario): Scenario {
    if (this.last?.shelved !== shelved) this.last = { shelved, scenario: deserialize(shelved.bytes()) as Scenario };
    return this.last.scenario;
  }

  /** Removes the shelf (and its dir); a shelved scenario can no longer be read. */
  async close(): Promise<void> {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.last = undefined;
    // The exit hook stays until the dir is gone: a second Ctrl-C may exit while it is being removed.
    await rm(this.dir, { recursive: true, force: true });
    process.off('exit', this.onExit);
  }

  private openFd(): number {
    if (this.fd === undefined) throw new Error(`${this.file}: the run's scenario shelf is closed`);
    return this.fd;
  }
}

/** A write the file system refused (a full TMPDIR), in the words of every file-system error, naming the shelf. */
function shelfError(error: unknown, file: string): unknown {
  if (!isFileSystemError(error)) return error;
  error.path ??= file;
  return fileSystemProblem(error) ?? error;
}
