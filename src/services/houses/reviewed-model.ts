/**
 * The reviewed configuration of the house-price service: the model file it loads and the
 * SHA-256 it must have. The service refuses a file whose SHA-256 differs. Update this
 * together with the file whenever the model is retrained (training/README.md);
 * test/houses/model/reviewed-model.test.ts checks that they agree.
 */
export const REVIEWED_MODEL = {
  version: 'kc-hgb-2015-02',
  /** Relative to the repository root. */
  path: 'models/kc-hgb-2015-02.json',
  sha256: 'ea554529abd26f0eaa0ca7680050259cde258e09ecbb8e1476149d137d0613d3',
} as const;
