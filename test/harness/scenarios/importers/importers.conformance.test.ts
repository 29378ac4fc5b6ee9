/** Runs the importer conformance suite once per dataset membench imports. */
import { DATASET_NAMES } from '../../../../harness/scenarios/importers/index.js';
import { expectTempDirsRemoved } from '../../../helpers/temp-dirs.js';
import { describeImporterConformance } from './conformance.js';

// A conformance run leaves no temp dir behind.
expectTempDirsRemoved();

for (const dataset of DATASET_NAMES) describeImporterConformance(dataset);
