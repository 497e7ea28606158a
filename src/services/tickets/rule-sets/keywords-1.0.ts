import type { KeywordRuleSet } from './keyword-rule-set.js';

/** ticket-classifier.md, "Classification rules". */
export const KEYWORDS_1_0: KeywordRuleSet = {
  modelVersion: 'keywords-1.0',
  keywords: [
    { category: 'billing', keywords: ['invoice', 'charged', 'refund', 'payment'] },
    { category: 'login', keywords: ['password', 'sign in', 'log in', 'two-factor', 'locked out'] },
    { category: 'shipping', keywords: ['parcel', 'delivery', 'courier', 'tracking'] },
    { category: 'account', keywords: ['account', 'company name', 'user'] },
  ],
  urgentPhrases: ['cannot', 'locked out', 'charged twice', 'lost'],
  priority: { urgent: 1, matched: 2, unmatched: 3 },
  confidence: { base: 0.5, perKeyword: 0.2, max: 0.95, unmatched: 0.2 },
};
