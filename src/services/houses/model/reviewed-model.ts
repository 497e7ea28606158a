/**
 * The reviewed configuration of the house-price service: the model file it loads and the
 * SHA-256 it must have. The service refuses a file whose SHA-256 differs. Update this
 * together with the file whenever the model is retrained (training/README.md);
 * test/houses/model/reviewed-model.test.ts checks that they agree.
 */
export const REVIEWED_MODEL = {
  version: 'kc-hgb-drift-2015-02',
  /** Relative to the repository root. */
  path: 'models/kc-hgb-drift-2015-02.json',
  sha256: '8ca97f0b0afc8e29b0ed1e993b9bdeed3a7e71752731992068f3ab8d0fab4e34',
} as const;
