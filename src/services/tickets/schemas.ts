import { Type } from 'typebox';
import { componentRef, namedComponent } from '../../platform/openapi-components.js';
import { CATEGORIES } from './rule-sets/keyword-rule-set.js';

/** ticket-classifier.md, "Resources and their fields". Limits here are the validation. */
export const SUBJECT_MAX_CHARACTERS = 120;
export const BODY_MAX_CHARACTERS = 5000;

export const Ticket = namedComponent(
  'Ticket',
  Type.Object(
    {
      subject: Type.String({ minLength: 1, maxLength: SUBJECT_MAX_CHARACTERS, description: 'Subject of the ticket, 1 to 120 characters' }),
      body: Type.Optional(Type.String({ maxLength: BODY_MAX_CHARACTERS, default: '', description: 'Text of the ticket, at most 5000 characters; default empty' })),
    },
    {
      additionalProperties: false,
      description: 'A support ticket. Lengths count characters (Unicode code points). Other fields are rejected.',
    },
  ),
);

/** The documented example of POST /v1/classify and its exact answer (a test sends it and compares). */
export const CLASSIFY_EXAMPLE = {
  request: { subject: 'I was charged twice for my invoice', body: 'Please refund the second payment.' },
  answer: { category: 'billing', priority: 1, confidence: 0.95, model_version: 'keywords-1.0' },
} as const;

export const Category = namedComponent('Category', Type.Enum([...CATEGORIES], { type: 'string', description: 'billing, login, shipping, account, other' }));

export const Classification = namedComponent(
  'Classification',
  Type.Object(
    {
      category: componentRef(Category),
      priority: Type.Integer({ minimum: 1, maximum: 3, description: '1 is urgent, 2 normal for a matched category, 3 when no category matched' }),
      confidence: Type.Number({ minimum: 0.2, maximum: 0.95, description: 'Between 0.2 and 0.95, rounded to 2 decimals' }),
      model_version: Type.String({ description: 'Version of the classifier that answered, e.g. keywords-1.0' }),
    },
    { additionalProperties: false, description: 'The category and priority assigned to the ticket' },
  ),
);

export const CategoryList = namedComponent(
  'CategoryList',
  Type.Object(
  { categories: Type.Array(componentRef(Category), { description: 'In the order billing, login, shipping, account, other' }) },
  { additionalProperties: false, description: 'The categories the classifier can assign' },
  ),
);

/** The named schemas of the service (OpenAPI components). */
export const TICKET_COMPONENTS = [Ticket, Category, Classification, CategoryList];
