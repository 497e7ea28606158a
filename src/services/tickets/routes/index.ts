import type { PlatformApp } from '../../../platform/platform-app.js';
import { ApiError } from '../../../platform/error-registry.js';
import { registerHealthRoutes } from '../../../platform/health.js';
import { KeywordClassifier } from '../classifier.js';
import type { ClassifierMode } from '../settings.js';
import { registerCategoriesRoute } from './categories.js';
import { registerClassifyRoute } from './classify.js';

const READY_PROBE = { subject: 'readiness probe', body: 'refund' };

/**
 * The routes of the ticket classifier, one module per resource: classify.ts (/v1/classify),
 * categories.ts (/v1/categories). Registered in this order, which is the order of the OpenAPI paths.
 */
export function registerTicketRoutes(app: PlatformApp, classifier: KeywordClassifier, mode: ClassifierMode): void {
  /** The classifier, or the 503 when CLASSIFIER_MODE=unavailable. */
  const workingClassifier = (): KeywordClassifier => {
    if (mode === 'unavailable') throw new ApiError('classifier_unavailable');
    return classifier;
  };

  registerHealthRoutes(app, {
    unavailableCode: 'classifier_unavailable',
    check() {
      // "asks the classifier for one prediction"
      const result = workingClassifier().classify(READY_PROBE);
      if (result.category !== 'billing') throw new ApiError('classifier_unavailable');
    },
  });
  registerClassifyRoute(app, workingClassifier);
  registerCategoriesRoute(app);
}
