/**
 * The texts a task keeps beside its record, each read in slices: what the handler printed while
 * it ran (`ctx.output`), and the whole text or structured JSON of a result too big to hand out.
 */
export type TaskTextKind = 'output' | 'result' | 'structured';
