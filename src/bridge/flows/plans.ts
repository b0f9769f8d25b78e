/**
 * The agent's plan and its thinking, as the editor shows them: the plan as a progress line (its
 * step in progress, the share done) and as a checklist in the answer document; the thinking as a
 * collapsed section there — apart from the answer, never in its words (hover, messages and the
 * conversation's history carry the answer alone). Both are the agent's words: made inert, and
 * the thinking kept to its last `MAX_THINKING_CHARS`, however long it thought.
 */
import type { PlanEntry } from '../../wire/contract.js';
import { inert, lastLine, oneLine } from '../../text.js';

export type PlanStep = Pick<PlanEntry, 'content' | 'status'>;

/** How much of a turn's thinking is kept (its end: what led to the answer). */
export const MAX_THINKING_CHARS = 16_000;

/** A plan's entries as the bridge keeps them: the agent's words on one line each, made inert. */
export function planSteps(entries: readonly PlanEntry[]): PlanStep[] {
  return entries.map((entry) => ({ content: oneLine(inert(entry.content), 200), status: entry.status }));
}

const doneCount = (plan: readonly PlanStep[]) => plan.filter((step) => step.status === 'completed').length;

/** The share of the plan done, 0–100; undefined for an empty plan. */
export function planPercentage(plan: readonly PlanStep[]): number | undefined {
  return plan.length ? Math.round((doneCount(plan) / plan.length) * 100) : undefined;
}

/** The plan as a progress line: "Step 2 of 3: Change it", or "2 of 3 steps done" between steps. */
export function planLine(plan: readonly PlanStep[]): string {
  const current = plan.findIndex((step) => step.status === 'in_progress');
  if (current >= 0) return `Step ${current + 1} of ${plan.length}: ${plan[current]!.content}`;
  return `${doneCount(plan)} of ${plan.length} steps done`;
}

/** How the plan ended, for the progress's end: "3 of 3 steps". */
export function planSummary(plan: readonly PlanStep[] | undefined): string | undefined {
  return plan?.length ? `${doneCount(plan)} of ${plan.length} steps` : undefined;
}

/** The plan as a checklist for the answer document. */
export function planSection(plan: readonly PlanStep[] | undefined): string {
  if (!plan?.length) return '';
  const item = (step: PlanStep) => (step.status === 'completed' ? `- [x] ${step.content}` : `- [ ] ${step.content}${step.status === 'in_progress' ? ' *(in progress)*' : ''}`);
  return `\n**Plan** — ${planSummary(plan)} done\n\n${plan.map(item).join('\n')}\n`;
}

/** The thinking, folded (a `<details>` section: collapsed where markdown is rendered, quoted where it is read as text). */
export function thinkingSection(thinking: string | undefined): string {
  const text = thinking?.trim();
  if (!text) return '';
  // Its words cannot close the section early, nor open markup of their own.
  const quoted = inert(text)
    .replace(/<(?=[A-Za-z/!?])/g, '&lt;')
    .split('\n')
    .map((line) => (line ? `> ${line}` : '>'))
    .join('\n');
  return `\n<details>\n<summary>Thinking</summary>\n\n${quoted}\n\n</details>\n`;
}

/** The end of a turn's thinking, as a stream delivers it in pieces: bounded however long it grows. */
export class Thinking {
  private text = '';
  /** Characters of the start left out. */
  private cut = 0;

  push(delta: string): void {
    this.text += delta;
    if (this.text.length > 2 * MAX_THINKING_CHARS) {
      this.cut += this.text.length - MAX_THINKING_CHARS;
      this.text = this.text.slice(-MAX_THINKING_CHARS);
    }
  }

  /** What was kept; undefined when the agent did not think aloud. */
  get kept(): string | undefined {
    if (!this.text.trim()) return undefined;
    const text = this.text.length > MAX_THINKING_CHARS ? this.text.slice(-MAX_THINKING_CHARS) : this.text;
    const cut = this.cut + this.text.length - text.length;
    return cut ? `(${cut.toLocaleString('en')} characters of thinking before this left out)\n\n${text.toWellFormed()}` : text;
  }
}

/** The document's notes on a turn besides its answer: its plan, its thinking (undefined: none). */
export function turnNotes(turn: { plan?: readonly PlanStep[]; thinking?: string }): string | undefined {
  return planSection(turn.plan) + thinkingSection(turn.thinking) || undefined;
}

/** A progress's end: "Answered (3 of 3 steps · $0.0123 · context 42k of 200k tokens)". */
export function endLine(verb: string, plan: readonly PlanStep[] | undefined, used: string | undefined): string {
  const said = [planSummary(plan), used].filter(Boolean);
  return said.length ? `${verb} (${said.join(' · ')})` : verb;
}

/**
 * What a turn's event shows as progress besides its tool calls: its plan (the line, the share
 * done), else the end of its thinking ("Thinking: …").
 */
export class TurnSteps {
  private thought = '';

  /** The progress line and percentage an event brings; undefined when it brings neither. */
  of(event: { plan?: { entries: PlanEntry[] } | null; thought_delta: string }): { line: string; percentage?: number } | undefined {
    if (event.plan) {
      const plan = planSteps(event.plan.entries);
      return { line: planLine(plan), percentage: planPercentage(plan) };
    }
    if (!event.thought_delta) return undefined;
    this.thought = (this.thought + event.thought_delta).slice(-1024);
    return { line: `Thinking: ${lastLine(inert(this.thought), 80)}` };
  }
}
