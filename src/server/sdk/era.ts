/**
 * The official SDK's server factory names the two wires by era (`ctx.era`); taskrail names them
 * by protocol version. This is the one place the SDK's word is translated.
 */
export type SdkEra = 'legacy' | 'modern';

export function wireOfSdkEra(era: SdkEra): '2026-07-28' | '2025-11-25' {
  return era === 'modern' ? '2026-07-28' : '2025-11-25';
}
