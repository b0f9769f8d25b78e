/**
 * What a turn cost, in words, from what the agent reported (ACP `usage_update`, and the tokens
 * of its answer to session/prompt, relayed by our coordinator as the final event's `usage`): the
 * cost, the tokens read and written, and the context window in use. Nothing
 * where the agent reported nothing — no "$0.00" made up.
 */
import type { TurnUsage } from '../../wire/contract.js';

/** What the turn used and cost: "$0.0123 · 12k tokens in, 800 out · context 42k of 200k tokens"; undefined where nothing was reported. */
export function usageLine(usage: TurnUsage | undefined): string | undefined {
  if (!usage) return undefined;
  const parts: string[] = [];
  if (usage.currency) parts.push(money(usage.cost, usage.currency));
  if (usage.input_tokens > 0 || usage.output_tokens > 0) parts.push(tokensInOut(usage.input_tokens, usage.output_tokens));
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

function tokensInOut(input: number, output: number): string {
  return `${tokens(input)} tokens in, ${tokens(output)} out`;
}

/**
 * What the turns used and cost while this server runs (`buckley/status`), in all and per
 * conversation: costs summed per currency, the context window as the latest turn left it.
 */
export class UsageTally {
  private readonly session = new Tally();
  private readonly conversations = new Map<string, Tally>();

  add(usage: TurnUsage | undefined, conversation: string): void {
    if (!usage) return;
    this.session.add(usage);
    let tally = this.conversations.get(conversation);
    if (!tally) this.conversations.set(conversation, (tally = new Tally()));
    tally.add(usage);
  }

  /** "$0.0246 over 2 turns · context 42k of 200k tokens"; undefined where no turn reported any. */
  ofSession(): string | undefined {
    return this.session.line();
  }

  ofConversation(conversation: string): string | undefined {
    return this.conversations.get(conversation)?.line();
  }
}

class Tally {
  private turns = 0;
  private readonly costs = new Map<string, number>();
  private context: TurnUsage | undefined;
  private input = 0;
  private output = 0;

  add(usage: TurnUsage): void {
    this.turns++;
    this.input += usage.input_tokens;
    this.output += usage.output_tokens;
    if (usage.currency) this.costs.set(usage.currency, (this.costs.get(usage.currency) ?? 0) + usage.cost);
    if (usage.context_size > 0) this.context = usage;
  }

  line(): string | undefined {
    if (this.turns === 0) return undefined;
    const turns = `${this.turns} turn${this.turns === 1 ? '' : 's'}`;
    const costs = [...this.costs].map(([currency, amount]) => money(amount, currency));
    const spent = costs.length ? `${costs.join(' + ')} over ${turns}` : turns;
    const used = this.input > 0 || this.output > 0 ? tokensInOut(this.input, this.output) : undefined;
    const context = this.context ? usageLine({ ...this.context, currency: '', input_tokens: 0, output_tokens: 0 }) : undefined;
    return [spent, used, context].filter(Boolean).join(' · ');
  }
}
