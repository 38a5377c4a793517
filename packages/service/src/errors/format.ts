/**
 * How amounts are written in messages. Here, below everything else, because the error catalogue
 * writes them and every layer raises errors; src/plan re-exports them for its own answers.
 */

/** Lamports as SOL, exact (9 decimals at most, trailing zeros dropped): 2039280n → "0.00203928". */
export function formatSol(lamports: bigint): string {
  const negative = lamports < 0n;
  const abs = negative ? -lamports : lamports;
  const whole = abs / 1_000_000_000n;
  const fraction = (abs % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** The signed net as the message says it: "+0.00103428" or "−0.00797" (a true minus sign). */
export function formatNetSol(netLamports: bigint): string {
  return netLamports < 0n ? `−${formatSol(-netLamports)}` : `+${formatSol(netLamports)}`;
}
