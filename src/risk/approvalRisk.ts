/**
 * An approval a coordinator asks for, judged on our side: its risk is the coordinator's word
 * raised to what the call does as our rules see it (a coordinator's label never lowers it; an
 * unknown label counts as high), and the policy that may decide it without asking. Shared by the
 * language server's approvals and the ACP face's permission requests.
 */
import { assessRisk, highestRisk, riskAtMost, RISKS, type Risk } from './assess.js';

export interface AskedApproval {
  kind: string;
  parameters: Record<string, string>;
  locations: string[];
  title: string;
  /** The coordinator's label, and its reason. */
  risk: string;
  reason: string;
}

export interface JudgedApproval {
  risk: Risk;
  reason: string;
  /** Why its effect cannot be seen from what it is called (a command whose words hide what it runs). */
  opaque?: string;
}

export function judgeApproval(approval: AskedApproval, workspaceRoot: string | undefined): JudgedApproval {
  const own = assessRisk({ kind: approval.kind || 'other', input: approval.parameters, locations: approval.locations, title: approval.title }, { workspaceRoot });
  const label = (RISKS as readonly string[]).includes(approval.risk) ? (approval.risk as Risk) : 'high';
  const risk = highestRisk(label, own.risk);
  const reason = risk === label && approval.reason ? approval.reason : own.reasons.join('; ');
  return { risk, reason, ...(own.opaque ? { opaque: own.opaque } : {}) };
}

/**
 * Whether `approvals.autoApprove` allows it without asking: within its risk, never destructive,
 * and never above low for a call whose effect the rules cannot see.
 */
export function allowedByPolicy(judged: Pick<JudgedApproval, 'risk' | 'opaque'>, autoApprove: Risk | 'none'): boolean {
  if (judged.risk === 'destructive') return false;
  if (judged.opaque && judged.risk !== 'low') return false;
  return riskAtMost(judged.risk, autoApprove);
}

/** Of two `approvals.autoApprove` levels, the one that allows less. */
export function narrowerPolicy(a: Risk | 'none', b: Risk | 'none'): Risk | 'none' {
  if (a === 'none' || b === 'none') return 'none';
  return riskAtMost(a, b) ? a : b;
}
