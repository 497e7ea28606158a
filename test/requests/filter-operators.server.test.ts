import { describeFilterOperators } from './support/filter-operators-suite.js';

describeFilterOperators('postgres');
