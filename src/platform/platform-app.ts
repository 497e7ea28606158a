import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyPluginOptions,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';

/** A Fastify instance of the platform, typed with the TypeBox type provider. */
export type PlatformApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** A platform concern (CORS, API key, metrics...): a plugin that adds its hooks to the service's app. */
export type PlatformPlugin<Options extends FastifyPluginOptions = FastifyPluginOptions> = FastifyPluginAsync<Options, RawServerDefault, TypeBoxTypeProvider>;

/**
 * Wraps a concern's setup as a plugin whose hooks and routes land on the service's app itself, not on
 * an encapsulated child: the shape fastify-plugin gives (`skip-override`), without the dependency.
 * Registered in order by createServiceApp, the plugins' hooks run in that order.
 */
export function platformPlugin<Options extends FastifyPluginOptions = FastifyPluginOptions>(
  name: string,
  setUp: (app: PlatformApp, options: Options) => void | Promise<void>,
): PlatformPlugin<Options> {
  const plugin: PlatformPlugin<Options> = async (app, options) => {
    await setUp(app, options);
  };
  return Object.assign(plugin, { [Symbol.for('skip-override')]: true, [Symbol.for('fastify.display-name')]: name });
}
