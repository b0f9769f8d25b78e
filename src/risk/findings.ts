/** Risk levels, and the findings that set one: the highest wins, each says why in a few words. */

export type Risk = 'low' | 'medium' | 'high' | 'destructive';
export const RISKS: readonly Risk[] = ['low', 'medium', 'high', 'destructive'];

export function riskAtMost(risk: Risk, limit: Risk | 'none'): boolean {
  return limit !== 'none' && RISKS.indexOf(risk) <= RISKS.indexOf(limit);
}

export function maxRisk(a: Risk, b: Risk): Risk {
  return RISKS.indexOf(a) >= RISKS.indexOf(b) ? a : b;
}

export interface Assessment {
  risk: Risk;
  /** Why, most serious first: "deletes recursively (rm -rf)", "writes /etc/passwd outside the workspace". */
  reasons: string[];
  /** Why the rules cannot see what the call does, when they cannot: it is never approved unasked above `low`. */
  opaque?: string;
}

export class Findings {
  private readonly found = new Map<string, Risk>();
  /** See Assessment.opaque. */
  opaque: string | undefined;

  add(risk: Risk, reason: string): void {
    const before = this.found.get(reason);
    this.found.set(reason, before ? maxRisk(before, risk) : risk);
  }

  merge(other: Findings): void {
    for (const [reason, risk] of other.found) this.add(risk, reason);
  }

  get risk(): Risk {
    let risk: Risk = 'low';
    for (const found of this.found.values()) risk = maxRisk(risk, found);
    return risk;
  }

  result(): Assessment {
    const reasons = [...this.found].sort((a, b) => RISKS.indexOf(b[1]) - RISKS.indexOf(a[1])).map(([reason]) => reason);
    return { risk: this.risk, reasons, ...(this.opaque ? { opaque: this.opaque } : {}) };
  }
}
