import { Type } from 'typebox';
import { CATEGORIES } from './rule-sets/keyword-rule-set.js';

/** ticket-classifier.md, "Resources and their fields". Limits here are the validation. */
export const SUBJECT_MAX_CHARACTERS = 120;
export const BODY_MAX_CHARACTERS = 5000;

export const Ticket = Type.Object(
  {
    subject: Type.String({ minLength: 1, maxLength: SUBJECT_MAX_CHARACTERS, description: 'Subject of the ticket, 1 to 120 characters' }),
    body: Type.Optional(Type.String({ maxLength: BODY_MAX_CHARACTERS, default: '', description: 'Text of the ticket, at most 5000 characters; default empty' })),
  },
  {
    additionalProperties: false,
    description: 'A support ticket. Lengths count characters (Unicode code points). Other fields are rejected.',
    examples: [{ subject: 'I was charged twice for my invoice', body: 'Please refund the second payment.' }],
  },
);

export const CategoryEnum = Type.Enum([...CATEGORIES], { type: 'string', description: 'billing, login, shipping, account, other' });

export const Classification = Type.Object(
  {
    category: CategoryEnum,
    priority: Type.Integer({ minimum: 1, maximum: 3, description: '1 is urgent, 2 normal for a matched category, 3 when no category matched' }),
    confidence: Type.Number({ minimum: 0.2, maximum: 0.95, description: 'Between 0.2 and 0.95, rounded to 2 decimals' }),
    model_version: Type.String({ description: 'Version of the classifier that answered, e.g. keywords-1.0' }),
  },
  { additionalProperties: false, description: 'The category and priority assigned to the ticket' },
);

export const CategoryList = Type.Object(
  { categories: Type.Array(CategoryEnum, { description: 'In the order billing, login, shipping, account, other' }) },
  { additionalProperties: false, description: 'The categories the classifier can assign' },
);
