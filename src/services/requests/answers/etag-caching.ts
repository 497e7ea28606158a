import { createHmac, hash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ByteBoundedLru } from '../../../platform/byte-bounded-lru.js';
import { etagMatches } from '../../../platform/compression.js';
import { MEDIA_TYPES } from './row-formats.js';

/**
 * HTTP caching of a frozen snapshot: the answer to a GET depends only on the snapshot and the
 * request's path and query (and, through next_cursor, on the cursor key). Each 200 answer of /v1
 * gets a strong ETag and `Cache-Control: private, max-age=300` (private: the answers need a key);
 * a matching If-None-Match is answered 304 without a body and without reading the rows.
 */
export const CACHE_CONTROL = 'private, max-age=300';

/**
 * Bytes of serialized answers kept by ETag (count, facets and statistics: years of days are hundreds
 * of KB and milliseconds to build, a combination of filters a walk of the rows); a strong ETag names
 * one body, so a kept body is the answer.
 */
export const KEPT_ANSWER_BYTES = 16 * 1024 * 1024;

export class EtagCaching {
  private readonly salt: string;
  private readonly kept = new ByteBoundedLru(KEPT_ANSWER_BYTES);
  /** Bodies being built, by ETag: at most one per tag that requests are waiting for. */
  private readonly building = new Map<string, Promise<Buffer>>();

  constructor(cursorSecret: Buffer) {
    // Replicas sharing CURSOR_SECRET share ETags; with another key the next_cursor texts differ.
    this.salt = createHmac('sha256', cursorSecret).update('etag').digest('base64url').slice(0, 16);
  }

  /** `variant` names what else than the URL chose the answer (the format an Accept header asked for). */
  etagOf(snapshotId: string, url: string, variant = ''): string {
    const digest = hash('sha256', `${this.salt}\n${snapshotId}\n${url}${variant === '' ? '' : `\n${variant}`}`, 'base64url').slice(0, 27);
    return `"${digest}"`;
  }

  /**
   * Sets ETag and Cache-Control; true (and a 304 sent) when If-None-Match matches. The tag of a
   * compressed copy (`"tag-gzip"`, see platform/compression.ts) matches too, and the 304 carries it.
   */
  answerNotModified(request: FastifyRequest, reply: FastifyReply, snapshotId: string, variant = ''): boolean {
    const etag = this.etagOf(snapshotId, request.url, variant);
    reply.header('ETag', etag).header('Cache-Control', CACHE_CONTROL);
    const ifNoneMatch = request.headers['if-none-match'];
    const matched = typeof ifNoneMatch === 'string' ? etagMatches(ifNoneMatch, etag) : null;
    if (matched === null) return false;
    void reply.header('ETag', matched).code(304).send();
    return true;
  }

  /**
   * Sends the answer tagged by the ETag that answerNotModified set, as JSON serialized by the route's
   * response schema: the kept body when there is one; else `build` runs once for every request of the
   * same tag that arrives while it runs (ten dashboards opening the same view walk the rows once),
   * and its body is kept for the next ones. A route that budgets its shared builds
   * (`config.budgetsSharedBuilds`) has the build, not each request, take a place of its work budget:
   * the requests joining it wait for the build alone (bounded by the walk's own deadline).
   */
  async sendKept(reply: FastifyReply, build: () => Promise<unknown>): Promise<FastifyReply> {
    const etag = reply.getHeader('ETag');
    let body: Buffer | undefined = typeof etag === 'string' ? this.kept.get(etag) : undefined;
    if (body === undefined) {
      const { workBudget, budgetsSharedBuilds } = reply.request.routeOptions.config;
      const assembled = async (): Promise<Buffer> => {
        const answer = await build();
        // Serializing years of days is a step of its own: the build's last step may just have run.
        await nextTurn();
        return Buffer.from(await serializeInSteps(answer, (part) => reply.serialize(part) as string));
      };
      const serialized = (): Promise<Buffer> => (budgetsSharedBuilds === true && workBudget !== undefined ? workBudget.holding(assembled) : assembled());
      if (typeof etag !== 'string') body = await serialized();
      else {
        let building = this.building.get(etag);
        if (building === undefined) {
          building = serialized()
            .then((built) => {
              this.kept.set(etag, built);
              return built;
            })
            .finally(() => this.building.delete(etag));
          this.building.set(etag, building);
        }
        body = await building;
      }
    }
    return reply.type(MEDIA_TYPES.json).send(body);
  }
}

/**
 * Items serialized per step of serializeInSteps: the daily numbers of 10 years are 3,650 items and
 * about 530 KB of JSON, too long for one step; 512 items take a few milliseconds (bench/README.md,
 * "Figures behind source comments").
 */
export const ITEMS_PER_SERIALIZED_STEP = 512;

/**
 * The JSON of an answer by the route's own serializer (`serialize`): an answer whose `items` list is
 * longer than one step (the statistics' days, the groups' rows) is serialized ITEMS_PER_SERIALIZED_STEP
 * items at a time, with other requests served between steps, and the parts joined into the very text
 * that one call would give. The answer's other fields are serialized once, around the items; the
 * steps serialize their items in the same envelope with its other lists left empty.
 */
export async function serializeInSteps(answer: unknown, serialize: (answer: unknown) => string): Promise<string> {
  const items = itemsOf(answer);
  if (items === null || items.length <= ITEMS_PER_SERIALIZED_STEP) return serialize(answer);
  const whole = answer as Record<string, unknown>;
  const [head, tail] = aroundItems(serialize({ ...whole, items: [] }));
  const otherLists = Object.entries(whole).some(([key, value]) => key !== 'items' && Array.isArray(value));
  const bare = Object.fromEntries(Object.entries(whole).map(([key, value]) => [key, Array.isArray(value) ? [] : value]));
  const [partHead, partTail] = otherLists ? aroundItems(serialize(bare)) : [head, tail];
  const parts: string[] = [];
  for (let first = 0; first < items.length; first += ITEMS_PER_SERIALIZED_STEP) {
    if (first > 0) await nextTurn();
    const part = serialize({ ...bare, items: items.slice(first, first + ITEMS_PER_SERIALIZED_STEP) });
    parts.push(part.slice(partHead.length, part.length - partTail.length));
  }
  return `${head}${parts.join(',')}${tail}`;
}

/** The text of an answer serialized with no items, cut where its items go: before and after them. */
function aroundItems(text: string): [string, string] {
  const at = text.indexOf('"items":[]');
  if (at === -1) throw new Error('the serialized answer has no empty "items" list');
  const opening = at + '"items":['.length;
  return [text.slice(0, opening), text.slice(opening)];
}

/** The `items` list of an answer; else null. */
function itemsOf(answer: unknown): unknown[] | null {
  if (typeof answer !== 'object' || answer === null) return null;
  const items = (answer as { items?: unknown }).items;
  return Array.isArray(items) ? items : null;
}
