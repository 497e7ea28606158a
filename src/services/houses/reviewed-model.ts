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
  sha256: '85b25711006061dbcc49fec8b14e89d6a91a8cc6bcc1652a4549719aaeaf2794',
} as const;
