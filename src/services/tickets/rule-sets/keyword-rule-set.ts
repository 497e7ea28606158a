/**
 * A keyword rule set is data: a new rule set is a new file with a new `modelVersion`, never a new
 * response shape. The classifier (../classifier.ts) only interprets it.
 */
export const CATEGORIES = ['billing', 'login', 'shipping', 'account', 'other'] as const;
export type Category = (typeof CATEGORIES)[number];
export type MatchedCategory = Exclude<Category, 'other'>;

export interface KeywordRuleSet {
  modelVersion: string;
  /** Keywords per category, in tie-break order (the first listed wins a tie). */
  keywords: ReadonlyArray<{ category: MatchedCategory; keywords: readonly string[] }>;
  /** Phrases that make a matched ticket urgent (priority 1). */
  urgentPhrases: readonly string[];
  priority: { urgent: number; matched: number; unmatched: number };
  /** confidence = min(base + perKeyword x score, max), rounded to 2 decimals; `unmatched` when nothing matched. */
  confidence: { base: number; perKeyword: number; max: number; unmatched: number };
}
