/**
 * A thread of the parallel staging (parallel-staging.ts): parses the pieces of whole records it is
 * sent, screens them, and admits each into its own stage once the Unique Keys' decision comes back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CandidateStage } from './candidate-stage.js';
import { RecordCleaner, type ScreenedRecords, usedColumnMask } from './clean-export.js';
import { CsvFormatError, parseCsvRecords } from './csv-reader.js';
import { locateExportColumns } from './export-columns.js';
import type { StagingReply, StagingRequest, StagingWorkerData } from './parallel-staging.js';

const data = workerData as StagingWorkerData;
const port = parentPort;
if (port === null) throw new Error('staging-worker.ts runs as a worker thread');
const keep = usedColumnMask(data.header);
const stage = new CandidateStage(data.stageDirectory, 'new', data.cacheKib);
const cleaner = new RecordCleaner(locateExportColumns(data.header), data.applyFilters, stage);
const waiting = new Map<number, ScreenedRecords>();

function reply(message: StagingReply): void {
  (port as NonNullable<typeof port>).postMessage(message);
}

port.on('message', (request: StagingRequest) => {
  try {
    if (request.kind === 'piece') {
      const records = parseCsvRecords(request.text, 0, 0, keep);
      const screened = cleaner.screen(records);
      waiting.set(request.seq, screened);
      reply({ kind: 'screened', seq: request.seq, ids: screened.ids, records: records.length });
    } else if (request.kind === 'admit') {
      cleaner.admit(waiting.get(request.seq) as ScreenedRecords, request.duplicates);
      waiting.delete(request.seq);
      reply({ kind: 'admitted', seq: request.seq });
    } else {
      const range = stage.finish();
      stage.release();
      const { counts, spellings, rawRowsRead, latestTimestamp } = cleaner;
      reply({ kind: 'finished', counts, spellings, rawRowsRead, latestTimestamp, candidates: stage.size, range });
    }
  } catch (error) {
    const csv = error instanceof CsvFormatError ? error : null;
    reply({
      kind: 'failed',
      seq: request.kind === 'piece' ? request.seq : null,
      record: csv?.record ?? null,
      reason: csv?.reason ?? (error instanceof Error ? error.message : String(error)),
    });
  }
});
