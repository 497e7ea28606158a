/**
 * The PostgreSQL schema that holds the snapshot tables, as both the snapshot loader and the
 * service-request API read it: the `schema` query parameter of a `postgres://` URL, default
 * `public`, a plain identifier only; and the quoting of identifiers in SQL text.
 */

export const DEFAULT_POSTGRES_SCHEMA = 'public';

/** Letters, digits and _, not starting with a digit, at most 63 characters (PostgreSQL's limit). */
const PLAIN_SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export class PostgresSchemaNameError extends Error {
  constructor(readonly schema: string) {
    super(`Invalid PostgreSQL schema name "${schema}": use letters, digits and _ (at most 63, not starting with a digit).`);
  }
}

export interface PostgresTarget {
  /** Connection string without the `schema` parameter. */
  connectionString: string;
  schema: string;
}

export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/**
 * Split a `postgres://...?schema=name` URL into the connection string and the schema name
 * (`schemaOverride` wins over the parameter). Throws a TypeError for a URL that does not parse and
 * PostgresSchemaNameError for a schema that is not a plain identifier.
 */
export function parsePostgresTarget(url: string, schemaOverride?: string): PostgresTarget {
  const parsed = new URL(url);
  const fromUrl = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
  const schema = schemaOverride ?? fromUrl ?? DEFAULT_POSTGRES_SCHEMA;
  if (!PLAIN_SCHEMA_NAME.test(schema)) throw new PostgresSchemaNameError(schema);
  return { connectionString: parsed.toString(), schema };
}

/** Quote an SQL identifier (a schema name). */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
