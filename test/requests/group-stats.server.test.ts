import { describeGroupStats } from './support/group-stats-suite.js';

describeGroupStats('postgres');
