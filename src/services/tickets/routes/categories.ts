import type { PlatformApp } from '../../../platform/platform-app.js';
import { componentRef } from '../../../platform/openapi-components.js';
import { CATEGORIES } from '../rule-sets/keyword-rule-set.js';
import { CategoryList } from '../schemas.js';

/** GET /v1/categories: the categories the classifier can assign. */
export function registerCategoriesRoute(app: PlatformApp): void {
  app.get(
    '/v1/categories',
    {
      schema: {
        tags: ['tickets'],
        operationId: 'listCategories',
        summary: 'List the categories',
        description: 'The categories the classifier can assign, in their fixed order. Unknown query parameters are ignored. Needs no key.',
        response: {
          200: componentRef(CategoryList, { description: 'The categories the classifier can assign', examples: [{ categories: [...CATEGORIES] }] }),
        },
      },
    },
    () => ({ categories: [...CATEGORIES] }),
  );
}
