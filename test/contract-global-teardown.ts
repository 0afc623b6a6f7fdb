import { reportContractCoverage } from './support/contract-report';

export default function globalTeardown(): void {
  reportContractCoverage();
}
