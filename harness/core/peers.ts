/** The peer adapters (strategies/adapters/) by CLI name, here so reports can say what is true of them without importing strategies. */
export const PEER_NAMES = ['mem0', 'langgraph'] as const;
export type PeerName = (typeof PEER_NAMES)[number];

/** What a report says of the peers it ran: where crashes land, and what of their figures the offline stand-in makes. */
export function peerNote(strategies: readonly string[]): string | undefined {
  const ran = PEER_NAMES.filter((name) => strategies.includes(name));
  if (ran.length === 0) return undefined;
  const facts =
    ran.includes('mem0') &&
    " Offline, what mem0 stores are the facts the stand-in extracts from mem0's own requests (answered at a local endpoint), as for summary and entity.";
  return `peers (${ran.join(', ')}): the libraries run unpatched; SIGKILL lands at the harness's crash points only (their internals have none).${facts || ''}`;
}
