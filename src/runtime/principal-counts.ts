/** How many slots each principal holds, for fair share's more-than-half rule. */
export class PrincipalCounts {
  readonly #held = new Map<string, number>();

  of(principal: string): number {
    return this.#held.get(principal) ?? 0;
  }

  /** `principal` took a slot. */
  add(principal: string): void {
    this.#held.set(principal, this.of(principal) + 1);
  }

  /** `principal` gave a slot back. */
  remove(principal: string): void {
    const count = this.of(principal) - 1;
    if (count > 0) this.#held.set(principal, count);
    else this.#held.delete(principal);
  }

  /** Principals holding at least one slot. */
  holders(): string[] {
    return [...this.#held.keys()];
  }
}
