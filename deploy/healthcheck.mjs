// The image's HEALTHCHECK: GET /health of each service the container runs (SERVICE: all, tickets,
// houses, requests) on 127.0.0.1 at its port (PORT, or TICKETS_PORT, HOUSES_PORT, REQUESTS_PORT for
// all; defaults 8001, 8002, 8003). Exit 0 when every one answers 200 within 2 seconds, else 1.
const DEFAULT_PORTS = { tickets: 8001, houses: 8002, requests: 8003 };
const service = process.env.SERVICE ?? 'all';
const names = service === 'all' ? Object.keys(DEFAULT_PORTS) : [service];

function portOf(name) {
  const variable = service === 'all' ? process.env[`${name.toUpperCase()}_PORT`] : process.env.PORT;
  return variable ?? String(DEFAULT_PORTS[name] ?? 0);
}

const results = await Promise.all(
  names.map(async (name) => {
    try {
      const response = await fetch(`http://127.0.0.1:${portOf(name)}/health`, { signal: AbortSignal.timeout(2000) });
      return response.status === 200 ? null : `${name}: status ${response.status}`;
    } catch (error) {
      return `${name}: ${error instanceof Error ? error.message : String(error)}`;
    }
  }),
);
const failures = results.filter((result) => result !== null);
if (failures.length > 0) {
  process.stderr.write(`${failures.join('; ')}\n`);
  process.exit(1);
}
