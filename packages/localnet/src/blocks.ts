/**
 * The chain's recent blocks, by slot: what getBlock, getBlockTime, getBlocks and the block-based
 * reads of the chain see. Slots a long warp jumped over have none, like skipped slots.
 */

/** One slot's block: what getBlock, getBlockTime and getBlocks report. */
export interface BlockInfo {
  readonly slot: number;
  readonly parentSlot: number;
  readonly blockhash: string;
  readonly previousBlockhash: string;
  /** Unix seconds. */
  readonly blockTime: number;
  /** Transactions that landed in this slot, in order (the validator's vote among them). */
  readonly signatures: string[];
}

/** How many recent slots keep their block (getBlock, getBlockTime) — about 2 h 13 min of 400 ms slots. */
const MAX_BLOCKS = 20_000;

export class BlockStore {
  /** Insertion order = slot order. */
  private readonly blocks = new Map<number, BlockInfo>();

  /** Keeps a new block (slots only grow), forgetting the oldest beyond MAX_BLOCKS. */
  add(block: BlockInfo): void {
    this.blocks.set(block.slot, block);
    while (this.blocks.size > MAX_BLOCKS) {
      const oldest = this.blocks.keys().next();
      if (oldest.done) break;
      this.blocks.delete(oldest.value);
    }
  }

  get(slot: number): BlockInfo | undefined {
    return this.blocks.get(slot);
  }

  /** The oldest slot whose block is still kept (`fallback` when none is). */
  first(fallback: number): number {
    const first = this.blocks.keys().next();
    return first.done ? fallback : first.value;
  }

  /** The block of `slot`, or of the newest slot before it that has one. */
  atOrBefore(slot: number): BlockInfo | undefined {
    const first = this.first(0);
    for (let s = slot; s >= first; s--) {
      const block = this.blocks.get(s);
      if (block) return block;
    }
    return undefined;
  }

  /** Slots from `start` to `end` (inclusive) that have a block, ascending, at most `limit`. */
  slots(start: number, end: number, limit: number): number[] {
    const slots: number[] = [];
    for (let s = Math.max(start, this.first(end + 1)); s <= end && slots.length < limit; s++) if (this.blocks.has(s)) slots.push(s);
    return slots;
  }
}
