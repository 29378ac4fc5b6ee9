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
import { makeRunTempDirSync } from './temp-dirs.js';

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
    this.spawns = spawnsProcesses(scenario);
    this.effects = hasToolEffects(scenario);
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

/** Whether a step crashes or runs sessions concurrently (its cells need agent processes), whether on the shelf or not. */
export const spawnsProcesses = (scenario: PlannedScenario): boolean =>
  isShelved(scenario)
    ? scenario.spawns
    : scenario.steps.some((step) => step.kind === 'crash' || step.kind === 'concurrent');

/** Whether a tool step has an effect (the idempotency contrast replays such a scenario twice), whether on the shelf or not. */
export const hasToolEffects = (scenario: PlannedScenario): boolean =>
  isShelved(scenario) ? scenario.effects : scenario.steps.some((step) => step.kind === 'tool' && step.effect);

/** The scenario of a plan's cell, loaded from the shelf when it is there. */
export const loadScenario = (scenario: PlannedScenario): Scenario => (isShelved(scenario) ? scenario.load() : scenario);

/** One run's shelf: an append-only file of serialized scenarios, made at its first scenario. */
export class ScenarioShelf {
  private size = 0;
  private last: { shelved: ShelvedScenario; scenario: Scenario } | undefined;
  private opened: { dir: string; file: string; fd: number | undefined } | undefined;
  private closed = false;

  /**
   * Removes the shelf if the process exits before the run closes it (a second Ctrl-C exits at
   * once): a file of LongMemEval_M's size is gigabytes, not to be left to the next run to reclaim.
   */
  private readonly onExit = (): void => {
    if (this.opened) rmSync(this.opened.dir, { recursive: true, force: true });
  };

  /** Whether a scenario was shelved (its file made). */
  get used(): boolean {
    return this.opened !== undefined;
  }

  /** Shelves `scenario` (`cost`: its estimatedCost) and returns what stands for it. */
  put(scenario: Scenario, cost: number): ShelvedScenario {
    const bytes = serialize(scenario);
    const { fd, file } = this.open();
    try {
      let written = 0;
      while (written < bytes.length)
        written += writeSync(fd, bytes, written, bytes.length - written, this.size + written);
    } catch (error) {
      throw shelfError(error, file);
    }
    const shelved = new ShelvedScenario(this, this.size, bytes.length, scenario, cost);
    this.size += bytes.length;
    return shelved;
  }

  read(offset: number, length: number): Buffer {
    const { fd, file } = this.open();
    const bytes = Buffer.allocUnsafe(length);
    let read = 0;
    while (read < length) {
      const got = readSync(fd, bytes, read, length - read, offset + read);
      if (got === 0) throw new Error(`${file}: ended at byte ${offset + read}, before the scenario's ${length} bytes`);
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
    this.closed = true;
    this.last = undefined;
    if (!this.opened) return;
    if (this.opened.fd !== undefined) closeSync(this.opened.fd);
    this.opened.fd = undefined;
    // The exit hook stays until the dir is gone: a second Ctrl-C may exit while it is being removed.
    await rm(this.opened.dir, { recursive: true, force: true });
    process.off('exit', this.onExit);
  }

  /** The shelf's file, made in a run temp dir of its own at the first scenario. */
  private open(): { fd: number; file: string } {
    if (this.closed) throw new Error("the run's scenario shelf is closed");
    if (!this.opened) {
      const dir = makeRunTempDirSync();
      process.once('exit', this.onExit);
      const file = path.join(dir, 'scenarios.bin');
      this.opened = { dir, file, fd: undefined };
      try {
        this.opened.fd = openSync(file, 'w+');
      } catch (error) {
        throw shelfError(error, file);
      }
    }
    return { fd: this.opened.fd!, file: this.opened.file };
  }
}

/** A write the file system refused (a full TMPDIR), in the words of every file-system error, naming the shelf. */
function shelfError(error: unknown, file: string): unknown {
  if (!isFileSystemError(error)) return error;
  error.path ??= file;
  return fileSystemProblem(error) ?? error;
}
