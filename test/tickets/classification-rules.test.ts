import { describe, expect, it } from 'vitest';
import { KeywordClassifier } from '../../src/services/tickets/classifier.js';
import { KEYWORDS_1_0 } from '../../src/services/tickets/rule-sets/keywords-1.0.js';
import { startTickets } from './tickets-app.js';
import { appDuringSuite } from '../support/during-suite.js';

/** ticket-classifier.md, "Classification rules", one test per rule. */
describe('classification rules (POST /v1/classify)', () => {
  const app = appDuringSuite(async () => (await startTickets()).app);

  const classify = async (subject: string, body?: string) => {
    const response = await app.inject({ method: 'POST', url: '/v1/classify', payload: body === undefined ? { subject } : { subject, body } });
    expect(response.statusCode).toBe(200);
    return response.json();
  };

  it('rule 1: the text is subject, a line break, then body; matching is case-insensitive', async () => {
    expect(await classify('INVOICE question')).toMatchObject({ category: 'billing' });
    expect(await classify('hello', 'Where is my PARCEL')).toMatchObject({ category: 'shipping' });
    // subject and body are separated by a line break, so a keyword cannot span them
    expect(await classify('please sign', 'in again')).toMatchObject({ category: 'other' });
  });

  it('rule 2: each category has its keywords (every keyword of the table is recognised)', async () => {
    const table: Record<string, string[]> = {
      billing: ['invoice', 'charged', 'refund', 'payment'],
      login: ['password', 'sign in', 'log in', 'two-factor', 'locked out'],
      shipping: ['parcel', 'delivery', 'courier', 'tracking'],
      account: ['account', 'company name', 'user'],
    };
    for (const [category, keywords] of Object.entries(table)) {
      for (const keyword of keywords) {
        expect(await classify(`about ${keyword} here`), keyword).toMatchObject({ category });
      }
    }
  });

  it('rule 2: a keyword is counted at most once per text', async () => {
    // refund three times is one keyword: confidence 0.7, and one login keyword ties and loses to billing
    expect(await classify('refund refund', 'refund')).toEqual({ category: 'billing', priority: 2, confidence: 0.7, model_version: 'keywords-1.0' });
    // two distinct login keywords beat one billing keyword repeated
    expect(await classify('refund refund refund', 'password and sign in')).toMatchObject({ category: 'login', confidence: 0.9 });
  });

  it('rule 3: the score of a category is the number of its keywords found', async () => {
    expect(await classify('invoice payment refund')).toMatchObject({ category: 'billing', confidence: 0.95 });
    expect(await classify('invoice payment')).toMatchObject({ category: 'billing', confidence: 0.9 });
  });

  it('rule 4: the highest score wins', async () => {
    expect(await classify('invoice', 'parcel courier tracking')).toMatchObject({ category: 'shipping' });
  });

  it('rule 4: ties go to the order billing, login, shipping, account', async () => {
    expect(await classify('user account', 'parcel courier')).toMatchObject({ category: 'shipping' });
    expect(await classify('parcel', 'password')).toMatchObject({ category: 'login' });
    expect(await classify('password', 'invoice')).toMatchObject({ category: 'billing' });
    expect(await classify('user', 'delivery')).toMatchObject({ category: 'shipping' });
    expect(await classify('invoice password parcel user')).toMatchObject({ category: 'billing', confidence: 0.7 });
  });

  it('rule 5: when every score is 0 the result is other, priority 3, confidence 0.2', async () => {
    expect(await classify('Hello there', 'I cannot find the button')).toEqual({ category: 'other', priority: 3, confidence: 0.2, model_version: 'keywords-1.0' });
  });

  it('rule 6: priority 1 when the text contains cannot, locked out, charged twice or lost', async () => {
    expect(await classify('I cannot pay the invoice')).toMatchObject({ category: 'billing', priority: 1 });
    expect(await classify('Locked out of my account')).toMatchObject({ priority: 1 });
    expect(await classify('I was CHARGED TWICE')).toMatchObject({ category: 'billing', priority: 1 });
    expect(await classify('My parcel is lost')).toMatchObject({ category: 'shipping', priority: 1 });
  });

  it('rule 6: otherwise priority 2', async () => {
    expect(await classify('Question about my invoice')).toMatchObject({ category: 'billing', priority: 2 });
  });

  it('rule 7: confidence min(0.5 + 0.2 x score, 0.95), rounded to 2 decimals: one keyword 0.7, two 0.9, more 0.95', async () => {
    expect((await classify('invoice')).confidence).toBe(0.7);
    expect((await classify('invoice refund')).confidence).toBe(0.9);
    expect((await classify('invoice refund payment')).confidence).toBe(0.95);
    expect((await classify('invoice refund payment charged')).confidence).toBe(0.95);
  });

  it('rule 8: model_version is keywords-1.0', async () => {
    expect((await classify('invoice')).model_version).toBe('keywords-1.0');
    expect((await classify('nothing')).model_version).toBe('keywords-1.0');
  });

  it('the same text always gives the same result (the service stores nothing)', async () => {
    const first = await classify('Refund for a lost parcel', 'tracking says delivered');
    for (let i = 0; i < 5; i += 1) expect(await classify('Refund for a lost parcel', 'tracking says delivered')).toEqual(first);
  });

  it('body defaults to the empty string', async () => {
    expect(await classify('refund')).toEqual(await classify('refund', ''));
  });

  it('keyword matching is a substring match, as the contract words it (documented decision)', () => {
    const classifier = new KeywordClassifier(KEYWORDS_1_0);
    expect(classifier.classify({ subject: 'usernames' }).category).toBe('account');
  });
});
