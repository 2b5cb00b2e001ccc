/**
 * Starts a run a caller is about to reply for: once the promise chains of the current turn of
 * the event loop have run (the caller's reply, written synchronously at the end of its chain,
 * among them), and before the loop reads more I/O. `setImmediate` would also come after the
 * reply, but when the caller itself runs in an immediate (the SQLite store commits in one) it
 * waits a whole loop iteration, in which requests that arrived meanwhile (the client's listen
 * request for this very task) are handled first and the tool starts late.
 */
export function startAfterReply(start: () => void): void {
  process.nextTick(start);
}
