/** Fixture for test/architecture.test.ts: an HL7 module that breaks the purity rule on purpose. */
import { status } from '../http/problem';

export const impure = status;
