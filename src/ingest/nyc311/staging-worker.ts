/**
 * A thread of the parallel staging (parallel-staging.ts): parses the pieces of whole records it is
 * sent (any layout), screens them, and admits each into its own stage once the Unique Keys' decision
 * comes back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CandidateStage } from './candidate-stage.js';
import { RecordCleaner, type ScreenedRecords } from './clean-export.js';
import { ExportFormatError } from './export-format-error.js';
import { PieceParser } from './export-reader.js';
import { locateExportColumns } from './export-columns.js';
import type { StagingReply, StagingRequest, StagingWorkerData } from './parallel-staging.js';

const data = workerData as StagingWorkerData;
const port = parentPort;
if (port === null) throw new Error('staging-worker.ts runs as a worker thread');
const parser = new PieceParser(data.format, data.header);
const stage = new CandidateStage(data.stageDirectory, 'new', data.cacheKib);
const cleaner = new RecordCleaner(locateExportColumns(data.header), data.applyFilters, stage);
const waiting = new Map<number, ScreenedRecords>();

function reply(message: StagingReply): void {
  (port as NonNullable<typeof port>).postMessage(message);
}

port.on('message', (request: StagingRequest) => {
  try {
    if (request.kind === 'piece') {
      const starts: number[] = [];
      const records = parser.parse(request, starts);
      const screened = cleaner.screen(records, starts, request);
      waiting.set(request.seq, screened);
      reply({ kind: 'screened', seq: request.seq, ids: screened.ids, records: records.length });
    } else if (request.kind === 'admit') {
      cleaner.admit(waiting.get(request.seq) as ScreenedRecords, request.duplicates);
      waiting.delete(request.seq);
      reply({ kind: 'admitted', seq: request.seq });
    } else {
      const range = stage.finish();
      stage.release();
      const { counts, spellings, rawRowsRead, latestTimestamp, examples } = cleaner;
      reply({ kind: 'finished', counts, spellings, rawRowsRead, latestTimestamp, candidates: stage.size, range, examples, jsonColumns: parser.jsonColumns() });
    }
  } catch (error) {
    const format = error instanceof ExportFormatError ? { format: error.format, line: error.line, reason: error.reason } : null;
    reply({
      kind: 'failed',
      seq: request.kind === 'piece' ? request.seq : null,
      format,
      reason: error instanceof Error ? error.message : String(error),
    });
  }
});
