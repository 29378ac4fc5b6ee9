/** A test model whose calls can be held in flight, to observe background work and simulate a crash mid-call. */
import { OfflineModel, type ChatModel, type ChatRequest, type ChatResponse } from '../../harness/models/index.js';

/** Holds every call until `release()`: a model call that is still running (or never returns, as in a crash). */
export class GatedModel implements ChatModel {
  readonly id = 'gated-offline';
  readonly offline = true;
  calls = 0;
  private readonly inner = new OfflineModel();
  private readonly waiting: (() => void)[] = [];
  private released = false;

  async chat(request: ChatRequest): Promise<ChatResponse> {
    this.calls++;
    if (!this.released) await new Promise<void>((resolve) => this.waiting.push(resolve));
    return this.inner.chat(request);
  }

  release(): void {
    this.released = true;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}
