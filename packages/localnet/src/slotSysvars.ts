/**
 * The SlotHashes and SlotHistory sysvars kept as agave's bank keeps them, updated as slots are
 * produced. LiteSVM leaves both as it created them (one made-up entry in SlotHashes), and programs
 * read them: the address lookup table program accepts a table's `recent_slot` only if SlotHashes
 * holds it, and frees a deactivated table once its deactivation slot has left SlotHashes.
 */
import { SlotHistory, type LiteSVM } from 'litesvm';

/** agave's `MAX_ENTRIES` of SlotHashes: the 512 most recent slots that have a block. */
export const SLOT_HASHES_MAX_ENTRIES = 512;

export class SlotSysvars {
  /** Newest first, as the sysvar stores them. */
  private readonly hashes: { slot: bigint; hash: string }[] = [];
  private readonly history: SlotHistory;

  /**
   * `includeTip`: whether the slot being processed is in SlotHashes too. On a validator it is not
   * (bank N holds its ancestors' hashes, and a transaction sent after reading slot N executes in a
   * later bank). A chain that executes a transaction in the very slot the client just read
   * (instant timing) includes it, so that the same client code works there.
   */
  constructor(
    private readonly svm: LiteSVM,
    private readonly includeTip: boolean,
  ) {
    this.history = SlotHistory.default();
  }

  /** Records the new slots (ascending), each with its block's hash, then writes both sysvars. */
  produced(blocks: readonly { slot: number; blockhash: string }[], tip: { slot: number; blockhash: string }): void {
    for (const block of blocks) {
      this.history.add(BigInt(block.slot));
      this.hashes.unshift({ slot: BigInt(block.slot), hash: block.blockhash });
    }
    if (this.hashes.length > SLOT_HASHES_MAX_ENTRIES + 1) this.hashes.length = SLOT_HASHES_MAX_ENTRIES + 1;
    this.history.nextSlot = BigInt(tip.slot + 1);
    const visible = this.hashes[0]?.slot === BigInt(tip.slot) && !this.includeTip ? this.hashes.slice(1) : this.hashes;
    this.svm.setSlotHashes(visible.slice(0, SLOT_HASHES_MAX_ENTRIES));
    this.svm.setSlotHistory(this.history);
  }
}
