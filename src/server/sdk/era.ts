import { WIRE_2025_VERSION, WIRE_2026_VERSION } from '../../protocol/constants.js';
/**
 * The official SDK's server factory names the two wires by era (`ctx.era`); taskrail names them
 * by protocol version. This is the one place the SDK's word is translated.
 */
export type SdkEra = 'legacy' | 'modern';

export function wireOfSdkEra(era: SdkEra): typeof WIRE_2026_VERSION | typeof WIRE_2025_VERSION {
  return era === 'modern' ? WIRE_2026_VERSION : WIRE_2025_VERSION;
}
