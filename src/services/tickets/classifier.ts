import type { Category, KeywordRuleSet } from './rule-sets/keyword-rule-set.js';

export interface Classification {
  category: Category;
  priority: number;
  confidence: number;
  model_version: string;
}

export interface Ticket {
  subject: string;
  body?: string;
}

/** Rounds to 2 decimals (0.7000000000000001 -> 0.7). */
function roundTo2(value: number): number {
  return Math.round(value * 100) / 100;
}

/**
 * The keyword classifier of ticket-classifier.md, "Classification rules":
 * 1. the analysed text is subject + line break + body, matched case-insensitively;
 * 2./3. a category's score is the number of its keywords found (each counted at most once);
 * 4. the highest score wins, ties go to the category listed first;
 * 5. no keyword at all: `other`, priority 3, confidence 0.2;
 * 6. otherwise priority 1 when an urgent phrase occurs, else 2;
 * 7. confidence min(0.5 + 0.2 x score, 0.95), rounded to 2 decimals.
 * A keyword is "found" when it occurs anywhere in the text (substring match), as written in the
 * contract; no word-boundary rule is applied.
 */
export class KeywordClassifier {
  constructor(private readonly rules: KeywordRuleSet) {}

  get modelVersion(): string {
    return this.rules.modelVersion;
  }

  classify(ticket: Ticket): Classification {
    const text = `${ticket.subject}\n${ticket.body ?? ''}`.toLowerCase();
    let winner: Category | undefined;
    let best = 0;
    for (const { category, keywords } of this.rules.keywords) {
      let score = 0;
      for (const keyword of keywords) if (text.includes(keyword)) score += 1;
      if (score > best) {
        best = score;
        winner = category;
      }
    }
    const { priority, confidence } = this.rules;
    if (winner === undefined) {
      return { category: 'other', priority: priority.unmatched, confidence: confidence.unmatched, model_version: this.rules.modelVersion };
    }
    const urgent = this.rules.urgentPhrases.some((phrase) => text.includes(phrase));
    return {
      category: winner,
      priority: urgent ? priority.urgent : priority.matched,
      confidence: roundTo2(Math.min(confidence.base + confidence.perKeyword * best, confidence.max)),
      model_version: this.rules.modelVersion,
    };
  }
}
