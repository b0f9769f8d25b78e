/**
 * What a turn cost, in words, from what the agent reported (ACP `usage_update`, relayed by our
 * coordinator as the final event's `usage`): the cost and the context window in use. Nothing
 * where the agent reported nothing — no "$0.00" made up.
 */
import type { TurnUsage } from '../../wire/contract.js';

/** What the turn used and cost: "$0.0123 · context 42k of 200k tokens"; undefined where nothing was reported. */
export function usageLine(usage: TurnUsage | undefined): string | undefined {
  if (!usage) return undefined;
  const parts: string[] = [];
  if (usage.currency) parts.push(money(usage.cost, usage.currency));
  if (usage.context_size > 0) parts.push(`context ${tokens(usage.context_used)} of ${tokens(usage.context_size)} tokens`);
  return parts.length ? parts.join(' · ') : undefined;
}

function money(amount: number, currency: string): string {
  // Small amounts keep four decimals: a turn often costs less than a cent.
  const digits = amount < 1 ? 4 : 2;
  return currency === 'USD' ? `$${amount.toFixed(digits)}` : `${amount.toFixed(digits)} ${currency}`;
}

function tokens(count: number): string {
  return count >= 1000 ? `${Math.round(count / 1000)}k` : String(count);
}
