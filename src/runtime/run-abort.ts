/**
 * A run's abort switch. Its `AbortSignal` is made only when something reads `signal` (most
 * handlers never do, and an AbortController with its signal is a per-run allocation the create
 * path paid for nothing). Aborting before that records the reason; the signal made later is
 * already aborted with it, so a handler that looks late still sees the cancellation.
 */
export class RunAbort {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  /** As `AbortController.abort`: the first reason stays, later calls do nothing. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
